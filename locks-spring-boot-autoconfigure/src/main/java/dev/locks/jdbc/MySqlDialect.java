package dev.locks.jdbc;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * MySQL and MariaDB (InnoDB). Conflicting acquisitions are serialised by row locks on a node table:
 * shared on the ancestors, exclusive on the requested paths, so that requests on sibling paths
 * proceed in parallel. This dialect takes them with {@code LOCK IN SHARE MODE} and {@code FOR
 * UPDATE}, {@link MariaDbDialect} with the inserts that create the rows. Transactions run at READ
 * COMMITTED (no gap locks, fresh reads). Paths and tenants are {@code VARBINARY}: byte comparison
 * is exact, where {@code utf8mb4_bin} pads trailing spaces on MariaDB. Times are
 * {@code UTC_TIMESTAMP(6)}.
 */
public class MySqlDialect extends SqlDialect {

    private static final DateTimeFormatter TIME_TEXT = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS");

    private final KnownNodes knownNodes = new KnownNodes();

    /** Whether the server is MariaDB rather than MySQL, once the first locking read asked. */
    private volatile Boolean serverIsMariaDb;

    /** The server's {@code innodb_rollback_on_timeout} (a start-up setting), once a lock wait asked. */
    private volatile Boolean rollbackOnTimeout;

    @Override
    String tuningAdvice(Connection connection) throws SQLException {
        List<String> missing = ConnectorJTuning.missing(connection);
        return missing.isEmpty() ? null
                : "The server parses the lock store's statements again on every execution: Connector/J runs without "
                        + String.join(", ", missing) + ". Add " + String.join("&", missing)
                        + " to the JDBC URL (or to the pool's data source properties) so that each connection prepares"
                        + " a statement once (README, 'Configuration').";
    }

    // InnoDB's DELETE reads and locks the latest committed rows, whatever the transaction's snapshot
    @Override
    boolean releasesInSnapshotTransactions() {
        return true;
    }

    @Override
    public String name() {
        return "mysql";
    }

    // MariaDB's InnoDB can let a lock request past a row whose holder is committing a moment before
    // that commit shows in a snapshot taken next, so a grant that waited for a conflicting grant's node
    // row could count nothing by its snapshot: seen once in 13,000 parent-against-child races on
    // MariaDB 10.11 while other grants committed (GUARANTEES.md §1). A locking read sees the rows
    // themselves, the committing grant's among them. It must not wait long for a row another
    // transaction holds, though: a reader's lock released inside a caller's transaction that is still
    // open (even this thread's own) would hold the grant, and its node locks, for as long. So the first
    // count fails at once on a locked row; the snapshot then decides a busy answer without waiting or
    // locking anything, and a free one is checked by a locking read that waits at most a second,
    // which outlasts any commit under way; after that the snapshot, read once more, decides.
    @Override
    String lockingReadWithoutWaiting(Connection connection) throws SQLException {
        return isMariaDb(connection) ? " LOCK IN SHARE MODE NOWAIT" : " FOR SHARE NOWAIT";
    }

    // MySQL's FOR SHARE has no bounded wait short of NOWAIT, so there a locked row leaves the decision
    // to the snapshot (MySQL has not run here; its InnoDB is not known to have the gap)
    @Override
    String lockingRead(Connection connection) throws SQLException {
        return isMariaDb(connection) ? " LOCK IN SHARE MODE WAIT 1" : null;
    }

    // MariaDB 10.11 scanned a table of five to nine rows for the key branch, whose owner filter the
    // index does not cover, rather than look up four keys: as a locking read that locked every live
    // grant and waited for any still being written (BENCHMARKS.md, twenty-first pass). Small tables
    // are the common case, and their statistics change with every grant.
    @Override
    String readThrough(String index) {
        return " FORCE INDEX (" + index + ")";
    }

    // adding nothing keeps the value and hides the column from the range optimiser
    @Override
    String leaseOutlives(String time) {
        return "expires_at + INTERVAL 0 SECOND > " + time;
    }

    private boolean isMariaDb(Connection connection) throws SQLException {
        Boolean mariaDb = serverIsMariaDb;
        if (mariaDb == null) {
            // a proxy may put these statements in front of MariaDB (locks.jdbc.dialect); the driver has
            // the server's version from its handshake
            DatabaseMetaData meta = connection.getMetaData();
            mariaDb = serverIsMariaDb = isMariaDb(meta.getDatabaseProductName(), meta.getDatabaseProductVersion());
        }
        return mariaDb;
    }

    @Override
    boolean isLockNotAvailable(Connection connection, SQLException ex) throws SQLException {
        if (ex.getErrorCode() == 3572) {
            // MySQL's NOWAIT: the statement failed, the transaction goes on
            return true;
        }
        return ex.getErrorCode() == 1205 && !rollsBackOnTimeout(connection);
    }

    /**
     * Whether a lock wait timeout ends the whole transaction, node locks included (a server started
     * with {@code innodb_rollback_on_timeout}), so that the grant must start again rather than go on.
     */
    private boolean rollsBackOnTimeout(Connection connection) throws SQLException {
        Boolean rollsBack = rollbackOnTimeout;
        if (rollsBack == null) {
            try (Statement st = connection.createStatement();
                    ResultSet rs = st.executeQuery("SELECT @@innodb_rollback_on_timeout")) {
                rollsBack = rollbackOnTimeout = rs.next() && rs.getBoolean(1);
            }
        }
        return rollsBack;
    }

    // InnoDB's locking read through the grant index also waits for the index entry after the last
    // match, another grant's, and takes a row changed by an open transaction for a locked one. A
    // node that released that grant inside a long transaction of its own would hold this renewal
    // up, and every lease of its chunk, for as long (and deadlock with it when it next releases one
    // of these grants). So the ids are found by a consistent read (a derived table, which DISTINCT
    // keeps from being merged) and the rows are locked by primary key alone: forced, since on a
    // small table the optimizer would rather scan it all, locking as it goes.
    @Override
    String lockRowsOfGrants(String held, String grantIds) {
        return "SELECT h.id FROM (SELECT DISTINCT id FROM " + held + " WHERE grant_id IN (" + grantIds
                + ")) g STRAIGHT_JOIN " + held + " h FORCE INDEX (PRIMARY) ON h.id = g.id ORDER BY h.id FOR UPDATE";
    }

    // By the ids locked, not through a derived table again: InnoDB reads the other tables of a
    // multi-table UPDATE with shared locks even at READ COMMITTED.
    @Override
    String extendRowsOfGrants(String held, String grantIds, String until, String lockedRowIds) {
        return "UPDATE JSON_TABLE(" + lockedRowIds + ", '$[*]' COLUMNS (id BIGINT PATH '$')) j STRAIGHT_JOIN " + held
                + " h FORCE INDEX (PRIMARY) ON h.id = j.id SET h.expires_at = GREATEST(h.expires_at, " + until + ") WHERE h.grant_id IN ("
                + grantIds + ") AND h.expires_at > " + now();
    }

    @Override
    boolean extendsLockedRowsById() {
        return true;
    }

    // the rows are found by a derived table (which also lets MySQL take a LIMIT there) and deleted by
    // primary key: a locking scan of an index would wait at another transaction's row after all
    @Override
    String deleteExpired(String held) {
        return "DELETE h FROM (SELECT id FROM " + held + " WHERE expires_at <= ? ORDER BY id LIMIT 5000 FOR UPDATE"
                + " SKIP LOCKED) e STRAIGHT_JOIN " + held + " h FORCE INDEX (PRIMARY) ON h.id = e.id WHERE h.expires_at <= ?";
    }

    @Override
    void beginTransaction(Connection connection) throws SQLException {
        // applies to the next transaction only, so the pooled connection's own level stays untouched
        try (Statement st = connection.createStatement()) {
            st.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
        }
    }

    // Connector/J sends SET autocommit=0 and =1 around a JDBC transaction: START TRANSACTION saves one
    @Override
    boolean startsTransactionsWithStatements() {
        return true;
    }

    @Override
    void startTransaction(Connection connection) throws SQLException {
        beginTransaction(connection);
        try (Statement st = connection.createStatement()) {
            st.execute("START TRANSACTION");
        }
    }

    @Override
    void endTransaction(Connection connection, boolean commit) throws SQLException {
        try (Statement st = connection.createStatement()) {
            st.execute(commit ? "COMMIT" : "ROLLBACK");
        }
    }

    @Override
    Instant serialise(Connection connection, LockTables tables, List<NodeLock> locks) throws SQLException {
        List<NodeLock> unknown = knownNodes.unknown(locks);
        if (!unknown.isEmpty()) {
            // a path this store has not seen: create its rows before locking them all
            createNodes(connection, tables, unknown);
        }
        Instant now = lockNodes(connection, tables, locks);
        if (now == null) {
            // a row this store knew was purged since: create them all, then lock again
            createNodes(connection, tables, locks);
            now = lockNodes(connection, tables, locks);
            if (now == null) {
                throw new SQLException("Lock nodes vanished while being created", "40001");
            }
        }
        knownNodes.addAll(locks);
        return now;
    }

    /**
     * Creates node rows, each locked in the mode the grant needs: {@code INSERT IGNORE} leaves a row
     * that exists already locked shared (enough for an ancestor), {@code ON DUPLICATE KEY UPDATE}
     * locks it exclusive, so that the locking statement after it has no shared lock to upgrade;
     * two grants upgrading one row would deadlock.
     */
    private void createNodes(Connection connection, LockTables tables, List<NodeLock> locks) throws SQLException {
        List<byte[]> shared = keys(locks, false);
        List<byte[]> exclusive = keys(locks, true);
        if (!shared.isEmpty()) {
            insertNodes(connection, createNodes(tables, shared.size(), false), shared);
        }
        if (!exclusive.isEmpty()) {
            insertNodes(connection, createNodes(tables, exclusive.size(), true), exclusive);
        }
    }

    /**
     * An insert of {@code n} node rows that leaves each, new or not, locked shared ({@code INSERT
     * IGNORE}) or exclusive ({@code ON DUPLICATE KEY UPDATE}); the keys are its parameters.
     */
    static String createNodes(LockTables tables, int n, boolean exclusive) {
        String values = String.join(",", Collections.nCopies(n, "(?, UTC_TIMESTAMP(6))"));
        return exclusive
                ? "INSERT INTO " + tables.node() + " (lock_key, created_at) VALUES " + values
                        + " ON DUPLICATE KEY UPDATE lock_key = lock_key"
                : "INSERT IGNORE INTO " + tables.node() + " (lock_key, created_at) VALUES " + values;
    }

    /** {@code FROM} the node rows of {@code n} keys, locked shared or exclusive; the keys are its parameters. */
    private static String lockedNodes(LockTables tables, int n, boolean exclusive) {
        return " FROM " + tables.node() + " WHERE lock_key IN (" + placeholders(n) + ")"
                + (exclusive ? " FOR UPDATE" : " LOCK IN SHARE MODE");
    }

    private static void insertNodes(Connection connection, String sql, List<byte[]> keys) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            for (int i = 0; i < keys.size(); i++) {
                ps.setBytes(i + 1, keys.get(i));
            }
            ps.executeUpdate();
        }
    }

    /**
     * Locks the ancestors' node rows shared and the paths' rows exclusive, in one statement; returns
     * the time, or null if some row does not exist.
     */
    private Instant lockNodes(Connection connection, LockTables tables, List<NodeLock> locks) throws SQLException {
        List<byte[]> shared = keys(locks, false);
        List<byte[]> exclusive = keys(locks, true);
        // the shared part runs first: a parent is always locked before its children
        String sql = "(SELECT lock_key, UTC_TIMESTAMP(6)" + lockedNodes(tables, exclusive.size(), true) + ")";
        if (!shared.isEmpty()) {
            sql = "(SELECT lock_key, UTC_TIMESTAMP(6)" + lockedNodes(tables, shared.size(), false) + ") UNION ALL " + sql;
        }
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            int i = 1;
            for (byte[] key : shared) {
                ps.setBytes(i++, key);
            }
            for (byte[] key : exclusive) {
                ps.setBytes(i++, key);
            }
            int rows = 0;
            Instant now = null;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows++;
                    now = getTime(rs, 2);
                }
            }
            return rows == locks.size() ? now : null;
        }
    }

    static List<byte[]> keys(List<NodeLock> locks, boolean exclusive) {
        List<byte[]> keys = new ArrayList<>();
        for (NodeLock lock : locks) {
            if (lock.exclusive() == exclusive) {
                keys.add(lock.key());
            }
        }
        return keys;
    }

    @Override
    boolean usesNodeTable() {
        return true;
    }

    @Override
    String now() {
        return "UTC_TIMESTAMP(6)";
    }

    @Override
    String plusMicros(String column) {
        return column + " + INTERVAL ? MICROSECOND";
    }

    @Override
    String subtree() {
        return "path >= ? AND path < ?";
    }

    @Override
    void setText(PreparedStatement ps, int index, String value) throws SQLException {
        ps.setBytes(index, value.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    String getText(ResultSet rs, String column) throws SQLException {
        return new String(rs.getBytes(column), StandardCharsets.UTF_8);
    }

    // Connector/J reads MariaDB's version as "5.5.5-..." and then drops the fraction of temporal
    // parameters; text keeps the microseconds on both servers
    @Override
    void setTime(PreparedStatement ps, int index, Instant value) throws SQLException {
        ps.setString(index, TIME_TEXT.format(LocalDateTime.ofInstant(value, ZoneOffset.UTC)));
    }

    @Override
    Instant getTime(ResultSet rs, String column) throws SQLException {
        return rs.getObject(column, LocalDateTime.class).toInstant(ZoneOffset.UTC);
    }

    @Override
    Instant getTime(ResultSet rs, int column) throws SQLException {
        return rs.getObject(column, LocalDateTime.class).toInstant(ZoneOffset.UTC);
    }

    @Override
    boolean isRetryable(SQLException ex) {
        // 1213 deadlock, 1205 lock wait timeout: both roll back only our statement or transaction
        return super.isRetryable(ex) || ex.getErrorCode() == 1213 || ex.getErrorCode() == 1205;
    }
}
