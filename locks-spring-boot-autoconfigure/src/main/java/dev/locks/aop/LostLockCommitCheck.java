package dev.locks.aop;

import java.util.List;

import org.springframework.core.Ordered;
import org.springframework.transaction.support.TransactionSynchronization;

import dev.locks.LockHandle;
import dev.locks.LockHandles;
import dev.locks.LockLostException;

/**
 * Fails the commit of work whose locks are known to be lost, so that it rolls back instead of
 * committing unprotected: a lease that ran out without renewal (a pause longer than the lease, a
 * database out of reach), or an operator's force-release that a renewal has noticed. The handles
 * answer from what the engine knows, without a round trip: a force-release is known at the next
 * renewal (every lease/3), and one made since still lets the commit through; fencing tokens are
 * the guard for that window. Every check of a transaction runs before any release joins its commit
 * ({@link #ORDER}), and a handle released while held is not judged: a re-entrant call's lock or a
 * release inside the transaction keeps its grant until the commit. A release that joins the commit
 * and finds its grant gone fails it too ({@link TransactionBoundRelease}).
 */
final class LostLockCommitCheck implements TransactionSynchronization {

    /**
     * Before every release that joins the commit ({@link TransactionBoundRelease}). Synchronizations
     * of the application's at the default order, and {@code BEFORE_COMMIT} event listeners, run after
     * it: a lock lost while they run is not caught.
     */
    static final int ORDER = Ordered.LOWEST_PRECEDENCE - 1;

    private final List<LockHandle> handles;

    /** @param handles not copied: the interceptor and the listener hand over lists nobody changes after */
    LostLockCommitCheck(List<LockHandle> handles) {
        this.handles = handles;
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    /**
     * @throws LockLostException naming the first lock known lost, which rolls the transaction back
     */
    @Override
    public void beforeCommit(boolean readOnly) {
        if (!readOnly) {
            failIfAnyLost(handles);
        }
    }

    /**
     * @throws LockLostException naming the first of {@code handles} known lost
     */
    static void failIfAnyLost(List<LockHandle> handles) {
        for (LockHandle handle : handles) {
            String why = LockHandles.knownLost(handle);
            if (why != null) {
                throw new LockLostException("Rolled the transaction back instead of committing it unprotected: " + why);
            }
        }
    }
}
