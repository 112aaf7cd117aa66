package dev.locks;

import java.time.Duration;
import java.time.Instant;

/**
 * A granted lock. Closing it releases it, so it fits try-with-resources:
 *
 * <pre>{@code
 * try (LockHandle lock = locks.acquire(LockRequest.paths("/a").build())) {
 *     write(data, lock.fencingToken());
 * }
 * }</pre>
 *
 * Only the handle's owner can renew or release the grant.
 */
public interface LockHandle extends AutoCloseable {

    /**
     * @return the request this handle was granted for
     */
    LockRequest request();

    /**
     * A number strictly greater than that of every earlier grant whose paths overlap this one, across
     * releases, expiries and restarts. Pass it to downstream writes so that they can reject a holder
     * that lost its lock (for example {@code UPDATE ... WHERE fence < :token}).
     *
     * @return the fencing token
     */
    long fencingToken();

    /**
     * @return when the lease ends unless renewed, in database time
     */
    Instant expiresAt();

    /**
     * @return true while the lease is believed to be held: not released, not lost, not past its lease
     */
    boolean isValid();

    /**
     * @throws LockLostException if the lock was released, lost or force-released
     */
    void checkValid();

    /**
     * Extends the lease to the request's lease from now (database time), unless it already runs
     * longer: a renewal never shortens a lease.
     *
     * @return false if the lease was already lost or the handle released
     * @throws LockUnavailableException if the store cannot be reached
     */
    boolean renew();

    /**
     * Extends the lease to {@code lease} from now (database time), unless it already runs longer: a
     * renewal never shortens a lease, so a renewal by hand and the watchdog's (for a handle that
     * {@link LockService#call} or an annotation keeps renewed) cannot undo each other whatever order
     * they reach the database in.
     *
     * @param lease the new lease: positive, at most {@link LockRequest#MAX_DURATION}
     * @return false if the lease was already lost or the handle released
     * @throws LockUnavailableException if the store cannot be reached
     * @throws IllegalArgumentException if the lease is zero, negative or too long
     */
    boolean renew(Duration lease);

    /**
     * Releases the grant. Inside a read-write transaction on the lock store's DataSource the release
     * joins that transaction, so that it commits together with the work (and is retried on its own if
     * the transaction rolls back); the lock stays held until then. Where the transaction's snapshot
     * could hide the grant (PostgreSQL and H2 above READ COMMITTED), the release happens right after
     * the transaction ends instead. Either way a lock the watchdog renewed stays renewed until the
     * transaction ends, and a release that fails at the commit fails the commit. Inside a read-only
     * transaction, or a transaction on another resource, the release happens at once.
     *
     * @return true if this call released a grant that was still held; for a release made at the end
     *         of the caller's transaction, whether the grant was still held when it was asked (on
     *         MySQL above READ COMMITTED, what the handle knows). False when the release found the
     *         grant gone (its lease ran out, or it was force-released): the handle then counts as
     *         lost, and listeners hear {@link LockListener#leaseLost} unless a renewal had reported it
     * @throws LockUnavailableException if the store cannot be reached; the release is then retried in
     *         the background until it succeeds or the lease has run out (where it failed inside the
     *         caller's transaction, its cause is a {@link dev.locks.store.ReleaseDeferredException}:
     *         the release is repeated when that transaction ends instead)
     */
    boolean release();

    /** Same as {@link #release()}. */
    @Override
    default void close() {
        release();
    }
}
