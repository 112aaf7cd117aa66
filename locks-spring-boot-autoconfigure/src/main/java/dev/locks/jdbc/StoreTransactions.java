package dev.locks.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.springframework.core.retry.RetryException;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.retry.RetryTemplate;

import dev.locks.LockUnavailableException;
import dev.locks.MessageText;

/**
 * Runs store work on a connection of its own, never inside the caller's transaction: grant
 * transactions at the dialect's isolation, single statements in auto-commit. Deadlocks and
 * serialisation failures are retried with Spring's {@link RetryTemplate}; every other failure
 * becomes a {@link LockUnavailableException}.
 */
final class StoreTransactions {

    /** Work on a connection. */
    @FunctionalInterface
    interface SqlWork<T> {
        T run(Connection connection) throws SQLException;
    }

    private final DataSource dataSource;

    private final SqlDialect dialect;

    private final RetryTemplate retry;

    /** Where node locks cannot be shared: grants of one row, lined up before they take a connection. */
    private final LocalGrantQueue grantQueue;

    StoreTransactions(DataSource dataSource, SqlDialect dialect) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.grantQueue = dialect.sharesNodeLocks() ? null : new LocalGrantQueue();
        this.retry = new RetryTemplate(RetryPolicy.builder()
                .maxRetries(25)
                .delay(Duration.ofMillis(1))
                .multiplier(2)
                .maxDelay(Duration.ofMillis(50))
                .jitter(Duration.ofMillis(1))
                .predicate(ex -> ex instanceof SQLException sql && dialect.isRetryable(sql))
                .build());
    }

    DataSource dataSource() {
        return dataSource;
    }

    /**
     * Runs {@code work} in a new transaction, committed unless it throws. Its statements are planned
     * for each run ({@link SqlDialect#plannedPerRun}), as all but grants are.
     */
    <T> T inTransaction(String what, SqlWork<T> work) {
        return inTransaction(what, () -> LocalGrantQueue.Place.NONE, withPlansPerRun(work));
    }

    /**
     * Runs a grant transaction that takes {@code locks} ({@link SqlDialect#serialise}), as {@link
     * #inTransaction}. Where the dialect cannot share node locks, each attempt first waits its turn
     * in this JVM ({@link LocalGrantQueue}), before it takes a connection, until its transaction has
     * ended.
     */
    <T> T inGrantTransaction(String what, List<SqlDialect.NodeLock> locks, SqlWork<T> work) {
        Supplier<LocalGrantQueue.Place> queue = grantQueue == null ? () -> LocalGrantQueue.Place.NONE
                : () -> grantQueue.enter(locks);
        return inTransaction(what, queue, work);
    }

    private <T> T inTransaction(String what, Supplier<LocalGrantQueue.Place> queue, SqlWork<T> work) {
        return retrying(what, () -> {
            try (LocalGrantQueue.Place place = queue.get(); Connection connection = dataSource.getConnection()) {
                boolean autoCommit = connection.getAutoCommit();
                if (autoCommit && dialect.startsTransactionsWithStatements()) {
                    return inStatementTransaction(connection, work);
                }
                if (autoCommit) {
                    connection.setAutoCommit(false);
                }
                try {
                    dialect.beginTransaction(connection);
                    T result = work.run(connection);
                    connection.commit();
                    return result;
                }
                catch (Throwable ex) {
                    // an Error too: switching auto-commit back on below would commit the partial work
                    rollbackQuietly(connection, ex);
                    throw ex;
                }
                finally {
                    if (autoCommit) {
                        connection.setAutoCommit(true);
                    }
                }
            }
        });
    }

    /**
     * Runs work that opens, and ends, its own transaction within one execution (a compound statement,
     * or several statements sent together), on a connection in auto-commit. If the work fails, whatever
     * it left open is rolled back, or the connection aborted, as for {@link #inTransaction}. Its
     * statements are planned for each run ({@link SqlDialect#plannedPerRun}); grants use {@link
     * #inGrantBlock}.
     *
     * @return the work's result, or null, with nothing done, where the pool's connections are not in
     *         auto-commit
     */
    <T> T inBlock(String what, SqlWork<T> work) {
        return inGrantBlock(what, withPlansPerRun(work));
    }

    /** A grant as {@link #inBlock}, whose own first statement keeps its plans on the indexes. */
    <T> T inGrantBlock(String what, SqlWork<T> work) {
        return retrying(what, () -> {
            try (Connection connection = dataSource.getConnection()) {
                if (!connection.getAutoCommit()) {
                    return null;
                }
                try {
                    return work.run(connection);
                }
                catch (Throwable ex) {
                    rollbackOrAbort(connection, ex);
                    throw ex;
                }
            }
        });
    }

    /**
     * The pool sees a connection in auto-commit throughout, so it would hand it on with the
     * transaction open if it were left so: every way out ends it, and a connection that cannot roll
     * back is aborted rather than returned with locks held.
     */
    private <T> T inStatementTransaction(Connection connection, SqlWork<T> work) throws SQLException {
        boolean committed = false;
        try {
            dialect.startTransaction(connection);
            T result = work.run(connection);
            dialect.endTransaction(connection, true);
            committed = true;
            return result;
        }
        catch (Throwable ex) {
            if (!committed) {
                rollbackOrAbort(connection, ex);
            }
            throw ex;
        }
    }

    /** {@code work} with its statements planned for each run. */
    <T> SqlWork<T> withPlansPerRun(SqlWork<T> work) {
        return connection -> dialect.plannedPerRun(connection, work);
    }

    private void rollbackOrAbort(Connection connection, Throwable failure) {
        try {
            dialect.endTransaction(connection, false);
        }
        catch (Throwable ex) {
            failure.addSuppressed(ex);
            try {
                connection.abort(Runnable::run);
                // a statement on the aborted connection fails with SQL state 08003, which pools that
                // watch SQL states (HikariCP) take as their cue to evict it instead of lending it again
                connection.createStatement().close();
            }
            catch (SQLException | RuntimeException expected) {
                failure.addSuppressed(expected);
            }
        }
    }

    /**
     * Runs maintenance statements (renewals, the purge) in a transaction at the grant transactions'
     * isolation, so that they can lock rows before judging them, and in auto-commit where the
     * database's clock stands still inside a transaction (H2).
     */
    <T> T isolated(String what, SqlWork<T> work) {
        return dialect.clockMovesInTransactions() ? inTransaction(what, work) : autoCommit(what, work);
    }

    /**
     * Runs single statements that need no transaction of their own, each planned for its run
     * ({@link SqlDialect#plannedPerRun}).
     */
    <T> T autoCommit(String what, SqlWork<T> work) {
        return onOwnConnection(what, withPlansPerRun(work));
    }

    /**
     * Runs frequent single statements that follow {@link SqlDialect#indexedPlansLead}, which in
     * auto-commit opens a transaction for the statement alone: they keep the plans the database caches.
     */
    <T> T autoCommitLed(String what, SqlWork<T> work) {
        return onOwnConnection(what, connection -> {
            boolean autoCommit = connection.getAutoCommit();
            try {
                return work.run(connection);
            }
            catch (Throwable ex) {
                if (autoCommit && !dialect.indexedPlansLead(true).isEmpty()) {
                    // the transaction the lead opened stays open when its statement fails
                    rollbackOrAbort(connection, ex);
                }
                throw ex;
            }
        });
    }

    private <T> T onOwnConnection(String what, SqlWork<T> work) {
        return retrying(what, () -> {
            try (Connection connection = dataSource.getConnection()) {
                boolean autoCommit = connection.getAutoCommit();
                try {
                    T result = work.run(connection);
                    if (!autoCommit) {
                        connection.commit();
                    }
                    return result;
                }
                catch (Throwable ex) {
                    // a pool that does not roll back on return would lend the failed transaction on
                    if (!autoCommit) {
                        rollbackQuietly(connection, ex);
                    }
                    throw ex;
                }
            }
        });
    }

    private <T> T retrying(String what, org.springframework.core.retry.Retryable<T> attempt) {
        try {
            return retry.execute(attempt);
        }
        catch (RetryException ex) {
            Throwable cause = ex.getLastException() != null ? ex.getLastException() : ex.getCause();
            if (cause instanceof LockUnavailableException unavailable) {
                throw unavailable;
            }
            if (cause instanceof RuntimeException runtime && !(cause instanceof org.springframework.dao.DataAccessException)) {
                throw runtime;
            }
            throw new LockUnavailableException("Lock store failed to " + what + ": " + MessageText.firstLine(cause.getMessage()),
                    cause);
        }
    }

    private static void rollbackQuietly(Connection connection, Throwable failure) {
        try {
            connection.rollback();
        }
        catch (SQLException ex) {
            failure.addSuppressed(ex);
        }
    }
}
