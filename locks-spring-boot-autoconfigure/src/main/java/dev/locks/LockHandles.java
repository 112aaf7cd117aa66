package dev.locks;

import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Releases handles once the work they guarded is over, where a failed release must not hide the
 * work's outcome. A release the store could not take is logged at WARN and retried by the engine in
 * the background (the lease frees the lock at the latest), so the caller has nothing left to do.
 * Also tells whether a handle's lock is known lost ({@link #knownLost}), for work about to commit.
 */
public final class LockHandles {

    private static final Logger log = LoggerFactory.getLogger(LockHandles.class);

    private LockHandles() {
    }

    /**
     * Why the lock of {@code handle} is known to be lost, from what the engine knows without a round
     * trip: its lease ran out without renewal, or a renewal or its release found its grant gone
     * (force-released, or expired). A handle of this library released while held is not judged
     * otherwise: its release may wait for the commit of a caller's transaction, which keeps the grant
     * until then (a force-release meanwhile goes unnoticed); one lost first stays lost. A handle of
     * another {@link LockService} answers from {@link LockHandle#checkValid}.
     *
     * @param handle a handle
     * @return the reason, naming the lock, or null if it is not known lost
     */
    public static String knownLost(LockHandle handle) {
        if (handle instanceof GrantedLock granted) {
            String why = granted.knownLostReason();
            return why == null ? null : "lock " + granted.describe() + " is no longer held: " + why;
        }
        if (handle instanceof NestedLock nested) {
            return nested.knownLostReason();
        }
        // a handle of another implementation judges itself, and counts as lost once released
        if (handle.isValid()) {
            return null;
        }
        try {
            handle.checkValid();
            return null;
        }
        catch (LockLostException ex) {
            return ex.getMessage();
        }
    }

    /**
     * Releases {@code handle}; a failure is logged and, if the work failed too, added to the work's
     * exception as suppressed.
     *
     * @param handle the handle to release
     * @param failure what the work threw, or null if it succeeded
     */
    public static void releaseAfterWork(LockHandle handle, Throwable failure) {
        try {
            handle.release();
        }
        catch (RuntimeException ex) {
            if (failure != null) {
                failure.addSuppressed(ex);
            }
            if (ex instanceof LockUnavailableException) {
                // the engine's message names the lock and says what becomes of the release
                log.warn(ex.getMessage());
            }
            else {
                log.warn("Could not release {}", handle, ex);
            }
        }
    }

    /**
     * Releases {@code handles} in the reverse of the order they were taken in, each even if an
     * earlier one failed, as {@link #releaseAfterWork(LockHandle, Throwable)} does.
     *
     * @param handles the handles, in the order they were taken
     * @param failure what the work threw, or null if it succeeded
     */
    public static void releaseAllAfterWork(List<? extends LockHandle> handles, Throwable failure) {
        for (int i = handles.size() - 1; i >= 0; i--) {
            releaseAfterWork(handles.get(i), failure);
        }
    }
}
