package dev.locks.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;

/**
 * H2, the embedded default. H2 has no shared row locks, so a path grant locks its tenant's root
 * row exclusively ({@link #sharesNodeLocks}): acquisitions in one tenant serialise for the
 * few microseconds of their transaction, which is fine in one process. Paths compare by UTF-16
 * code unit, which keeps subtree ranges exact.
 */
public class H2Dialect extends SqlDialect {

    /** Enough parsed statements per session for every statement shape of an acquire and a release. */
    static final int QUERY_CACHE_SIZE = 64;

    @Override
    String tuningAdvice(Connection connection) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(
                "SELECT SETTING_VALUE FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'QUERY_CACHE_SIZE'");
                ResultSet rs = ps.executeQuery()) {
            if (!rs.next() || Integer.parseInt(rs.getString(1)) >= QUERY_CACHE_SIZE) {
                return null;
            }
            return "H2 keeps " + rs.getString(1) + " parsed statements per session and parses the lock store's again"
                    + " as they fall out: add ;QUERY_CACHE_SIZE=" + QUERY_CACHE_SIZE + " to the JDBC URL (with Spring"
                    + " Boot's embedded H2, set spring.datasource.url, e.g. jdbc:h2:mem:app;DB_CLOSE_DELAY=-1;"
                    + "QUERY_CACHE_SIZE=" + QUERY_CACHE_SIZE + "; README, 'Storage').";
        }
    }

    @Override
    public String name() {
        return "h2";
    }

    @Override
    Instant serialise(Connection connection, LockTables tables, List<NodeLock> locks) throws SQLException {
        Instant now = lockNodes(connection, tables, locks);
        if (now == null) {
            try (PreparedStatement ps = connection.prepareStatement("MERGE INTO " + tables.node()
                    + " (lock_key, created_at) KEY (lock_key) VALUES (?, CURRENT_TIMESTAMP(6))")) {
                for (NodeLock lock : locks) {
                    ps.setBytes(1, lock.key());
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            now = lockNodes(connection, tables, locks);
            if (now == null) {
                throw new SQLException("Lock nodes vanished while being created", "40001");
            }
        }
        return now;
    }

    /**
     * Locks the rows with an {@code UPDATE} that changes nothing, read back with the clock through a
     * data change delta table: H2 parses a {@code SELECT ... FOR UPDATE} again at every execution (it
     * keeps no such statement in its query cache), which cost a fifth of an acquisition's time.
     *
     * @return the clock, or null if some of the rows do not exist (none is created here)
     */
    private Instant lockNodes(Connection connection, LockTables tables, List<NodeLock> locks) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("SELECT CURRENT_TIMESTAMP(6) FROM FINAL TABLE (UPDATE "
                + tables.node() + " SET created_at = created_at WHERE lock_key IN (" + SqlDialect.placeholders(locks.size())
                + "))")) {
            for (int i = 0; i < locks.size(); i++) {
                ps.setBytes(i + 1, locks.get(i).key());
            }
            int rows = 0;
            Instant now = null;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows++;
                    now = getTime(rs, 1);
                }
            }
            return rows == locks.size() ? now : null;
        }
    }

    @Override
    boolean usesNodeTable() {
        return true;
    }

    @Override
    boolean sharesNodeLocks() {
        return false;
    }

    @Override
    boolean insertsUnlessConflicting() {
        return true;
    }

    @Override
    String keyParameter() {
        return "CAST(? AS BINARY(32))";
    }

    // CURRENT_TIMESTAMP is the transaction's start time in H2
    @Override
    boolean clockMovesInTransactions() {
        return false;
    }

    @Override
    String now() {
        return "CURRENT_TIMESTAMP(6)";
    }

    @Override
    String plusMicros(String column) {
        return "DATEADD(MICROSECOND, ?, " + column + ")";
    }

    @Override
    String subtree() {
        return "path >= ? AND path < ?";
    }


    @Override
    boolean isRetryable(SQLException ex) {
        // 50200: lock timeout while another grant transaction held the node rows
        return super.isRetryable(ex) || ex.getErrorCode() == 50200 || "HYT00".equals(ex.getSQLState());
    }
}
