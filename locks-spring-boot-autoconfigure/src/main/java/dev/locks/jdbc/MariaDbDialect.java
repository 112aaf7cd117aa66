package dev.locks.jdbc;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

/**
 * MariaDB: InnoDB like MySQL, and a whole grant in one round trip as an anonymous compound
 * statement ({@code BEGIN NOT ATOMIC ... END}), which MySQL lacks. The block opens its own READ
 * COMMITTED transaction, locks the node rows by inserting them, reads the clock once the locks are
 * held, counts conflicts by a locking read that does not wait (and, if a row was locked, by the
 * snapshot and a locking read that waits a second, as {@link #lockingReadWithoutWaiting} tells),
 * inserts unless something conflicts, and commits; six to eight statements of the MySQL protocol
 * become one (MariaDB 10.1.1 and later). The block is a few kilobytes of SQL: with Connector/J's
 * defaults the server parses it on every grant, with {@link ConnectorJTuning#RECOMMENDED} once per
 * connection and shape.
 */
public class MariaDbDialect extends MySqlDialect {

    @Override
    boolean groupsGrantsInBlocks() {
        return true;
    }

    /**
     * Opens the block and its transaction, locks the node rows by inserting them, releases the grant
     * of a hand-off, reads the clock, and ends by opening the count of conflicts. An insert creates
     * a missing row, which it holds exclusive; a row that exists it locks as the duplicate it finds,
     * shared by {@code INSERT IGNORE} and exclusive by {@code ON DUPLICATE KEY UPDATE}, until the
     * commit (READ COMMITTED releases only the rows a scan skips). So the inserts alone hold every
     * lock the grant needs, the ancestors' rows before the paths' as the MySQL protocol takes them,
     * and nothing is upgraded later. A {@code SELECT ... FOR UPDATE} after them, as the MySQL
     * protocol sends where it knows the rows exist, would lock nothing new; it cost two statements of
     * the block. Nor would it show a conflicting grant that is still committing when this one gets its
     * locks; the {@link #blockCounts locking counts} do. Bound by {@link #bindBlockOpening}.
     */
    @Override
    String blockOpening(LockTables tables, List<NodeLock> locks, String releasing) {
        int shared = keys(locks, false).size();
        int exclusive = keys(locks, true).size();
        StringBuilder sql = new StringBuilder("BEGIN NOT ATOMIC DECLARE grant_time DATETIME(6);");
        sql.append(" DECLARE grant_lease BIGINT DEFAULT ?; DECLARE grant_conflicts INT;"
                + " DECLARE grant_released INT DEFAULT 0;"
                + " DECLARE grant_waited INT DEFAULT 0; DECLARE grant_limit INT DEFAULT ?; DECLARE grant_held_max INT;");
        sql.append(" SET TRANSACTION ISOLATION LEVEL READ COMMITTED; START TRANSACTION;");
        if (shared > 0) {
            sql.append(' ').append(createNodes(tables, shared, false)).append(';');
        }
        sql.append(' ').append(createNodes(tables, exclusive, true)).append(';');
        if (releasing != null) {
            sql.append(' ').append(releasing).append("; SET grant_released = ROW_COUNT();");
        }
        sql.append(" SET grant_time = UTC_TIMESTAMP(6);");
        return sql.toString();
    }

    @Override
    int bindBlockOpening(PreparedStatement ps, int index, Duration lease, int limit, List<NodeLock> locks)
            throws SQLException {
        int i = index;
        ps.setLong(i++, lease.toNanos() / 1000);
        ps.setInt(i++, limit);
        for (byte[] key : keys(locks, false)) {
            ps.setBytes(i++, key);
        }
        for (byte[] key : keys(locks, true)) {
            ps.setBytes(i++, key);
        }
        return i;
    }

    @Override
    String blockClock() {
        return "grant_time";
    }

    // The locking counts set their lock wait timeout by SET STATEMENT, since a compound statement
    // refuses NOWAIT and WAIT: none for the first, a second for the one after the snapshot
    // (MySqlDialect#lockingReadWithoutWaiting). A timeout fails only its statement unless the server
    // rolls back the whole transaction on a timeout: then the node locks are gone too, and the block
    // must not go on to insert. A grant that cannot run as a block (a pool not in auto-commit) uses
    // the MySQL dialect's clauses, which carry their own bound. IF NOT EXISTS (...) over the branches
    // took a millisecond more inside a block than a count.
    private static final String COUNT_CONFLICTS = " SELECT COUNT(*), MIN(" + PathConflictQuery.HELD_MAX
            + ") INTO grant_conflicts, grant_held_max FROM (";

    // a semaphore's grants may know a smaller max than the request (a rolling change of it): the
    // smallest among those a count read applies. The count's own rows, not a read of its own, since a
    // snapshot may miss a grant still committing, and InnoDB reads the tables of a stored program's IF
    // or SET with shared locks, which would wait for a permit released in a transaction still open.
    private static final String UNDER_LIMIT = " grant_conflicts < LEAST(grant_limit, COALESCE(grant_held_max, grant_limit))";

    private static final String COUNTED = " LIMIT ?) AS conflicts;";

    private static final String IF_WAITED = " IF grant_waited = 1 THEN IF @@innodb_rollback_on_timeout THEN SIGNAL"
            + " SQLSTATE '40001' SET MESSAGE_TEXT = 'The lock grant was rolled back by a lock wait timeout'; END IF;";

    private static final List<BlockCount> COUNTS = List.of(
            new BlockCount(lockingCount(0), " LOCK IN SHARE MODE", COUNTED + " END;"),
            new BlockCount(IF_WAITED + " SET grant_waited = 0;" + COUNT_CONFLICTS, null, COUNTED),
            new BlockCount(" IF" + UNDER_LIMIT + " THEN" + lockingCount(1), " LOCK IN SHARE MODE",
                    COUNTED + " END;"),
            new BlockCount(IF_WAITED + COUNT_CONFLICTS, null,
                    COUNTED + " END IF; END IF; END IF; IF" + UNDER_LIMIT + " THEN "));

    private static String lockingCount(int timeoutSeconds) {
        return " BEGIN DECLARE CONTINUE HANDLER FOR 1205 SET grant_waited = 1; SET STATEMENT innodb_lock_wait_timeout = "
                + timeoutSeconds + " FOR" + COUNT_CONFLICTS;
    }

    @Override
    List<BlockCount> blockCounts() {
        return COUNTS;
    }

    @Override
    String blockTimes() {
        return "grant_time, grant_time + INTERVAL grant_lease MICROSECOND";
    }

    // the first id of a multi-row insert is the smallest: the fencing token
    @Override
    String blockClosing() {
        return "; SELECT LAST_INSERT_ID(), grant_time + INTERVAL grant_lease MICROSECOND, grant_time, grant_released;"
                + " ELSE SELECT NULL, NULL, grant_time, grant_released; END IF; COMMIT; END";
    }

    // The derived table keeps the locked ids inside the block; its FOR UPDATE still locks every row.
    // JSON_ARRAYAGG is cut at group_concat_max_len (often 1024 bytes: about 90 ids), so that is lifted
    // for the one statement.
    @Override
    String renewalTrip(String held, String grantIds) {
        return "BEGIN NOT ATOMIC DECLARE renew_ids LONGTEXT; DECLARE renew_until DATETIME(6);"
                + " SET TRANSACTION ISOLATION LEVEL READ COMMITTED; START TRANSACTION;"
                + " SET STATEMENT group_concat_max_len = 4294967295 FOR SELECT JSON_ARRAYAGG(id) INTO renew_ids FROM ("
                + lockRowsOfGrants(held, grantIds) + ") locked;"
                + " SET renew_until = " + plusMicros(now()) + "; "
                + extendRowsOfGrants(held, grantIds, "renew_until", "renew_ids") + ";"
                + " SELECT ROW_COUNT(), renew_until; COMMIT; END";
    }
}
