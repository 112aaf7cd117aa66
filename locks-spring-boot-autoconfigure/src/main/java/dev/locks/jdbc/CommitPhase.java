package dev.locks.jdbc;

import org.springframework.core.Ordered;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Tells whether the caller's transaction has begun to commit. A release made before that waits for
 * the commit, so that the watchdog can go on renewing its grant; one made while the commit is
 * prepared (the annotations release in {@code beforeCommit}) joins at once, since Spring calls no
 * {@code beforeCommit} of a synchronization registered that late.
 * <p>
 * So that it is registered before the commit begins, the store looks for it whenever the caller's
 * thread grants, queues or releases inside a transaction. It is found among the transaction's own
 * synchronizations rather than bound as a resource, which an inner {@code REQUIRES_NEW}
 * transaction would see too.
 */
final class CommitPhase implements TransactionSynchronization {

    private final Object store;

    private boolean committing;

    private CommitPhase(Object store) {
        this.store = store;
    }

    /**
     * The marker of {@code store} in the current transaction, registered if it is not yet.
     *
     * @param store the store that asks, since two stores may share a transaction
     * @return the marker
     */
    static CommitPhase of(Object store) {
        for (TransactionSynchronization synchronization : TransactionSynchronizationManager.getSynchronizations()) {
            if (synchronization instanceof CommitPhase phase && phase.store == store) {
                return phase;
            }
        }
        CommitPhase phase = new CommitPhase(store);
        TransactionSynchronizationManager.registerSynchronization(phase);
        return phase;
    }

    /** @return whether the transaction's commit has begun, so a release joins it at once */
    boolean committing() {
        return committing;
    }

    @Override
    public int getOrder() {
        // before every other synchronization's beforeCommit, where releases may come
        return Ordered.HIGHEST_PRECEDENCE;
    }

    @Override
    public void beforeCommit(boolean readOnly) {
        committing = true;
    }
}
