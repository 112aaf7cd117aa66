package dev.locks.torture;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

/**
 * The data the workers protect with their locks: one row per record with a fenced counter
 * ({@code value}, written only by the current fence holder) and an unfenced one ({@code plain},
 * the same read-modify-write without the fence), and a history of every write, appended in the
 * write's own transaction, so that the checker can replay each counter.
 *
 * <p>The fence follows Kleppmann: a holder first <em>claims</em> the record with its token
 * ({@code UPDATE ... SET fence = :token WHERE id = :id AND fence <= :token}), then reads, then
 * writes only while its claim stands ({@code ... WHERE fence = :token}). Fencing the write alone
 * ({@code WHERE fence < :token}) would not do for a read-modify-write: a paused holder could read,
 * the next holder read the same value, and both writes pass.
 */
final class SharedRecords {

    /** A record's two counters and its fence. */
    record Values(long value, long plain, long fence) {
    }

    /** One committed write from the history. */
    record HistoryRow(long seq, String recordId, String sectionId, long token, char kind, long oldValue, long newValue) {
    }

    private final String dialect;

    private final String records;

    private final String history;

    SharedRecords(String dialect, String prefix) {
        this.dialect = dialect;
        this.records = prefix + "record";
        this.history = prefix + "history";
    }

    String nowSql() {
        return "mysql".equals(dialect) ? "SELECT UTC_TIMESTAMP(6)" : "SELECT clock_timestamp()";
    }

    /** The database's clock, in microseconds since the epoch. */
    long now(Connection c) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(nowSql())) {
            rs.next();
            if ("mysql".equals(dialect)) {
                LocalDateTime t = rs.getObject(1, LocalDateTime.class);
                return micros(t.toInstant(ZoneOffset.UTC));
            }
            return micros(rs.getObject(1, OffsetDateTime.class).toInstant());
        }
    }

    static long micros(java.time.Instant t) {
        return t.getEpochSecond() * 1_000_000L + t.getNano() / 1000;
    }

    void create(DataSource ds, List<String> ids) throws SQLException {
        String seq = "mysql".equals(dialect) ? "BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY"
                : "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY";
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + records + " (id VARCHAR(200) PRIMARY KEY, value BIGINT NOT NULL,"
                    + " plain BIGINT NOT NULL, fence BIGINT NOT NULL)");
            st.execute("CREATE TABLE " + history + " (seq " + seq + ", record_id VARCHAR(200) NOT NULL,"
                    + " section_id VARCHAR(100) NOT NULL, token BIGINT NOT NULL, kind CHAR(1) NOT NULL,"
                    + " old_value BIGINT NOT NULL, new_value BIGINT NOT NULL)");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + records
                    + " (id, value, plain, fence) VALUES (?, 0, 0, 0)")) {
                for (String id : ids) {
                    ps.setString(1, id);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
        }
    }

    /** Registers {@code token} as the record's fence; false if a later token claimed it already. */
    boolean claim(Connection c, String id, long token) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + records + " SET fence = ? WHERE id = ? AND fence <= ?")) {
            ps.setLong(1, token);
            ps.setString(2, id);
            ps.setLong(3, token);
            return ps.executeUpdate() == 1;
        }
    }

    Values read(Connection c, String id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT value, plain, fence FROM " + records + " WHERE id = ?")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new IllegalStateException("No record " + id);
                }
                return new Values(rs.getLong(1), rs.getLong(2), rs.getLong(3));
            }
        }
    }

    /**
     * In one transaction: the fenced write (only while {@code token} is still the fence), the
     * unfenced write (always), and their history rows.
     *
     * @return whether the fence let the write through
     */
    boolean write(Connection c, String id, String sectionId, long token, Values read) throws SQLException {
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
            boolean fenced;
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + records + " SET value = ? WHERE id = ? AND fence = ?")) {
                ps.setLong(1, read.value() + 1);
                ps.setString(2, id);
                ps.setLong(3, token);
                fenced = ps.executeUpdate() == 1;
            }
            if (fenced) {
                appendHistory(c, id, sectionId, token, 'F', read.value());
            }
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + records + " SET plain = ? WHERE id = ?")) {
                ps.setLong(1, read.plain() + 1);
                ps.setString(2, id);
                ps.executeUpdate();
            }
            appendHistory(c, id, sectionId, token, 'P', read.plain());
            c.commit();
            return fenced;
        }
        catch (SQLException | RuntimeException ex) {
            try {
                c.rollback();
            }
            catch (SQLException suppressed) {
                ex.addSuppressed(suppressed);
            }
            throw ex;
        }
        finally {
            try {
                c.setAutoCommit(auto);
            }
            catch (SQLException ignored) {
                // the connection is broken; the pool drops it
            }
        }
    }

    private void appendHistory(Connection c, String id, String sectionId, long token, char kind, long old)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + history
                + " (record_id, section_id, token, kind, old_value, new_value) VALUES (?, ?, ?, ?, ?, ?)")) {
            ps.setString(1, id);
            ps.setString(2, sectionId);
            ps.setLong(3, token);
            ps.setString(4, String.valueOf(kind));
            ps.setLong(5, old);
            ps.setLong(6, old + 1);
            ps.executeUpdate();
        }
    }

    List<HistoryRow> history(DataSource ds) throws SQLException {
        List<HistoryRow> rows = new ArrayList<>();
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT seq, record_id, section_id, token, kind, old_value, new_value FROM "
                        + history + " ORDER BY seq")) {
            while (rs.next()) {
                rows.add(new HistoryRow(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getLong(4),
                        rs.getString(5).charAt(0), rs.getLong(6), rs.getLong(7)));
            }
        }
        return rows;
    }

    java.util.Map<String, Values> all(DataSource ds) throws SQLException {
        java.util.Map<String, Values> all = new java.util.TreeMap<>();
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT id, value, plain, fence FROM " + records)) {
            while (rs.next()) {
                all.put(rs.getString(1), new Values(rs.getLong(2), rs.getLong(3), rs.getLong(4)));
            }
        }
        return all;
    }
}
