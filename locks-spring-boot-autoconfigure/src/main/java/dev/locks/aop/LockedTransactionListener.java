package dev.locks.aop;

import java.util.List;

import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.locks.LockHandle;

/**
 * Checks, at the commit of a transaction that begins inside a method holding lock annotations'
 * locks (the default order: lock, begin, method, commit, release), that those locks are still
 * held; a lock known to be lost fails the commit with a {@link dev.locks.LockLostException} and
 * the work rolls back. Spring Boot adds this listener to the transaction managers it configures;
 * one built by the application needs {@code addListener} with this bean.
 */
public class LockedTransactionListener implements TransactionExecutionListener {

    @Override
    public void afterBegin(TransactionExecution transaction, Throwable beginFailure) {
        if (beginFailure != null || !TransactionSynchronizationManager.isSynchronizationActive()) {
            return;
        }
        List<LockHandle> held = AnnotationLocksOnThread.current();
        if (!held.isEmpty()) {
            TransactionSynchronizationManager.registerSynchronization(new LostLockCommitCheck(held));
        }
    }
}
