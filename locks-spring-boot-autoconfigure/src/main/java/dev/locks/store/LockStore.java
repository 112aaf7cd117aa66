package dev.locks.store;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

import dev.locks.HolderQuery;
import dev.locks.LockHolder;
import dev.locks.LockKind;
import dev.locks.LockPath;
import dev.locks.LockUnavailableException;

/**
 * Where grants live. Implementations keep every decision in the store's own clock and serialise
 * check-then-write against every conflicting request. Every method throws
 * {@link LockUnavailableException} when the store cannot be reached.
 */
public interface LockStore {

    /**
     * The most holders a caller of {@link #holders} may show: the store returns at most one more, so
     * that the caller can tell when some were left out.
     */
    int MAX_HOLDERS = 10_000;

    /**
     * Grants the request atomically if no live conflicting grant of another owner exists, and no
     * earlier conflicting waiter (unless {@link GrantRequest#ownerHoldsLocks()}); never waits for
     * conflicting grants to end. A granted request leaves the wait queue in the same transaction.
     *
     * @param request the request
     * @return the grant, or the conflicting holders
     */
    GrantResult tryGrant(GrantRequest request);

    /**
     * The live grants, and the waiting requests queued before it, that would conflict with
     * {@code request}, without writing anything; lets waiters poll cheaply. A waiting request among
     * them tells the waiter that the next release is not its turn. For a semaphore: the grants, then
     * the earlier waiters, up to {@code permits + 1} rows, or none while the request would get a
     * permit (counting against the smallest max among the holders and its own): more rows than
     * permits mean someone is served first (a store that names fewer leaves the waiters of a busy
     * semaphore looking more often).
     *
     * @param request the request
     * @return the conflicting holders, empty if the request would be granted now
     */
    List<LockHolder> conflicts(GrantRequest request);

    /**
     * Records the request as waiting, so that it blocks later conflicting requests.
     *
     * @param request the request (ticket 0)
     * @param waitLease how long the record lives unless {@link #keepWaiting} renews it
     * @return the ticket: its place in the queue, first come first served
     */
    long enqueue(GrantRequest request, Duration waitLease);

    /**
     * Renews a waiting record.
     *
     * @param request the request with its ticket
     * @param waitLease the new lease
     * @return false if the record was gone (its lease lapsed): enqueue again
     */
    boolean keepWaiting(GrantRequest request, Duration waitLease);

    /**
     * Removes a waiting record (the wait ended without a grant).
     *
     * @param request the request with its ticket
     */
    void dequeue(GrantRequest request);

    /**
     * One consistent snapshot of the live waiters of a tenant and of every grant their owners hold,
     * for deadlock detection.
     *
     * @param kind the kind
     * @param tenant the tenant
     * @return waiting and held rows of waiting owners
     */
    List<WaitGraphRow> waitGraph(LockKind kind, String tenant);

    /**
     * Releases a grant if its owner still holds it. Inside a caller's transaction the lock stays held
     * until that transaction's work is committed: a store that cannot hold other nodes off until then
     * by the transaction's own row locks makes the release at the commit, or after the transaction,
     * and tells {@code pending}, so that the grant is renewed meanwhile.
     *
     * @param grant the grant
     * @param keepFor for singletons with {@code lockAtLeastFor}: keep the grant until this long after
     *                it was granted, even past its lease; {@link Duration#ZERO} to delete it now
     * @param pending told when the release waits for the caller's transaction, when it no longer does,
     *                and when the release made after that transaction failed, for the engine to retry
     * @return true if a live grant was released, or is to be at the end of the caller's transaction
     * @throws dev.locks.LockUnavailableException if the store could not release now; the engine retries
     * @throws ReleaseDeferredException if the release failed in the caller's transaction and the store
     *         repeats it when that transaction ends
     */
    boolean release(Grant grant, Duration keepFor, PendingRelease pending);

    /**
     * Releases a grant with nothing to renew it while the release waits for a caller's transaction.
     *
     * @param grant the grant
     * @param keepFor as {@link #release(Grant, Duration, PendingRelease)}
     * @return true if a live grant was released
     */
    default boolean release(Grant grant, Duration keepFor) {
        return release(grant, keepFor, PendingRelease.NONE);
    }

    /**
     * Releases a grant and, in the same transaction, tries to grant a waiting request: a release
     * handing its lock to a waiter of the same JVM, who then holds it one commit after the release
     * began instead of two. The grant follows the rules of {@link #tryGrant}; when it cannot be
     * made, the release still is, and the busy answer names no holders (the waiter looks for itself).
     * Either both happen or, if this throws, neither.
     *
     * @param grant the grant to release now (no {@code lockAtLeastFor})
     * @param next a queued request (its ticket set) that overlaps the released grant
     * @return the outcome, or null when this store cannot combine the two now (for instance inside a
     *         caller's transaction): then the engine releases alone, and its waiters hear of the
     *         release once it is made
     */
    default HandOff releaseAndGrant(Grant grant, GrantRequest next) {
        return null;
    }

    /**
     * Releases a grant that no caller's work depends on, one made by {@link #releaseAndGrant} for a
     * waiter that had stopped waiting: at once, in a transaction of its own, never joining one of
     * the caller's.
     *
     * @param grant the grant
     */
    default void discard(Grant grant) {
        release(grant, Duration.ZERO);
    }

    /**
     * Extends the leases of still-live grants to {@code lease} from now, in one round where possible,
     * and never shortens one: a handle trusts the renewal that answered last, which need not be the
     * one that reached the store last.
     *
     * @param grants grants of this node
     * @param lease the new lease
     * @return for each grant renewed, a lease end it holds at least until (a longer lease it already
     *         had stays); grants missing from the map are lost
     */
    Map<String, Instant> renew(Collection<Grant> grants, Duration lease);

    /**
     * Live grants that overlap {@code path} in its tenant and kind, oldest first.
     *
     * @param kind the kind
     * @param tenant the tenant
     * @param path the path or name
     * @return the holders, at most {@link #MAX_HOLDERS} + 1
     */
    List<LockHolder> holders(LockKind kind, String tenant, LockPath path);

    /**
     * Live grants matching an operator's filter, oldest first.
     *
     * @param query the filter
     * @return the holders
     */
    List<LockHolder> list(HolderQuery query);

    /**
     * Deletes the live rows of the whole grant that has the row {@code lockId}, whoever owns it: the
     * operator's force-release. A grant is all or nothing, so every path of a multi-path grant goes,
     * whichever of its rows was named. The owner's handle notices at its next renewal.
     *
     * @param lockId a {@link LockHolder#lockId()}
     * @return the rows deleted, oldest first; empty if there was no such row or its grant had expired
     */
    List<LockHolder> forceRelease(long lockId);

    /**
     * Asks to be told when another node may have freed something in a tenant, so that waiters here
     * can look again at once instead of sleeping out their backoff. Stores without such a channel
     * ignore it (waiters then rely on polling).
     *
     * @param subscriber called with the kind and tenant where something was released
     */
    default void onRemoteRelease(BiConsumer<LockKind, String> subscriber) {
    }

    /**
     * Whether the subscriber of {@link #onRemoteRelease} hears of other nodes' releases now, so that
     * waiters may poll slowly, only for what sends no notice. Stores without a channel, or whose
     * channel is down (reconnecting), answer false.
     *
     * @return true while release notices arrive
     */
    default boolean announcesReleases() {
        return false;
    }

    /** Stops what the store runs in the background (a notification listener). */
    default void close() {
    }

    /**
     * The store's clock, for operators comparing it with the JVM's; every lock decision reads the
     * clock inside the store instead.
     *
     * @return the store's current time
     */
    Instant currentTime();

    /**
     * Deletes grants whose lease ended, in store time, so that tables stay small.
     *
     * @return how many rows were deleted
     */
    int purgeExpired();
}
