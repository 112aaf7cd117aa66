package dev.locks;

import java.time.Duration;

/**
 * Told about lock events on this node: for metrics, alerts and tests. Called on the thread where
 * the event happens (the watchdog's for renewals and for leases a renewal found lost; the releasing
 * thread's, perhaps inside a commit, for a lease its release found lost); implementations must be
 * quick and must not throw.
 */
public interface LockListener {

    /**
     * An acquisition ended.
     *
     * @param request what was asked for
     * @param outcome how it ended
     * @param elapsed from the call to its end, waiting included
     * @param waited whether the request had to wait (was busy at first)
     */
    default void acquireFinished(LockRequest request, AcquireOutcome outcome, Duration elapsed, boolean waited) {
    }

    /**
     * A handle was released by its owner.
     *
     * @param handle the handle
     */
    default void released(LockHandle handle) {
    }

    /**
     * The watchdog renewed leases.
     *
     * @param grants how many grants one renewal round extended
     */
    default void renewed(int grants) {
    }

    /**
     * A grant's lease could not be renewed before it ran out, or the grant vanished from the store
     * (expired or force-released), found by a renewal or by the release: another owner may hold the
     * lock now, or may have held it while the work ran.
     *
     * @param handle the handle, now invalid
     * @param reason why
     */
    default void leaseLost(LockHandle handle, String reason) {
    }
}
