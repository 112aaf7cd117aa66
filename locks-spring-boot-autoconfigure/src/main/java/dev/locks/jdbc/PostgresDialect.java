package dev.locks.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.function.BiConsumer;

import javax.sql.DataSource;

import org.postgresql.PGConnection;
import org.springframework.util.ClassUtils;

import dev.locks.LockKind;

/**
 * PostgreSQL: conflicting acquisitions are serialised with transaction-scoped advisory locks (no
 * rows written), shared on ancestors and exclusive on the requested paths, taken in path order by
 * one statement. Times come from {@code clock_timestamp()}, since {@code now()} is the start of the
 * transaction. Paths are {@code COLLATE "C"} so that ranges follow code points.
 */
public class PostgresDialect extends SqlDialect {

    /** Whether pgjdbc, an optional dependency, is there: another driver may serve PostgreSQL. */
    private static final boolean PGJDBC = ClassUtils.isPresent("org.postgresql.PGConnection",
            PostgresDialect.class.getClassLoader());

    // The lock tables are meant to be read through their key and subtree indexes only, but a prepared
    // statement's generic plan keeps the access paths it was planned with until autovacuum next analyses
    // the table: planned while the table was small, a conflict check of several keys, or a release, scans
    // the whole table (or the expiry index: leaseOutlives), and goes on doing so as the table grows
    // (BENCHMARKS.md, twenty-sixth pass); planned from statistics that overestimate a key's rows, it reads
    // by bitmap, which marks no dead index entries, so every check visits every released row again. Grant
    // transactions therefore plan without either, from their first statement on (set_config(..., true)
    // lasts to the end of the transaction); frequent statements on their own follow a statement that does
    // the same (indexedPlansLead), and the rest are planned for each run (plannedPerRun). JIT goes too:
    // before PostgreSQL 18 a disabled node is priced at 10^10, past any JIT threshold, and compiling costs
    // milliseconds.
    private static final String INDEXED_PLANS = "set_config('enable_seqscan', 'off', true),"
            + " set_config('enable_bitmapscan', 'off', true), set_config('jit', 'off', true)";

    // unnest(... WITH ORDINALITY) yields the keys in array order, and the aggregate needs every row,
    // so the locks are taken one by one in path order before clock_timestamp() is read
    private static final String SERIALISE = "SELECT count(l), clock_timestamp(), " + INDEXED_PLANS + " FROM (SELECT CASE WHEN t.x"
            + " THEN pg_advisory_xact_lock(t.k)::text ELSE pg_advisory_xact_lock_shared(t.k)::text END AS l"
            + " FROM unnest(?::bigint[], ?::boolean[]) WITH ORDINALITY AS t(k, x, n)) s";

    @Override
    public String name() {
        return "postgresql";
    }

    // pgjdbc sends the statements unnamed, and PostgreSQL plans each run for the tables as it finds them
    // then: planning costs a release about 0.3 ms, so this is for statements run seldom. The threshold is
    // the driver's, for statements created meanwhile, and is put back before the pool lends the connection
    // again.
    @Override
    <T> T plannedPerRun(Connection connection, StoreTransactions.SqlWork<T> work) throws SQLException {
        if (!PGJDBC || !connection.isWrapperFor(PGConnection.class)) {
            return work.run(connection);
        }
        PGConnection driver = connection.unwrap(PGConnection.class);
        int threshold = driver.getPrepareThreshold();
        driver.setPrepareThreshold(0);
        try {
            return work.run(connection);
        }
        finally {
            driver.setPrepareThreshold(threshold);
        }
    }

    /** Whether this store's connections run at another level by default; read from the first one. */
    private volatile Boolean otherIsolation;

    // SERIALISE must come before the snapshot of the conflict check: at REPEATABLE READ the snapshot
    // would be taken when SERIALISE starts, before it waits for the locks, and a grant made meanwhile
    // would go unseen. Pools hand out connections at one level, so the first tells for all.
    @Override
    void beginTransaction(Connection connection) throws SQLException {
        if (otherIsolation(connection)) {
            try (Statement st = connection.createStatement()) {
                st.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
            }
        }
    }

    private boolean otherIsolation(Connection connection) throws SQLException {
        Boolean other = otherIsolation;
        if (other == null) {
            other = connection.getTransactionIsolation() != Connection.TRANSACTION_READ_COMMITTED;
            otherIsolation = other;
        }
        return other;
    }

    @Override
    Instant serialise(Connection connection, LockTables tables, List<NodeLock> locks) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(SERIALISE)) {
            bindSerialise(connection, ps, 1, locks);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return getTime(rs, 2);
            }
        }
    }

    // pgjdbc sends the statements of one execution together and the server runs them in order, each
    // taking its snapshot when it starts (READ COMMITTED), so the insert sees every grant committed
    // while SERIALISE waited for the locks. The explicit transaction keeps the locks until the insert
    // has committed even where pgjdbc inserts a Sync between two statements (it does before a prepared
    // statement whose rows it cannot size), which would end an implicit transaction early.
    @Override
    boolean pipelinesGrants() {
        return true;
    }

    @Override
    String pipelinedSerialise() {
        return "BEGIN ISOLATION LEVEL READ COMMITTED; " + SERIALISE + "; ";
    }

    @Override
    String pipelinedEnd() {
        return "; COMMIT";
    }

    // ends what a pipelined grant began on a connection in auto-commit, where Connection.rollback() refuses
    @Override
    void endTransaction(Connection connection, boolean commit) throws SQLException {
        try (Statement st = connection.createStatement()) {
            st.execute(commit ? "COMMIT" : "ROLLBACK");
        }
    }

    @Override
    int bindSerialise(Connection connection, PreparedStatement ps, int index, List<NodeLock> locks) throws SQLException {
        Long[] keys = new Long[locks.size()];
        Boolean[] exclusive = new Boolean[locks.size()];
        for (int i = 0; i < locks.size(); i++) {
            keys[i] = LockKeys.numericKey(locks.get(i).key());
            exclusive[i] = locks.get(i).exclusive();
        }
        ps.setArray(index, connection.createArrayOf("bigint", keys));
        ps.setArray(index + 1, connection.createArrayOf("boolean", exclusive));
        return index + 2;
    }

    // Pipelined as grants are: the UPDATE starts, and reads the clock, only once the locking SELECT
    // has all its row locks. The expiry is computed once (a CTE with a volatile function is evaluated
    // once), so that every row of the chunk carries the same one.
    @Override
    String renewalTrip(String held, String grantIds) {
        return "BEGIN ISOLATION LEVEL READ COMMITTED; SELECT count(*) FROM (" + lockRowsOfGrants(held, grantIds)
                + ") l; WITH c AS (SELECT " + plusMicros("clock_timestamp()") + " AS until), r AS ("
                + extendRowsOfGrants(held, grantIds, "(SELECT until FROM c)", null)
                + " RETURNING 1) SELECT (SELECT count(*) FROM r), (SELECT until FROM c); COMMIT";
    }

    // pg_notify is sent at commit; the ::text and count() make sure it is evaluated for every tenant touched.
    // Only tenants where someone waits are told: a notifying commit takes a database-wide lock held through
    // its WAL flush, so notifying every release costs concurrent releases their group commit. A waiter
    // queues before it polls and polls again within milliseconds, so a release that sees no queued
    // waiter yet is found by that poll.
    @Override
    String notifying(String modification, String channel, String waitTable, ReleaseOrigin origin, boolean lazyCommit) {
        return "WITH changed AS (" + modification + " RETURNING kind, tenant) SELECT (SELECT count(*) FROM changed),"
                + " (SELECT count(n) FROM (SELECT pg_notify('" + channel + "', d.kind || '" + origin.tag()
                + "' || d.tenant)::text AS n"
                + " FROM (SELECT DISTINCT kind, tenant FROM changed) d WHERE EXISTS (SELECT 1 FROM " + waitTable
                + " w WHERE w.kind = d.kind AND w.tenant = d.tenant AND w.expires_at > clock_timestamp())) s)"
                // read at the commit of this statement's own transaction: the release then waits for no WAL flush
                + (lazyCommit ? ", set_config('synchronous_commit', 'off', true)" : "");
    }

    @Override
    ReleaseListener listen(DataSource dataSource, String channel, ReleaseOrigin self,
            BiConsumer<LockKind, String> subscriber) {
        return new PostgresReleaseListener(dataSource, channel, self, subscriber);
    }

    @Override
    String schemaCreationLock() {
        return "SELECT pg_advisory_xact_lock(?)";
    }

    @Override
    String now() {
        return "clock_timestamp()";
    }

    // The settings last to the end of the transaction. In auto-commit it is an explicit one, since pgjdbc
    // may send a Sync between two statements of one execution (see pipelinesGrants), which would end an
    // implicit one before the led statement. In a transaction, which may be the caller's, the values found
    // are kept in settings of the store's own and put back after the led statement, so that nothing else
    // the transaction runs is planned differently.
    private static final String LEAD_IN_AUTO_COMMIT = "BEGIN; SELECT " + INDEXED_PLANS + "; ";

    private static final String LEAD_IN_TRANSACTION = "SELECT set_config('locks.enable_seqscan',"
            + " current_setting('enable_seqscan'), true), set_config('locks.enable_bitmapscan',"
            + " current_setting('enable_bitmapscan'), true), set_config('locks.jit', current_setting('jit'), true), "
            + INDEXED_PLANS + "; ";

    private static final String END_IN_TRANSACTION = "; SELECT set_config('enable_seqscan',"
            + " current_setting('locks.enable_seqscan'), true), set_config('enable_bitmapscan',"
            + " current_setting('locks.enable_bitmapscan'), true), set_config('jit', current_setting('locks.jit'), true)";

    @Override
    String indexedPlansLead(boolean openTransaction) {
        return openTransaction ? LEAD_IN_AUTO_COMMIT : LEAD_IN_TRANSACTION;
    }

    @Override
    String indexedPlansEnd(boolean openTransaction) {
        return openTransaction ? "; COMMIT" : END_IN_TRANSACTION;
    }

    // adding nothing keeps the value and hides the column from the planner, which on a small table reads
    // several keys' rows through the expiry index, that is every live grant, rather than look each key up.
    // The key index is then searched by key alone: a key's lapsed rows are read too, until the purge
    // deletes them.
    @Override
    String leaseOutlives(String time) {
        return "expires_at + interval '0 seconds' > " + time;
    }

    @Override
    String plusMicros(String column) {
        return column + " + (? * interval '1 microsecond')";
    }

    // Index entries are limited to ~2700 bytes, so the index covers left(path, 600) and the exact
    // bounds are checked on the row; left() is monotone, so the coarse range contains the exact one.
    @Override
    String subtree() {
        return "left(path, 600) >= left(?, 600) AND left(path, 600) <= left(?, 600) AND path >= ? AND path < ?";
    }

    @Override
    int bindSubtree(PreparedStatement ps, int index, String low, String high) throws SQLException {
        index = super.bindSubtree(ps, index, low, high);
        return super.bindSubtree(ps, index, low, high);
    }

}
