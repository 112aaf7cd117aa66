package dev.locks.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import dev.locks.testing.TestDatabase;

/**
 * The peers' tables, as their documentation gives them: ShedLock's {@code shedlock} table from its
 * README, and Spring Integration's {@code INT_LOCK} from the schema script in its own jar. Both get
 * the run's prefix so that concurrent runs do not meet.
 */
final class PeerTables {

    private static final Pattern INT_LOCK = Pattern.compile("CREATE TABLE INT_LOCK\\b[^;]*;");

    private PeerTables() {
    }

    static String shedLockTable(String prefix) {
        return prefix + "shedlock";
    }

    /** Spring Integration's prefix; the table is the prefix followed by {@code LOCK}. */
    static String integrationPrefix(String prefix) {
        return prefix + "int_";
    }

    static void create(TestDatabase database, DataSource dataSource, String prefix) throws SQLException {
        String shedLock = switch (database) {
            // ShedLock README, MySQL/MariaDB
            case MYSQL -> "CREATE TABLE " + shedLockTable(prefix) + " (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP(3) NOT NULL,"
                    + " locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), locked_by VARCHAR(255) NOT NULL,"
                    + " PRIMARY KEY (name))";
            // ShedLock README, PostgreSQL and the generic form (H2)
            case POSTGRESQL, H2 -> "CREATE TABLE " + shedLockTable(prefix) + " (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL,"
                    + " locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))";
        };
        String intLock = intLockDdl(database).replace("INT_", integrationPrefix(prefix));
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
            st.execute(shedLock);
            st.execute(intLock.substring(0, intLock.lastIndexOf(';')));
        }
    }

    /**
     * Fills ShedLock's table with {@code count} names locked until {@code until}, as many jobs
     * holding their locks would leave it, in batches rather than through ShedLock. The times are the
     * JVM's local ones, where ShedLock's database time is UTC on MariaDB and PostgreSQL: a caller
     * that locks for longer than any zone's offset (a day) gets names that are locked everywhere.
     *
     * @return the rows the table holds afterwards
     */
    static long lockShedLockNames(DataSource dataSource, String prefix, String namePrefix, int count, Instant until)
            throws SQLException {
        String insert = "INSERT INTO " + shedLockTable(prefix) + " (name, lock_until, locked_at, locked_by) VALUES (?, ?, ?, ?)";
        Timestamp now = Timestamp.from(Instant.now());
        Timestamp lockedUntil = Timestamp.from(until);
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(insert)) {
            c.setAutoCommit(false);
            for (int i = 0; i < count; i++) {
                ps.setString(1, namePrefix + i);
                ps.setTimestamp(2, lockedUntil);
                ps.setTimestamp(3, now);
                ps.setString(4, "bench-b");
                ps.addBatch();
                if (i % 1000 == 999 || i == count - 1) {
                    ps.executeBatch();
                    c.commit();
                }
            }
            c.setAutoCommit(true);
            try (Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + shedLockTable(prefix))) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    static void drop(DataSource dataSource, String prefix) {
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + shedLockTable(prefix));
            st.execute("DROP TABLE IF EXISTS " + integrationPrefix(prefix) + "LOCK");
        }
        catch (SQLException ex) {
            // leftovers carry a unique prefix and do no harm
        }
    }

    private static String intLockDdl(TestDatabase database) {
        String resource = "org/springframework/integration/jdbc/schema-" + database.id() + ".sql";
        try (InputStream in = PeerTables.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is not on the class path");
            }
            Matcher m = INT_LOCK.matcher(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            if (!m.find()) {
                throw new IllegalStateException("No CREATE TABLE INT_LOCK in " + resource);
            }
            return m.group();
        }
        catch (IOException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
