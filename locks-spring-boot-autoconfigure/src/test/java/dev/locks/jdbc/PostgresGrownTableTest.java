package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.core.BaseConnection;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import dev.locks.LockHandle;
import dev.locks.LockTimeoutException;
import dev.locks.testing.TestDatabase;

/**
 * PostgreSQL keeps a prepared statement's generic plan until the table's statistics change, which
 * autovacuum does only now and then: grants, a waiter's looks and releases, planned while the lock
 * table was small, must not read it end to end once it has grown. PostgreSQL 15 plans a check of
 * twelve keys as a sequential scan on a table of 100 rows, and through the expiry index on one of
 * 300; a release by grant id as a sequential scan on 100 rows.
 */
class PostgresGrownTableTest extends LockServiceContract {

    private static final int GROWN = 60_000;

    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    /**
     * Inserts {@code rows} live rows of another tenant, numbered from {@code first}, the way bulk
     * fixtures of the lock tables are made on PostgreSQL.
     */
    static void fill(Statement st, String table, int first, int rows) throws SQLException {
        st.execute("INSERT INTO " + table + " (grant_id, owner_token, kind, tenant, path, lock_key, scope_key,"
                + " lock_mode, permits, node, thread, acquired_at, expires_at)"
                + " SELECT md5(g::text), md5(g::text), 'P', 'filler', '/f/' || (g % 97) || '/' || g,"
                + " sha256(g::text::bytea), sha256(('s' || (g % 50))::bytea), 'X', 0, 'n', 't', clock_timestamp(),"
                + " clock_timestamp() + interval '1 hour' FROM generate_series(" + first + ", " + (first + rows - 1) + ") g");
    }

    @ParameterizedTest(name = "planned on {0} rows")
    @ValueSource(ints = { 100, 300 })
    void conflictChecksPlannedOnASmallTableLookUpTheirKeysOnceItHasGrown(int small) throws Exception {
        long read = rowsReadByTwentyMoreOnceGrown(small, 1,
                (node, pool, from, count) -> grantTenPaths(node, from, count));

        assertThat(read).as("rows read during twenty grants of new paths").isLessThan(GROWN);
    }

    @ParameterizedTest(name = "planned on {0} rows")
    @ValueSource(ints = { 100, 300 })
    void waitersLooksPlannedOnASmallTableLookUpTheirKeysOnceItHasGrown(int small) throws Exception {
        JdbcLockService holder = node("node-holds", mainPool());
        // a pool of one connection turns release notices off: the waiter looks every few milliseconds, far
        // more often than the executions before a generic plan
        long read = rowsReadOnceGrown(small, 1, (node, pool) -> {
            holder.acquire(x("/grow/busy").lease(Duration.ofMinutes(10)).build());
            waitInVain(node);
        }, (node, pool) -> waitInVain(node));

        assertThat(read).as("rows read while a waiter looked for half a second").isLessThan(GROWN);
    }

    @ParameterizedTest(name = "planned on {0} rows")
    @ValueSource(ints = { 100, 300 })
    void releasesPlannedOnASmallTableFindTheirRowsOnceItHasGrown(int small) throws Exception {
        long read = rowsReadByTwentyMoreOnceGrown(small, 1,
                (node, pool, from, count) -> lockAndRelease(node, from, count));

        assertThat(read).as("rows read during twenty grants and releases").isLessThan(GROWN);
    }

    @ParameterizedTest(name = "planned on {0} rows")
    @ValueSource(ints = { 100, 300 })
    void releasesThatFollowTheCallersTransactionFindTheirRowsOnceItHasGrown(int small) throws Exception {
        // guards the plans of this path, not the lead's form: a Sync pgjdbc might insert was not seen here.
        // A second connection for the releases, since the caller's transaction holds one until they have run
        long read = rowsReadByTwentyMoreOnceGrown(small, 2, this::releaseAfterTransactions);

        assertThat(read).as("rows read during twenty grants and releases after a transaction").isLessThan(GROWN);
    }

    @Test
    void statementsLeaveThePooledSessionAsTheyFoundIt() throws Exception {
        HikariDataSource pool = poolUnderTest(1);
        List<String> before = sessionState(pool);
        JdbcLockService node = node("node-under-test", pool);
        JdbcLockService holder = node("node-holds", mainPool());
        holder.acquire(x("/grow/busy").lease(Duration.ofMinutes(10)).build());

        waitInVain(node);
        lockAndRelease(node, 0, 10);
        node.holders(tenant, "/grow/busy");

        assertThat(sessionState(pool)).isEqualTo(before);
    }

    @Test
    void aReleaseThatFailsInTheTransactionItsLeadOpenedLeavesNoneOpen() throws Exception {
        // lock_timeout makes the release fail on a row another transaction has locked
        HikariDataSource pool = closeAfterTest(database().newPool(1, Map.of("options", "-c lock_timeout=200"), true));
        List<String> before = sessionState(pool);
        JdbcLockService node = node("node-under-test", pool);
        LockHandle handle = node.acquire(x("/grow/blocked").build());
        JdbcTemplate jdbc = new JdbcTemplate(mainPool());
        String rowOfGrant = "SELECT count(*) FROM " + prefix + "held WHERE tenant = ? AND path = '/grow/blocked'";

        try (Connection blocker = mainPool().getConnection()) {
            blocker.setAutoCommit(false);
            try (Statement st = blocker.createStatement()) {
                st.executeQuery("SELECT id FROM " + prefix + "held WHERE path = '/grow/blocked' FOR UPDATE").close();
            }
            catchThrowable(handle::release);
            assertThat(jdbc.queryForObject(rowOfGrant, Integer.class, tenant)).as("the grant's row, not released").isOne();
            blocker.rollback();
        }

        assertThat(sessionState(pool)).isEqualTo(before);
    }

    @Test
    void aReleaseInTheCallersTransactionLeavesItsSettingsAsItSetThem() {
        TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(mainPool()));
        JdbcTemplate jdbc = new JdbcTemplate(mainPool());
        String settings = "SELECT current_setting('enable_seqscan') || ' ' || current_setting('enable_bitmapscan')"
                + " || ' ' || current_setting('jit')";
        JdbcLockService node = node("node-under-test", mainPool());

        String after = transaction.execute(status -> {
            jdbc.execute("SET LOCAL enable_bitmapscan = off");
            LockHandle handle = node.acquire(x("/grow/in-transaction").build());
            handle.release();
            return jdbc.queryForObject(settings, String.class);
        });

        assertThat(after).isEqualTo("on off on");
    }

    /**
     * The settings the store changes for its own transactions, whether a transaction is open, and
     * pgjdbc's threshold for preparing statements on the server, on the pool's one connection.
     */
    private static List<String> sessionState(HikariDataSource pool) throws SQLException {
        try (Connection c = pool.getConnection()) {
            BaseConnection driver = c.unwrap(BaseConnection.class);
            String transaction = "transaction " + driver.getTransactionState();
            try (Statement st = c.createStatement(); var rs = st.executeQuery("SELECT current_setting('enable_seqscan'),"
                    + " current_setting('enable_bitmapscan'), current_setting('jit')")) {
                rs.next();
                return List.of(rs.getString(1), rs.getString(2), rs.getString(3), transaction,
                        "prepare threshold " + driver.getPrepareThreshold());
            }
        }
    }

    /** The pool of the node under test: few connections, so that its statements run in few sessions. */
    protected HikariDataSource poolUnderTest(int connections) {
        return newPool(connections);
    }

    /** What a node does with the lock tables, on its pool. */
    @FunctionalInterface
    private interface NodeWork {
        void run(JdbcLockService node, HikariDataSource pool);
    }

    /** What a node does {@code count} times with the lock tables, to paths numbered from {@code from}. */
    @FunctionalInterface
    private interface NumberedWork {
        void run(JdbcLockService node, HikariDataSource pool, int from, int count);
    }

    /**
     * {@link #rowsReadOnceGrown} for {@code work} done thirty times while the table is small, past
     * pgjdbc's five executions before it prepares on the server and PostgreSQL's five custom plans, and
     * twenty times more once it has grown.
     */
    private long rowsReadByTwentyMoreOnceGrown(int small, int connections, NumberedWork work) throws Exception {
        return rowsReadOnceGrown(small, connections, (node, pool) -> work.run(node, pool, 0, 30),
                (node, pool) -> work.run(node, pool, 30, 20));
    }

    /**
     * Runs {@code whileSmall} on a node whose pool has {@code connections} connections, so that all its
     * statements run in the few sessions whose plans are cached, with {@code small} analysed rows in the held table;
     * grows the table to {@link #GROWN} rows without analysing it, as between two runs of autovacuum;
     * then runs {@code onceGrown} on the same node.
     *
     * @return the rows PostgreSQL read from the held table's heap during {@code onceGrown}
     */
    private long rowsReadOnceGrown(int small, int connections, NodeWork whileSmall, NodeWork onceGrown)
            throws Exception {
        JdbcTemplate jdbc = new JdbcTemplate(mainPool());
        String held = prefix + "held";
        jdbc.execute((Statement st) -> {
            // an ANALYZE while the test runs would plan the statements again, and hide what it looks for
            st.execute("ALTER TABLE " + held + " SET (autovacuum_enabled = off)");
            st.execute("TRUNCATE " + held);
            fill(st, held, 0, small);
            return st.execute("ANALYZE " + held);
        });
        HikariDataSource pool = poolUnderTest(connections);
        JdbcLockService node = node("node-under-test", pool);
        whileSmall.run(node, pool);
        jdbc.execute((Statement st) -> {
            fill(st, held, small, GROWN - small);
            return null;
        });
        long before = rowsRead(jdbc, held);

        onceGrown.run(node, pool);
        node.close();
        endSessionsOf(pool, jdbc);
        long read = rowsRead(jdbc, held) - before;
        jdbc.execute("ALTER TABLE " + held + " RESET (autovacuum_enabled)");
        return read;
    }

    /** Grants {@code count} requests of ten sibling paths, each held for ten minutes: nothing is released. */
    private void grantTenPaths(JdbcLockService node, int from, int count) {
        for (int i = from; i < from + count; i++) {
            String[] paths = new String[10];
            for (int j = 0; j < paths.length; j++) {
                paths[j] = "/grow/" + i + "/lock-" + j;
            }
            node.tryAcquire(x(paths).lease(Duration.ofMinutes(10)).build()).orElseThrow();
        }
    }

    private void lockAndRelease(JdbcLockService node, int from, int count) {
        for (int i = from; i < from + count; i++) {
            node.tryAcquire(x("/grow/" + i).build()).orElseThrow().release();
        }
    }

    /**
     * Grants the locks numbered from {@code from}, {@code count} of them, and releases each inside a
     * transaction at REPEATABLE READ on the lock tables' pool, whose snapshot a release could not see
     * past: each release runs after its transaction, and none is left for the background retries.
     */
    private void releaseAfterTransactions(JdbcLockService node, HikariDataSource pool, int from, int count) {
        TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(pool));
        transaction.setIsolationLevel(TransactionDefinition.ISOLATION_REPEATABLE_READ);
        for (int i = from; i < from + count; i++) {
            LockHandle handle = node.tryAcquire(x("/grow/" + i).build()).orElseThrow();
            transaction.executeWithoutResult(status -> handle.release());
            // a release that failed after the transaction would be retried on the ordinary path
            assertThat(node.pendingReleaseCount()).as("releases left to retry").isZero();
        }
    }

    /** Waits half a second for a path inside the held {@code /grow/busy}. */
    private void waitInVain(JdbcLockService waiter) {
        assertThatThrownBy(() -> waiter.acquire(x("/grow/busy/file").waitAtMost(Duration.ofMillis(500)).build()))
                .isInstanceOf(LockTimeoutException.class);
    }

    /** Closes the pool and waits for its sessions to end, which is when PostgreSQL publishes their counts. */
    private static void endSessionsOf(HikariDataSource pool, JdbcTemplate jdbc) throws Exception {
        List<Integer> pids = new ArrayList<>();
        List<Connection> borrowed = new ArrayList<>();
        try {
            // all at once, so that each is a different session
            for (int i = 0; i < pool.getMaximumPoolSize(); i++) {
                Connection c = pool.getConnection();
                borrowed.add(c);
                pids.add(new JdbcTemplate(new SingleConnectionDataSource(c, true))
                        .queryForObject("SELECT pg_backend_pid()", Integer.class));
            }
        }
        finally {
            for (Connection c : borrowed) {
                c.close();
            }
        }
        pool.close();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        for (int pid : pids) {
            while (jdbc.queryForObject("SELECT count(*) FROM pg_stat_activity WHERE pid = ?", Integer.class, pid) > 0) {
                assertThat(System.nanoTime()).as("session %d ended", pid).isLessThan(deadline);
                Thread.sleep(20);
            }
        }
        if (jdbc.queryForObject("SELECT current_setting('server_version_num')::int", Integer.class) < 150000) {
            // before PostgreSQL 15 a statistics collector process gathers the counts, every 500 ms
            Thread.sleep(1500);
        }
    }

    /** Rows read from {@code table}'s heap by sequential and index scans. */
    private static long rowsRead(JdbcTemplate jdbc, String table) {
        return jdbc.queryForObject("SELECT seq_tup_read + coalesce(idx_tup_fetch, 0) FROM pg_stat_user_tables"
                + " WHERE relname = ?", Long.class, table);
    }
}
