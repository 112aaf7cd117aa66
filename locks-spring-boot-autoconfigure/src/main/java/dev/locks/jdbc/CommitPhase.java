package dev.locks.jdbc;

import org.springframework.core.Ordered;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Tells how far the caller's transaction has got with its commit. A release made before the commit
 * begins waits for it, so that the watchdog can go on renewing its grant; one made while the commit
 * is prepared (the annotations release in {@code beforeCommit}) joins at once, since Spring calls no
 * {@code beforeCommit} of a synchronization registered that late; one made after the commit (from
 * {@code afterCommit}) must not touch the transaction's connection, whose work no commit follows.
 * <p>
 * So that it is registered before the commit begins, the store looks for it whenever the caller's
 * thread grants, queues or releases inside a transaction; one registered later learns nothing and
 * leaves the release to follow the transaction. It is found among the transaction's own
 * synchronizations rather than bound as a resource, which an inner {@code REQUIRES_NEW} transaction
 * would see too. Only the caller's thread touches it.
 */
final class CommitPhase implements TransactionSynchronization {

    private final Object owner;

    private boolean committing;

    private boolean committed;

    private CommitPhase(Object owner) {
        this.owner = owner;
    }

    /**
     * The marker of {@code owner} in the current transaction, registered if it is not yet.
     *
     * @param owner what asks, one per store ({@link CallersTransactionReleases}), since two stores
     *              may share a transaction
     * @return the marker
     */
    static CommitPhase of(Object owner) {
        for (TransactionSynchronization synchronization : TransactionSynchronizationManager.getSynchronizations()) {
            if (synchronization instanceof CommitPhase phase && phase.owner == owner) {
                return phase;
            }
        }
        CommitPhase phase = new CommitPhase(owner);
        TransactionSynchronizationManager.registerSynchronization(phase);
        return phase;
    }

    /** @return whether the commit has begun and not yet ended: a release joins it at once */
    boolean committing() {
        return committing && !committed;
    }

    /** @return whether the transaction has committed: its connection is no place for a release */
    boolean committed() {
        return committed;
    }

    @Override
    public int getOrder() {
        // before every other synchronization's beforeCommit, where releases may come, and its afterCommit
        return Ordered.HIGHEST_PRECEDENCE;
    }

    @Override
    public void beforeCommit(boolean readOnly) {
        committing = true;
    }

    @Override
    public void afterCommit() {
        committed = true;
    }
}
