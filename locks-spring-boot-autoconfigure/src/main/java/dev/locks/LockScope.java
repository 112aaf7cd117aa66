package dev.locks;

import java.util.ArrayList;
import java.util.List;

/**
 * The owner shared by the scoped acquisitions ({@code call}, {@code enter}, annotations) of one
 * thread, and the grants it holds, for re-entry without a store round trip. Like Alfresco's
 * thread-local lock owner.
 */
final class LockScope {

    private static final ThreadLocal<LockScope> CURRENT = new ThreadLocal<>();

    private final String owner = OwnerTokens.next();

    private final Thread thread = Thread.currentThread();

    private final List<Entry> entries = new ArrayList<>();

    private int depth;

    private LockScope() {
    }

    /** Opens (or joins) the current thread's scope; pair with {@link #leave}. */
    static LockScope enter() {
        LockScope scope = CURRENT.get();
        if (scope == null || scope.depth == 0) {
            scope = new LockScope();
            CURRENT.set(scope);
        }
        scope.depth++;
        return scope;
    }

    String owner() {
        return owner;
    }

    /**
     * What the scope already holds of {@code paths} in an equal or stronger mode, judged once: the
     * paths it does not cover, and the distinct handles that cover the others.
     */
    synchronized Coverage cover(LockKind kind, String tenant, List<LockPath> paths, LockMode mode, int permits) {
        List<LockPath> missing = new ArrayList<>();
        List<LockHandle> enclosing = new ArrayList<>();
        for (LockPath path : paths) {
            LockHandle handle = covering(kind, tenant, path, mode, permits);
            if (handle == null) {
                missing.add(path);
            }
            else if (!enclosing.contains(handle)) {
                enclosing.add(handle);
            }
        }
        return new Coverage(List.copyOf(missing), List.copyOf(enclosing));
    }

    private LockHandle covering(LockKind kind, String tenant, LockPath path, LockMode mode, int permits) {
        for (Entry e : entries) {
            if (e.kind == kind && e.tenant.equals(tenant) && e.mode.covers(mode)
                    && (e.path.equals(path) || e.path.isAncestorOf(path)) && e.handle.isValid()) {
                if (kind == LockKind.SEMAPHORE && permits < e.permits) {
                    // the permit was counted against the larger max: re-entering would let this caller
                    // run with more company than its own max allows, and a second permit of one owner
                    // would only wait for the first
                    throw new IllegalArgumentException("Semaphore " + MessageText.quoted(path.value()) + " in tenant "
                            + MessageText.quoted(tenant) + " is held in this scope with max " + e.permits + "; a nested request with max " + permits
                            + " cannot re-enter it. Give one semaphore name the same max everywhere");
                }
                return e.handle;
            }
        }
        return null;
    }

    /**
     * What a nested request finds in its scope.
     *
     * @param missing the paths no valid handle of the scope covers: they need a grant of their own
     * @param enclosing the handles covering the other paths, which the nested handle relies on
     */
    record Coverage(List<LockPath> missing, List<LockHandle> enclosing) {
    }

    /** Whether the scope holds any grant: then earlier waiters must not block it (they may wait for it). */
    synchronized boolean holdsAny() {
        return !entries.isEmpty();
    }

    synchronized void add(LockKind kind, String tenant, List<LockPath> paths, LockMode mode, int permits,
            LockHandle handle) {
        for (LockPath path : paths) {
            entries.add(new Entry(kind, tenant, path, mode, permits, handle));
        }
    }

    /** Forgets the handle's entries and closes the scope when its last handle leaves. */
    synchronized void leave(LockHandle handle) {
        entries.removeIf(e -> e.handle == handle);
        depth--;
        if (depth == 0 && Thread.currentThread() == thread && CURRENT.get() == this) {
            CURRENT.remove();
        }
    }

    private record Entry(LockKind kind, String tenant, LockPath path, LockMode mode, int permits, LockHandle handle) {
    }
}
