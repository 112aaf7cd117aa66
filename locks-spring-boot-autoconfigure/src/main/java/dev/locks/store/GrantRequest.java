package dev.locks.store;

import java.time.Duration;
import java.util.List;

import dev.locks.LockKind;
import dev.locks.LockMode;
import dev.locks.LockPath;

/**
 * One all-or-nothing grant to attempt, already normalised and merged by the engine.
 *
 * @param kind what is locked
 * @param tenant the tenant
 * @param paths for {@link LockKind#PATH}: the merged paths in global order; otherwise one entry
 *              holding the singleton or semaphore name
 * @param mode the mode
 * @param lease the lease, counted from the store's clock
 * @param permits for semaphores: the maximum holders; otherwise 0
 * @param owner the owner token (conflicts ignore the owner's own grants)
 * @param grantId a fresh random id naming this grant
 * @param node the node asking
 * @param thread the thread asking
 * @param ticket the request's place in the wait queue once it waits ({@link LockStore#enqueue}), 0 before
 * @param ownerHoldsLocks the owner already holds grants: earlier waiters do not block it, since
 *                        waiting behind a waiter that waits for this owner would deadlock
 */
public record GrantRequest(LockKind kind, String tenant, List<LockPath> paths, LockMode mode, Duration lease,
        int permits, String owner, String grantId, String node, String thread, long ticket, boolean ownerHoldsLocks) {

    /** Copies the path list. */
    public GrantRequest {
        paths = List.copyOf(paths);
    }

    /**
     * @param ticket the ticket given by {@link LockStore#enqueue}
     * @return this request with its place in the queue
     */
    public GrantRequest withTicket(long ticket) {
        return new GrantRequest(kind, tenant, paths, mode, lease, permits, owner, grantId, node, thread, ticket,
                ownerHoldsLocks);
    }

    /**
     * @param newGrantId a grant id never used before
     * @return this request under another grant id, out of the queue: for a wait that goes on after
     *         a grant under its old id may have been made without the waiter learning of it
     */
    public GrantRequest withGrantId(String newGrantId) {
        return new GrantRequest(kind, tenant, paths, mode, lease, permits, owner, newGrantId, node, thread, 0,
                ownerHoldsLocks);
    }

    /**
     * @return true if paths nest (ancestors and subtrees count), false for flat names
     */
    public boolean hierarchical() {
        return kind == LockKind.PATH;
    }
}
