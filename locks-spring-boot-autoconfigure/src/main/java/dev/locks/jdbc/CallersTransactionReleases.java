package dev.locks.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.locks.store.Grant;
import dev.locks.store.PendingRelease;
import dev.locks.store.ReleaseDeferredException;

/**
 * Releases made inside a caller's transaction on the lock tables' own DataSource. The lock is freed
 * when the work commits, never before: nobody can lock the data before the work is visible.
 * <p>
 * The release joins as the commit begins ({@link CommitPhase}), or follows the transaction where
 * its snapshot could hide the grant ({@link SqlDialect#releasesInSnapshotTransactions}). Until then
 * the grant stays and the engine renews it ({@link PendingRelease}), and a look answers whether it
 * was live (but for MySQL above READ COMMITTED, see {@link #release}). An uncommitted {@code DELETE}
 * at the release would not do: it keeps other nodes out only while the lease lasts (once it has run
 * out, PostgreSQL's and H2's grants pass over the row, and InnoDB's could too: seen with the MySQL
 * dialect), and its row locks would keep the renewals off.
 */
final class CallersTransactionReleases {

    private static final Logger log = LoggerFactory.getLogger(CallersTransactionReleases.class);

    /** The release statements, which the store owns with the rest of its SQL. */
    interface ReleaseStatements {

        /** @return the release on the caller's connection, committed with its transaction */
        StoreTransactions.SqlWork<Integer> joining(Grant grant, Duration keepFor);

        /** @return the release on a connection of the store's own, once the caller's transaction has ended */
        StoreTransactions.SqlWork<Integer> afterTransaction(Grant grant, Duration keepFor);

        /** @return whether the grant's rows are live, as {@code connection} sees them */
        boolean isLive(Connection connection, Grant grant) throws SQLException;
    }

    private final StoreTransactions transactions;

    private final SqlDialect dialect;

    private final JoinedReleases joinedReleases;

    private final ReleaseStatements statements;

    /** The isolation level of the pool's connections when a transaction does not set one; null until read. */
    private volatile Integer poolIsolation;

    CallersTransactionReleases(StoreTransactions transactions, SqlDialect dialect, JoinedReleases joinedReleases,
            ReleaseStatements statements) {
        this.transactions = transactions;
        this.dialect = dialect;
        this.joinedReleases = joinedReleases;
        this.statements = statements;
    }

    /**
     * Whether the caller's thread is in a transaction that a release must join. A read-only one is
     * not joined: it wrote nothing the lock could guard, and it would refuse the release (PostgreSQL
     * then aborts it).
     */
    boolean inCallersTransaction() {
        return TransactionSynchronizationManager.isSynchronizationActive()
                && TransactionSynchronizationManager.isActualTransactionActive()
                && !TransactionSynchronizationManager.isCurrentTransactionReadOnly()
                && TransactionSynchronizationManager.getResource(transactions.dataSource()) != null;
    }

    /** Registers the caller's transaction's {@link CommitPhase} before its commit begins, where a release may ask for it. */
    void watchCommitPhase() {
        if (inCallersTransaction()) {
            CommitPhase.of(this);
        }
    }

    /**
     * @return the caller's transaction's commit phase if a release now must wait for that transaction,
     *         else null; from {@code afterCommit} the transaction still looks active, but no commit
     *         follows its work
     */
    CommitPhase waitingFor() {
        if (!inCallersTransaction()) {
            return null;
        }
        CommitPhase phase = CommitPhase.of(this);
        return phase.committed() ? null : phase;
    }

    /**
     * Takes a release into the caller's transaction.
     *
     * @param phase that transaction's commit phase, from {@link #waitingFor}
     * @return whether the grant was live: deleted by the joined release, or seen by the look; true
     *         where no look is made (MySQL above READ COMMITTED) and the engine's handle answers
     */
    boolean release(CommitPhase phase, Grant grant, Duration keepFor, PendingRelease pending) {
        // whatever becomes of the caller's transaction, the lock must not wait for its lease, nor be
        // freed before the work it guards is committed
        ReleaseAtTransactionEnd end = new ReleaseAtTransactionEnd(grant, keepFor, pending);
        TransactionSynchronizationManager.registerSynchronization(end);
        boolean committing = phase.committing();
        if (!committing) {
            // the release waits for the commit whatever follows, even if the look fails
            pending.started();
        }
        Connection connection = null;
        try {
            connection = DataSourceUtils.getConnection(transactions.dataSource());
            boolean readsLatest = isolationOf(connection) <= Connection.TRANSACTION_READ_COMMITTED;
            boolean joins = readsLatest || dialect.releasesInSnapshotTransactions();
            if (joins && committing) {
                return end.join(connection) > 0;
            }
            if (committing) {
                pending.started();
            }
            end.atCommit = joins;
            if (readsLatest) {
                end.seenLive = statements.isLive(connection, grant);
            }
            else if (!joins) {
                // the caller's snapshot may not see the grant; a connection of its own does, and the
                // release after the transaction needs one anyway
                end.seenLive = transactions.autoCommit("look at a lock released after the caller's transaction",
                        c -> statements.isLive(c, grant));
            }
            else {
                // InnoDB's snapshot may hide the grant, and a look on a second connection from every
                // transaction at once could exhaust the pool: the handle's knowledge answers, and the
                // commit's DELETE tells if the grant was gone
                end.seenLive = true;
            }
            return end.seenLive;
        }
        catch (SQLException | RuntimeException ex) {
            throw end.failed(ex);
        }
        finally {
            if (connection != null) {
                DataSourceUtils.releaseConnection(connection, transactions.dataSource());
            }
        }
    }

    /**
     * The caller's isolation level without a round trip per release (PostgreSQL's driver asks the
     * server each time): the level Spring set for the transaction, else the pool's default, read once.
     */
    private int isolationOf(Connection connection) throws SQLException {
        Integer declared = TransactionSynchronizationManager.getCurrentTransactionIsolationLevel();
        if (declared != null) {
            return declared;
        }
        Integer pooled = poolIsolation;
        if (pooled == null) {
            pooled = connection.getTransactionIsolation();
            poolIsolation = pooled;
        }
        return pooled;
    }

    /**
     * One release through the rest of the caller's transaction:
     * <ul>
     * <li>just before the commit it runs on the caller's connection, so that the two commit together,
     * after every savepoint: a nested transaction rolled back to its savepoint cannot take it back;</li>
     * <li>once it has joined, renewals keep off the grant's rows ({@link JoinedReleases});</li>
     * <li>once the transaction has ended, a release that did not join, failed, or was rolled back
     * runs on a connection of its own. If that fails, the engine is told ({@link PendingRelease#failed})
     * and retries it. Then the engine stops renewing the grant.</li>
     * </ul>
     */
    private final class ReleaseAtTransactionEnd implements TransactionSynchronization {

        private final Grant grant;

        private final Duration keepFor;

        private final PendingRelease pending;

        /** Whether the release joins the caller's transaction at its commit; only the caller's thread touches it. */
        private boolean atCommit;

        /** Set once the release ran in the caller's transaction. */
        private boolean joined;

        /** What the look at the release answered, where the release waits for the commit. */
        private boolean seenLive;

        ReleaseAtTransactionEnd(Grant grant, Duration keepFor, PendingRelease pending) {
            this.grant = grant;
            this.keepFor = keepFor;
            this.pending = pending;
        }

        /** Runs the release on the caller's connection, once renewals under way on its grant have ended. */
        int join(Connection connection) throws SQLException {
            joinedReleases.releaseJoining(grant);
            int rows = statements.joining(grant, keepFor).run(connection);
            joined = true;
            return rows;
        }

        ReleaseDeferredException failed(Exception ex) {
            return new ReleaseDeferredException("Lock store failed to release the lock with token " + grant.fencingToken()
                    + " in the caller's transaction: " + ex.getMessage(), ex);
        }

        @Override
        public void beforeCommit(boolean readOnly) {
            if (!atCommit) {
                return;
            }
            Connection connection = DataSourceUtils.getConnection(transactions.dataSource());
            try {
                if (join(connection) == 0 && seenLive) {
                    // renewed until now, so lost to an outage longer than the lease, or force-released
                    log.warn("The lock with token {} was no longer held when its release joined the caller's commit:"
                            + " the work it guarded commits without it", grant.fencingToken());
                }
            }
            catch (SQLException ex) {
                throw failed(ex);
            }
            finally {
                DataSourceUtils.releaseConnection(connection, transactions.dataSource());
            }
        }

        @Override
        public void afterCompletion(int status) {
            try {
                if (joined && status == STATUS_COMMITTED) {
                    return;
                }
                String when = joined ? "after rollback" : "after the caller's transaction";
                try {
                    // the watchdog may still renew the grant: a renewal and a DELETE of a grant of
                    // several rows would lock them in different orders
                    joinedReleases.releaseJoining(grant);
                    // on a connection of its own, whose lead in auto-commit opens a transaction for the release
                    transactions.autoCommitLed("release a lock " + when, statements.afterTransaction(grant, keepFor));
                }
                catch (RuntimeException ex) {
                    log.debug("Could not release a lock {}: {}", when, ex.toString());
                    pending.failed();
                }
            }
            finally {
                joinedReleases.transactionEnded(grant);
                pending.ended();
            }
        }
    }
}
