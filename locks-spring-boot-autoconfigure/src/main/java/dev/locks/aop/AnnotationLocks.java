package dev.locks.aop;

import java.util.List;

import dev.locks.LockHandle;

/**
 * The locks that lock annotations hold for the method running on this thread, so that the method
 * can hand its fencing token to what it writes to: a store that refuses a token lower than the
 * last it accepted turns away the writes of a holder whose lock was lost meanwhile (the README's
 * "Fencing tokens"). Only the annotated method's own thread sees them; work it hands to another
 * thread, an {@code @Async} method's body among it, does not.
 *
 * <pre>{@code
 * @PathLocked(paths = "#path")
 * public void save(String path, byte[] data) {
 *     storage.write(path, data, AnnotationLocks.fencingToken());
 * }
 * }</pre>
 */
public final class AnnotationLocks {

    private AnnotationLocks() {
    }

    /**
     * @return the locks of the innermost annotated method running on this thread, in the order its
     *         annotations took them; empty when none runs (or it holds none, as a skipped
     *         {@code @ClusterSingleton} never runs)
     */
    public static List<LockHandle> current() {
        return AnnotationLocksOnThread.innermost();
    }

    /**
     * @return the highest fencing token among {@link #current()}: the token of the method's newest grant
     * @throws IllegalStateException if no annotated method holding a lock runs on this thread
     */
    public static long fencingToken() {
        List<LockHandle> current = current();
        if (current.isEmpty()) {
            throw new IllegalStateException("No method holding locks of lock annotations runs on this thread: a fencing"
                    + " token exists only inside such a method, on its own thread (not in work it hands to another"
                    + " thread, nor in an @Async method's body)");
        }
        long highest = Long.MIN_VALUE;
        for (LockHandle handle : current) {
            highest = Math.max(highest, handle.fencingToken());
        }
        return highest;
    }
}
