package dev.locks.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.locks.LockHolder;
import dev.locks.LockKind;
import dev.locks.LockMode;
import dev.locks.LockPath;

/**
 * Finds the live grants that overlap a set of paths in one tenant: rows on the paths themselves
 * or their ancestors (by key, an index look-up per key) and rows in their subtrees (by an index
 * range {@code [p/, p0)}, since {@code '0'} follows {@code '/'}; no {@code LIKE}, so no character in
 * a path can widen or narrow the match). One {@code UNION ALL} branch per access path keeps every
 * branch on its own index.
 */
final class PathConflictQuery {

    static final String COLUMNS = "id, grant_id, owner_token, kind, tenant, path, lock_mode, node, thread, acquired_at, expires_at";

    private final SqlDialect dialect;

    private final LockTables tables;

    PathConflictQuery(SqlDialect dialect, LockTables tables) {
        this.dialect = dialect;
        this.tables = tables;
    }

    /** What each branch of {@link #appendBranches} selects. */
    enum Selected {
        /** The holder's columns, to name it. */
        HOLDERS,
        /** A constant: whether or how many rows there are. */
        CONSTANT,
        /**
         * {@link #HELD_MAX}: a semaphore grant's own max, null for a waiting row, a path or a
         * singleton, so that a count can take the smallest max among the grants it counted.
         */
        HELD_MAX
    }

    /** The column {@link Selected#HELD_MAX} selects. */
    static final String HELD_MAX = "held_max";

    /** No waiting rows: only grants count. */
    static final long NO_WAITERS = -1;

    /** Every live waiting row counts (a request that has not queued yet). */
    static final long ALL_WAITERS = 0;

    /** The clock of {@link #appendBranches} as a parameter that {@link #bind} sets. */
    static final String BOUND_CLOCK = "?";

    /**
     * Live rows overlapping the request's paths: grants, and waiting requests that queued before
     * {@code waitersBefore} ({@link #ALL_WAITERS}: all of them, {@link #NO_WAITERS}: none).
     *
     * @param keys the request's kind, paths and their keys
     * @param now the time rows must outlive, or null to read the database's clock in the query itself
     *            (one statement instead of a clock read and the query)
     * @param exceptOwner ignore this owner's rows (null: keep all)
     * @param onlyExclusive keep only exclusive rows (a shared request conflicts with nothing else)
     * @param limit the most rows to return
     */
    List<LockHolder> find(Connection connection, RequestKeys keys, Instant now, String exceptOwner,
            boolean onlyExclusive, long waitersBefore, int limit) throws SQLException {
        boolean autoCommit = connection.getAutoCommit();
        String lead = dialect.indexedPlansLead(autoCommit);
        try (PreparedStatement ps = prepare(connection, lead, keys, now, exceptOwner, onlyExclusive, waitersBefore, limit,
                dialect.indexedPlansEnd(autoCommit))) {
            List<LockHolder> holders = new ArrayList<>();
            StatementResults.readLed(lead, ps, rs -> holders.add(holder(rs)));
            return holders;
        }
    }

    /**
     * Whether any row {@link #find} would return exists: the same branches selecting a constant, so
     * the statement is half as long and no holder's columns are read when the way is free.
     *
     * @param lockClause null to read the statement's snapshot, or a locking read's clause
     *                   ({@link SqlDialect#lockingReadWithoutWaiting}) to read the grants' rows themselves
     */
    boolean exists(Connection connection, RequestKeys keys, Instant now, String exceptOwner, boolean onlyExclusive,
            long waitersBefore, String lockClause) throws SQLException {
        StringBuilder sql = new StringBuilder();
        appendBranches(sql, Selected.CONSTANT, clock(now), keys.kind(), keys.paths(), exceptOwner, onlyExclusive,
                waitersBefore, lockClause);
        sql.append(" LIMIT 1");
        try (PreparedStatement ps = connection.prepareStatement(sql.toString())) {
            bind(ps, 1, keys, now, exceptOwner, waitersBefore);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** The database's plan for {@link #find}, one line per row, so tests can check that no table is scanned. */
    List<String> explain(Connection connection, LockKind kind, String tenant, List<LockPath> paths, Instant now,
            String exceptOwner, boolean onlyExclusive, long waitersBefore) throws SQLException {
        List<String> plan = new ArrayList<>();
        try (PreparedStatement ps = prepare(connection, "EXPLAIN ", RequestKeys.of(kind, tenant, paths), now,
                exceptOwner, onlyExclusive, waitersBefore, 10, ""); ResultSet rs = ps.executeQuery()) {
            int columns = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                StringBuilder line = new StringBuilder();
                for (int c = 1; c <= columns; c++) {
                    line.append(rs.getMetaData().getColumnLabel(c)).append('=').append(rs.getString(c)).append(' ');
                }
                plan.add(line.toString());
            }
        }
        return plan;
    }

    private PreparedStatement prepare(Connection connection, String sqlPrefix, RequestKeys keys, Instant now,
            String exceptOwner, boolean onlyExclusive, long waitersBefore, int limit, String sqlSuffix)
            throws SQLException {
        StringBuilder sql = new StringBuilder(sqlPrefix);
        appendBranches(sql, Selected.HOLDERS, clock(now), keys.kind(), keys.paths(), exceptOwner, onlyExclusive,
                waitersBefore, null);
        sql.append(" ORDER BY id LIMIT ").append(limit).append(sqlSuffix);
        PreparedStatement ps = connection.prepareStatement(sql.toString());
        try {
            bind(ps, 1, keys, now, exceptOwner, waitersBefore);
            return ps;
        }
        catch (SQLException | RuntimeException ex) {
            ps.close();
            throw ex;
        }
    }

    /**
     * Appends the {@code UNION ALL} of one branch per access path: keys of the paths and their
     * ancestors, then one subtree range per path, for grants and (unless {@link #NO_WAITERS}) for
     * earlier waiters.
     *
     * @param selected what each branch selects
     * @param clock the time rows must outlive to count: {@link #BOUND_CLOCK}, bound by {@link #bind},
     *              or an SQL expression of the enclosing statement, which {@link #bind} then skips
     * @param lockClause null to read the statement's snapshot, or a locking read's clause
     *                   ({@link SqlDialect#lockingReadWithoutWaiting}), which then closes each branch
     *                   on the grants' table; every branch is then in parentheses of its own
     */
    void appendBranches(StringBuilder sql, Selected selected, String clock, LockKind kind, List<LockPath> paths,
            String exceptOwner, boolean onlyExclusive, long waitersBefore, String lockClause) {
        int keys = RequestKeys.keyCountOf(paths);
        String filter = (exceptOwner != null ? " AND owner_token <> ?" : "") + (onlyExclusive ? " AND lock_mode = 'X'" : "");
        // the waiting table is created like the held one, with indexes of the same names
        String byKey = dialect.readThrough(tables.keyIndex());
        String bySubtree = dialect.readThrough(tables.subtreeIndex());
        boolean first = true;
        for (String table : tableStates(waitersBefore)) {
            boolean waiting = table.equals(tables.waiting());
            String rowFilter = " AND " + dialect.leaseOutlives(clock) + filter + (waiting && waitersBefore > 0 ? " AND id < ?" : "");
            String select = "SELECT " + selectList(selected, kind, waiting) + " FROM " + table;
            if (!first) {
                sql.append(" UNION ALL ");
            }
            first = false;
            openBranch(sql, lockClause);
            sql.append(select).append(byKey).append(" WHERE lock_key IN (").append(SqlDialect.placeholders(keys)).append(')')
                    .append(rowFilter);
            closeBranch(sql, lockClause, !waiting);
            if (kind == LockKind.PATH) {
                for (int i = 0; i < paths.size(); i++) {
                    sql.append(" UNION ALL ");
                    openBranch(sql, lockClause);
                    sql.append(select).append(bySubtree).append(" WHERE scope_key = ? AND ").append(dialect.subtree()).append(rowFilter);
                    closeBranch(sql, lockClause, !waiting);
                }
            }
        }
    }

    private static String selectList(Selected selected, LockKind kind, boolean waiting) {
        if (selected == Selected.HOLDERS) {
            return COLUMNS + ", '" + (waiting ? 'W' : 'H') + "' AS row_state";
        }
        if (selected == Selected.CONSTANT) {
            return "1";
        }
        return (waiting || kind != LockKind.SEMAPHORE ? "NULL" : "permits") + " AS " + HELD_MAX;
    }

    /**
     * Binds what {@link #appendBranches} wrote for the request whose keys are {@code keys}, from
     * parameter {@code index}; returns the next index.
     *
     * @param now the time for {@link #BOUND_CLOCK}, or null where the branches read the clock in SQL
     */
    int bind(PreparedStatement ps, int index, RequestKeys keys, Instant now, String exceptOwner, long waitersBefore)
            throws SQLException {
        int i = index;
        List<byte[]> lockKeys = keys.lockKeys();
        for (String table : tableStates(waitersBefore)) {
            long before = table.equals(tables.waiting()) ? waitersBefore : 0;
            for (byte[] key : lockKeys) {
                ps.setBytes(i++, key);
            }
            i = bindFilter(ps, i, now, exceptOwner, before);
            if (keys.kind() == LockKind.PATH) {
                for (LockPath path : keys.paths()) {
                    ps.setBytes(i++, keys.scope());
                    i = dialect.bindSubtree(ps, i, subtreeLow(path), subtreeHigh(path));
                    i = bindFilter(ps, i, now, exceptOwner, before);
                }
            }
        }
        return i;
    }

    /** The clock of a query: bound to {@code now}, or the database's own where {@code now} is null. */
    private String clock(Instant now) {
        return now != null ? BOUND_CLOCK : dialect.now();
    }

    // a locking clause applies to one SELECT of a UNION only inside parentheses of its own
    private static void openBranch(StringBuilder sql, String lockClause) {
        if (lockClause != null) {
            sql.append('(');
        }
    }

    /**
     * @param lockRows whether the branch locks its rows: only grants exclude, so a waiting row that a
     *                 snapshot misses costs fairness, not exclusion, and is read without locks
     */
    private static void closeBranch(StringBuilder sql, String lockClause, boolean lockRows) {
        if (lockClause != null) {
            sql.append(lockRows ? lockClause : "").append(')');
        }
    }

    private List<String> tableStates(long waitersBefore) {
        return waitersBefore == NO_WAITERS ? List.of(tables.held()) : List.of(tables.held(), tables.waiting());
    }

    /**
     * Live rows on exactly one key (semaphore permits, singletons), grants first, then earlier waiters,
     * with the smallest {@code max} among the grants that were read.
     *
     * @param now the time rows must outlive, or null to read the database's clock in the query itself
     * @param lockClause null to read the statement's snapshot, or a locking read's clause
     *                   ({@link SqlDialect#lockingReadWithoutWaiting}) to read the grants' rows themselves
     */
    KeyRows onKey(Connection connection, byte[] key, Instant now, long waitersBefore, int limit, String lockClause)
            throws SQLException {
        String live = dialect.readThrough(tables.keyIndex()) + " WHERE lock_key = ? AND " + dialect.leaseOutlives(clock(now));
        boolean autoCommit = connection.getAutoCommit();
        String lead = dialect.indexedPlansLead(autoCommit);
        StringBuilder sql = new StringBuilder(lead);
        openBranch(sql, lockClause);
        sql.append("SELECT ").append(COLUMNS).append(", permits, 'H' AS row_state FROM ").append(tables.held()).append(live);
        closeBranch(sql, lockClause, true);
        if (waitersBefore != NO_WAITERS) {
            sql.append(" UNION ALL ");
            openBranch(sql, lockClause);
            sql.append("SELECT ").append(COLUMNS).append(", permits, 'W' AS row_state FROM ").append(tables.waiting())
                    .append(live).append(waitersBefore > 0 ? " AND id < ?" : "");
            closeBranch(sql, lockClause, false);
        }
        sql.append(" ORDER BY row_state, id LIMIT ").append(limit).append(dialect.indexedPlansEnd(autoCommit));
        try (PreparedStatement ps = connection.prepareStatement(sql.toString())) {
            int i = 1;
            ps.setBytes(i++, key);
            if (now != null) {
                dialect.setTime(ps, i++, now);
            }
            if (waitersBefore != NO_WAITERS) {
                ps.setBytes(i++, key);
                if (now != null) {
                    dialect.setTime(ps, i++, now);
                }
                if (waitersBefore > 0) {
                    ps.setLong(i, waitersBefore);
                }
            }
            List<LockHolder> rows = new ArrayList<>();
            int[] smallestHeldMax = { Integer.MAX_VALUE };
            StatementResults.readLed(lead, ps, rs -> {
                LockHolder row = holder(rs);
                if (!row.waiting()) {
                    smallestHeldMax[0] = Math.min(smallestHeldMax[0], rs.getInt("permits"));
                }
                rows.add(row);
            });
            return new KeyRows(rows, smallestHeldMax[0]);
        }
    }

    /**
     * The rows of {@link #onKey}.
     *
     * @param smallestHeldMax the smallest {@code max} among the grants in {@code rows}
     *                        ({@link Integer#MAX_VALUE} if none); exact for the key whenever the
     *                        grants are fewer than the limit of rows read
     */
    record KeyRows(List<LockHolder> rows, int smallestHeldMax) {
    }

    /**
     * How many rows on its key make a semaphore request busy (it takes a permit only while it finds
     * fewer), in SQL over {@code clock}: its own max, or the smallest max among the key's live grants
     * if that is smaller.
     * Nodes may disagree on a semaphore's max (during a rolling change of it), and a grant must not
     * give any holder more company than its own max allows. Bound by {@link #bindPermitLimit}.
     * It reads the statement's snapshot, so it serves where the count does too; a count by a
     * locking read ({@link SqlDialect#lockingReadWithoutWaiting}) takes the smallest max from the
     * rows it read ({@link #onKey}, {@link Selected#HELD_MAX}), since a snapshot may miss a permit
     * whose grant is still committing.
     */
    String permitLimit(String clock) {
        return "(SELECT COALESCE(LEAST(MIN(permits), ?), ?) FROM " + tables.held() + " WHERE lock_key = ? AND "
                + dialect.leaseOutlives(clock) + ")";
    }

    /**
     * Binds {@link #permitLimit} from parameter {@code index}; returns the next index.
     *
     * @param now the time for {@link #BOUND_CLOCK}, or null where the clock is an SQL expression
     */
    int bindPermitLimit(PreparedStatement ps, int index, byte[] key, int permits, Instant now) throws SQLException {
        int i = index;
        ps.setInt(i++, permits);
        ps.setInt(i++, permits);
        ps.setBytes(i++, key);
        if (now != null) {
            dialect.setTime(ps, i++, now);
        }
        return i;
    }

    private int bindFilter(PreparedStatement ps, int i, Instant now, String exceptOwner, long before)
            throws SQLException {
        if (now != null) {
            dialect.setTime(ps, i++, now);
        }
        if (exceptOwner != null) {
            ps.setString(i++, exceptOwner);
        }
        if (before > 0) {
            ps.setLong(i++, before);
        }
        return i;
    }

    LockHolder holder(ResultSet rs) throws SQLException {
        return new LockHolder(rs.getLong("id"), LockKind.ofCode(rs.getString("kind").charAt(0)),
                dialect.getText(rs, "tenant"), dialect.getText(rs, "path"),
                "X".equals(rs.getString("lock_mode")) ? LockMode.EXCLUSIVE : LockMode.SHARED,
                rs.getString("node"), rs.getString("thread"), dialect.getTime(rs, "acquired_at"),
                dialect.getTime(rs, "expires_at"), rs.getString("owner_token").substring(0, 8),
                "W".equals(rs.getString("row_state")));
    }

    /**
     * Every path strictly below {@code path} is {@code >= path + "/"} ... For the root that is
     * {@code "/ "}: the root itself must stay out, and no path has a control character below ' '.
     */
    static String subtreeLow(LockPath path) {
        return path.isRoot() ? "/ " : path.value() + "/";
    }

    /** ... and {@code < path + "0"}, since '0' is the character right after '/'. */
    static String subtreeHigh(LockPath path) {
        return path.isRoot() ? "0" : path.value() + "0";
    }
}
