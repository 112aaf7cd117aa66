package dev.locks.aop;

import java.util.List;

import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.locks.LockHandle;

/**
 * Checks, at the commit of a transaction that begins inside a method holding lock annotations'
 * locks (the default order: lock, begin, method, commit, release), that those locks are still
 * held; a lock known to be lost fails the commit with a {@link dev.locks.LockLostException} and
 * the work rolls back. A transaction begun inside such a method checks every lock the annotations
 * hold on the thread, those of enclosing methods too: its work is done under them. The starter adds
 * this listener to every {@link org.springframework.transaction.ConfigurableTransactionManager}
 * bean; one created outside the application context needs {@code addListener} with this bean.
 */
public class LockedTransactionListener implements TransactionExecutionListener {

    @Override
    public void afterBegin(TransactionExecution transaction, Throwable beginFailure) {
        // a savepoint's check would land in the enclosing transaction, once per savepoint; a reactive
        // transaction has no synchronizations on this thread
        if (beginFailure != null || !(transaction instanceof TransactionStatus) || !transaction.isNewTransaction()
                || !TransactionSynchronizationManager.isSynchronizationActive()) {
            return;
        }
        List<LockHandle> held = AnnotationLocksOnThread.current();
        if (!held.isEmpty()) {
            TransactionSynchronizationManager.registerSynchronization(new LostLockCommitCheck(held));
        }
    }
}
