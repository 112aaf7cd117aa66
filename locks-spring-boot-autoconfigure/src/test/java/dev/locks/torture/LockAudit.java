package dev.locks.torture;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

/**
 * The database's own history of the lock table, kept by triggers on the private server: every
 * insert, lease change and delete of a grant row, with the database time and the session that
 * made it. Workers only see their own handles; when the checker finds two conflicting sections
 * that overlapped, this history tells whether both rows really coexisted (the grant transactions
 * did not serialise), one row vanished early (a release or purge took it) or a lease ran out.
 */
final class LockAudit {

    private static final Pattern TOKEN = Pattern.compile("token (\\d+)");

    private final String dialect;

    private final String held;

    private final String audit;

    LockAudit(String dialect, String prefix) {
        this.dialect = dialect;
        this.held = prefix + "held";
        this.audit = prefix + "held_audit";
    }

    void install(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            if ("mysql".equals(dialect)) {
                st.execute("CREATE TABLE " + audit + " (seq BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
                        + " event CHAR(1) NOT NULL, lock_id BIGINT NOT NULL, tenant VARBINARY(760) NOT NULL,"
                        + " path VARBINARY(3000) NOT NULL, lock_mode CHAR(1) NOT NULL, node VARCHAR(255) NOT NULL,"
                        + " old_expires DATETIME(6) NULL, new_expires DATETIME(6) NULL,"
                        + " statement_time DATETIME(6) NOT NULL, session BIGINT NOT NULL, KEY (lock_id))");
                String columns = " (event, lock_id, tenant, path, lock_mode, node, old_expires, new_expires,"
                        + " statement_time, session) VALUES ";
                st.execute("CREATE TRIGGER " + audit + "_i AFTER INSERT ON " + held + " FOR EACH ROW INSERT INTO "
                        + audit + columns + "('I', NEW.id, NEW.tenant, LEFT(NEW.path, 3000), NEW.lock_mode, NEW.node,"
                        + " NULL, NEW.expires_at, UTC_TIMESTAMP(6), CONNECTION_ID())");
                st.execute("CREATE TRIGGER " + audit + "_u AFTER UPDATE ON " + held + " FOR EACH ROW INSERT INTO "
                        + audit + columns + "('U', NEW.id, NEW.tenant, LEFT(NEW.path, 3000), NEW.lock_mode, NEW.node,"
                        + " OLD.expires_at, NEW.expires_at, UTC_TIMESTAMP(6), CONNECTION_ID())");
                st.execute("CREATE TRIGGER " + audit + "_d AFTER DELETE ON " + held + " FOR EACH ROW INSERT INTO "
                        + audit + columns + "('D', OLD.id, OLD.tenant, LEFT(OLD.path, 3000), OLD.lock_mode, OLD.node,"
                        + " OLD.expires_at, NULL, UTC_TIMESTAMP(6), CONNECTION_ID())");
            }
            else {
                st.execute("CREATE TABLE " + audit + " (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                        + " event CHAR(1) NOT NULL, lock_id BIGINT NOT NULL, tenant TEXT NOT NULL, path TEXT NOT NULL,"
                        + " lock_mode CHAR(1) NOT NULL, node TEXT NOT NULL, old_expires TIMESTAMP(6) NULL,"
                        + " new_expires TIMESTAMP(6) NULL, statement_time TIMESTAMP(6) NOT NULL, session BIGINT NOT NULL)");
                st.execute("CREATE INDEX " + audit + "_id ON " + audit + " (lock_id)");
                st.execute("CREATE FUNCTION " + audit + "_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                        + " IF TG_OP = 'DELETE' THEN INSERT INTO " + audit + " (event, lock_id, tenant, path, lock_mode,"
                        + " node, old_expires, new_expires, statement_time, session) VALUES ('D', OLD.id, OLD.tenant,"
                        + " left(OLD.path, 3000), OLD.lock_mode, OLD.node, OLD.expires_at, NULL,"
                        + " clock_timestamp() AT TIME ZONE 'UTC', pg_backend_pid()); RETURN OLD; END IF;"
                        + " INSERT INTO " + audit + " (event, lock_id, tenant, path, lock_mode, node, old_expires,"
                        + " new_expires, statement_time, session) VALUES (left(TG_OP, 1), NEW.id, NEW.tenant,"
                        + " left(NEW.path, 3000), NEW.lock_mode, NEW.node,"
                        + " CASE WHEN TG_OP = 'UPDATE' THEN OLD.expires_at END, NEW.expires_at,"
                        + " clock_timestamp() AT TIME ZONE 'UTC', pg_backend_pid()); RETURN NEW; END $$");
                st.execute("CREATE TRIGGER " + audit + "_t AFTER INSERT OR UPDATE OR DELETE ON " + held
                        + " FOR EACH ROW EXECUTE FUNCTION " + audit + "_f()");
            }
        }
    }

    /** The grant rows named as {@code token N} in the violations, with everything that happened to them. */
    List<String> explain(DataSource ds, Collection<String> violations) throws SQLException {
        List<Long> ids = new ArrayList<>();
        for (String v : violations) {
            Matcher m = TOKEN.matcher(v);
            while (m.find() && ids.size() < 40) {
                ids.add(Long.parseLong(m.group(1)));
            }
        }
        List<String> lines = new ArrayList<>();
        if (ids.isEmpty()) {
            return lines;
        }
        String in = String.join(",", java.util.Collections.nCopies(ids.size(), "?"));
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT seq, event, lock_id,"
                + " tenant, path, lock_mode, node, old_expires, new_expires, statement_time, session FROM " + audit
                + " WHERE lock_id IN (" + in + ") ORDER BY seq")) {
            for (int i = 0; i < ids.size(); i++) {
                ps.setLong(i + 1, ids.get(i));
            }
            List<Event> events = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    events.add(new Event(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getString(9),
                            rs.getString(10)));
                    lines.add("#" + rs.getLong(1) + " " + rs.getString(2) + " id " + rs.getLong(3) + " "
                            + rs.getString(4) + ":" + rs.getString(5) + " " + rs.getString(6) + " node "
                            + rs.getString(7) + " expires " + rs.getString(8) + " -> " + rs.getString(9) + " at "
                            + rs.getString(10) + " session " + rs.getLong(11));
                }
            }
            for (String v : violations) {
                Matcher m = TOKEN.matcher(v);
                List<Long> pair = new ArrayList<>();
                while (m.find() && pair.size() < 2) {
                    pair.add(Long.parseLong(m.group(1)));
                }
                if (pair.size() == 2) {
                    lines.add(verdict(events, Math.min(pair.get(0), pair.get(1)), Math.max(pair.get(0), pair.get(1))));
                }
            }
        }
        return lines;
    }

    /** One audit row: its place in execution order, what happened, to which row, and when by the database's clock. */
    record Event(long seq, String kind, long lockId, String newExpires, String time) {
    }

    /**
     * Whether the earlier row was gone before the later one was written, by the audit's own order,
     * which does not depend on the clock: a report whose times overlap while the order does not
     * means the database's clock went back between the two, not that the locks failed.
     */
    static String verdict(List<Event> events, long earlier, long later) {
        Event inserted = null;
        Event deleted = null;
        for (Event e : events) {
            if (e.lockId() == later && "I".equals(e.kind()) && inserted == null) {
                inserted = e;
            }
            if (e.lockId() == earlier && "D".equals(e.kind())) {
                deleted = e;
            }
        }
        String pair = "rows " + earlier + " and " + later + ": ";
        if (inserted == null) {
            return pair + "no insert of row " + later + " in the audit";
        }
        if (deleted != null && deleted.seq() < inserted.seq()) {
            boolean clockBack = deleted.time().compareTo(inserted.time()) > 0;
            return pair + "row " + earlier + " was deleted (#" + deleted.seq() + ", " + deleted.time()
                    + ") before row " + later + " was inserted (#" + inserted.seq() + ", " + inserted.time()
                    + "): they did not coexist" + (clockBack ? "; the database clock went back between the two" : "");
        }
        return pair + "row " + earlier + " was still there when row " + later + " was inserted (#" + inserted.seq()
                + ", " + inserted.time() + "): they coexisted";
    }
}
