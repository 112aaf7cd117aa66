package dev.locks.jdbc;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
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
 * {@code LOCK IN SHARE MODE} on the ancestors, {@code FOR UPDATE} on the requested paths, so that
 * requests on sibling paths proceed in parallel. Transactions run at READ COMMITTED (no gap locks,
 * fresh reads). Paths and tenants are {@code VARBINARY}: byte comparison is exact, where
 * {@code utf8mb4_bin} pads trailing spaces on MariaDB. Times are {@code UTC_TIMESTAMP(6)}.
 */
public class MySqlDialect extends SqlDialect {

    private static final DateTimeFormatter TIME_TEXT = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS");

    @Override
    public String name() {
        return "mysql";
    }

    @Override
    void beginTransaction(Connection connection) throws SQLException {
        // applies to the next transaction only, so the pooled connection's own level stays untouched
        try (Statement st = connection.createStatement()) {
            st.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
        }
    }

    @Override
    Instant serialise(Connection connection, LockTables tables, List<NodeLock> locks) throws SQLException {
        List<byte[]> shared = new ArrayList<>();
        List<byte[]> exclusive = new ArrayList<>();
        for (NodeLock lock : locks) {
            (lock.exclusive() ? exclusive : shared).add(lock.key());
        }
        Instant now = lockNodes(connection, tables, shared, exclusive);
        if (now == null) {
            // first use of some path: create its nodes (their insert locks them), then lock again in order
            insertNodes(connection, tables, locks);
            now = lockNodes(connection, tables, shared, exclusive);
            if (now == null) {
                throw new SQLException("Lock nodes vanished while being created", "40001");
            }
        }
        return now;
    }

    /** Returns the time, or null if some node row does not exist yet. */
    private Instant lockNodes(Connection connection, LockTables tables, List<byte[]> shared, List<byte[]> exclusive)
            throws SQLException {
        int found = 0;
        if (!shared.isEmpty()) {
            found += select(connection, "SELECT lock_key FROM " + tables.node() + " WHERE lock_key IN ("
                    + placeholders(shared.size()) + ") LOCK IN SHARE MODE", shared, null);
        }
        Instant[] now = new Instant[1];
        found += select(connection, "SELECT lock_key, UTC_TIMESTAMP(6) FROM " + tables.node() + " WHERE lock_key IN ("
                + placeholders(exclusive.size()) + ") FOR UPDATE", exclusive, now);
        return found == shared.size() + exclusive.size() ? now[0] : null;
    }

    private int select(Connection connection, String sql, List<byte[]> keys, Instant[] now) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            for (int i = 0; i < keys.size(); i++) {
                ps.setBytes(i + 1, keys.get(i));
            }
            int rows = 0;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows++;
                    if (now != null) {
                        now[0] = getTime(rs, 2);
                    }
                }
            }
            return rows;
        }
    }

    private void insertNodes(Connection connection, LockTables tables, List<NodeLock> locks) throws SQLException {
        String values = String.join(",", Collections.nCopies(locks.size(), "(?, UTC_TIMESTAMP(6))"));
        try (PreparedStatement ps = connection.prepareStatement("INSERT IGNORE INTO " + tables.node()
                + " (lock_key, created_at) VALUES " + values)) {
            for (int i = 0; i < locks.size(); i++) {
                ps.setBytes(i + 1, locks.get(i).key());
            }
            ps.executeUpdate();
        }
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
