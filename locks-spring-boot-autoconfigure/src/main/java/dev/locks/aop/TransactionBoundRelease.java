package dev.locks.aop;

import java.util.List;

import org.springframework.core.Ordered;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.locks.LockHandle;
import dev.locks.LockHandles;

/**
 * Releases locks taken inside a transaction when that transaction ends, never before its work is
 * committed (the README's "Transactions").
 *
 * <ul>
 * <li>On commit of a read-write transaction that holds the lock store's own DataSource: in {@code beforeCommit},
 * so the release joins the transaction and commits together with the work.</li>
 * <li>Otherwise (another DataSource, or a rollback): in {@code afterCompletion}, when the work is
 * committed or rolled back and the store releases on a connection of its own.</li>
 * </ul>
 * Releasing twice is harmless: a handle already released does nothing. If the joined release is
 * rolled back with the transaction, the store repeats it on its own. A lock known to be lost fails
 * the commit first ({@link LostLockCommitCheck}, registered with it, which runs before every release);
 * a joined release that finds its grant gone fails it too.
 */
final class TransactionBoundRelease implements TransactionSynchronization {

    private final List<LockHandle> handles;

    private final Object lockStoreResource;

    /**
     * @param handles the handles, in the order they were taken
     * @param lockStoreResource the lock store's DataSource, or null if unknown
     */
    TransactionBoundRelease(List<LockHandle> handles, Object lockStoreResource) {
        this.handles = List.copyOf(handles);
        this.lockStoreResource = lockStoreResource;
    }

    @Override
    public int getOrder() {
        // after the application's own beforeCommit work (flushes), so the release is the last write
        return Ordered.LOWEST_PRECEDENCE;
    }

    @Override
    public void beforeCommit(boolean readOnly) {
        // a read-only transaction refuses the DELETE; its release follows the commit instead
        if (!readOnly && lockStoreResource != null && TransactionSynchronizationManager.hasResource(lockStoreResource)) {
            for (int i = handles.size() - 1; i >= 0; i--) {
                handles.get(i).release();
            }
            // a release that found its grant gone knows the lock was lost since the check: a
            // force-release the watchdog had not yet noticed
            LostLockCommitCheck.failIfAnyLost(handles);
        }
    }

    @Override
    public void afterCompletion(int status) {
        LockHandles.releaseAllAfterWork(handles, null);
    }
}
