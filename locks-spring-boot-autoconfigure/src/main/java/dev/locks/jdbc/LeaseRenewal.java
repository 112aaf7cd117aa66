package dev.locks.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.locks.store.Grant;

/**
 * Extends the leases of held grants, {@value #CHUNK} at a time. Each chunk first locks its rows and
 * only then extends the leases that are still alive, judged by the database's clock after that wait:
 * a statement that waits for a row lock keeps the verdict of a clock read before the wait (MariaDB's
 * statement clock stands at its start; PostgreSQL re-checks only rows that were changed meanwhile),
 * so a renewal held up past the lease would revive a grant that another node may have replaced.
 * The rows are found through the grant index, and MySQL/MariaDB lock them in that index's order
 * whatever the {@code ORDER BY}: a chunk holding two expired grants can deadlock with the purge,
 * which deletes in id order. The database then rolls one back, and it is retried.
 * <p>
 * Grants whose release joined a caller's transaction that is still open are left out
 * ({@link JoinedReleases}): that transaction holds their rows.
 * <p>
 * Where the dialect can ({@link SqlDialect#renewalTrip}) a chunk takes one round trip; otherwise
 * a transaction of a locking {@code SELECT}, a clock read and the {@code UPDATE}.
 */
final class LeaseRenewal {

    static final int CHUNK = 500;

    private final SqlDialect dialect;

    private final LockTables tables;

    private final StoreTransactions transactions;

    private final JoinedReleases joinedReleases;

    /** The statements of each slot count, built at its first renewal rather than at every one. */
    private final Map<Integer, Statements> statements = new ConcurrentHashMap<>();

    LeaseRenewal(SqlDialect dialect, LockTables tables, StoreTransactions transactions, JoinedReleases joinedReleases) {
        this.dialect = dialect;
        this.tables = tables;
        this.transactions = transactions;
        this.joinedReleases = joinedReleases;
    }

    /**
     * @return the new lease end of each grant renewed; grants missing from the map are lost, or
     *         released in a caller's transaction that has not ended
     */
    Map<String, Instant> renew(Collection<Grant> grants, Duration lease) {
        Map<String, Instant> renewed = new HashMap<>();
        List<Grant> all = new ArrayList<>(grants);
        for (int from = 0; from < all.size(); from += CHUNK) {
            renewed.putAll(renewChunk(all.subList(from, Math.min(all.size(), from + CHUNK)), lease));
        }
        return renewed;
    }

    /**
     * How many grant ids a chunk's statements take: the chunk's size rounded up to a power of two,
     * at most {@link #CHUNK}, the last id repeated in the slots left over ({@code IN} counts a row
     * once). So each renewal statement comes in ten sizes, not one per chunk size, and a driver that
     * keeps statements prepared on the server (Connector/J with {@code cachePrepStmts}) keeps ten of each,
     * instead of filling its cache, the heap and the server's {@code max_prepared_stmt_count} with
     * statements of hundreds of parameters that are seldom used again.
     */
    static int slots(int size) {
        int slots = 1;
        while (slots < size) {
            slots <<= 1;
        }
        return Math.min(slots, CHUNK);
    }

    /**
     * A renewal's statements for one slot count.
     *
     * @param trip the renewal in one round trip, or null where the dialect has none
     * @param lockRows the locking read of the rows
     * @param extendRows the {@code UPDATE} that extends them
     * @param renewedRows how many rows of each grant now last until a given time
     */
    private record Statements(String trip, String lockRows, String extendRows, String renewedRows) {
    }

    private Statements statementsFor(List<Grant> chunk) {
        return statements.computeIfAbsent(slots(chunk.size()), n -> {
            String grantIds = SqlDialect.placeholders(n);
            return new Statements(dialect.renewalTrip(tables.held(), grantIds),
                    dialect.lockRowsOfGrants(tables.held(), grantIds),
                    dialect.extendRowsOfGrants(tables.held(), grantIds, "?", dialect.extendsLockedRowsById() ? "?" : null),
                    "SELECT grant_id, COUNT(*) FROM " + tables.held() + " WHERE grant_id IN (" + grantIds
                            + ") AND expires_at >= ? GROUP BY grant_id");
        });
    }

    private Map<String, Instant> renewChunk(List<Grant> chunk, Duration lease) {
        if (statementsFor(chunk).trip() != null) {
            // null where the pool's connections are not in auto-commit, which the trip needs
            Map<String, Instant> renewed = transactions.inBlock("renew leases", connection ->
                    whileRenewing(chunk, renewable -> renewInOneTrip(connection, renewable, lease)));
            if (renewed != null) {
                return renewed;
            }
        }
        // Renewals run in transactions at the grant transactions' isolation (READ COMMITTED on
        // MySQL/MariaDB: under the pool's REPEATABLE READ their range updates took gap locks that
        // blocked and deadlocked with concurrent grants, and under load leases lapsed while renewals waited)
        return transactions.isolated("renew leases", connection ->
                whileRenewing(chunk, renewable -> renewInTransaction(connection, renewable, lease)));
    }

    /** The renewal of some grants on a connection already held. */
    @FunctionalInterface
    private interface ChunkRenewal {

        Map<String, Instant> renew(List<Grant> renewable) throws SQLException;
    }

    /**
     * Renews the grants of {@code chunk} whose release has not joined a transaction still open,
     * known to {@link JoinedReleases} as under renewal meanwhile. Called once the connection is
     * held: a joined release waiting for this renewal holds a connection of the same pool, and
     * must never wait for a renewal that waits for a connection.
     */
    private Map<String, Instant> whileRenewing(List<Grant> chunk, ChunkRenewal renewal) throws SQLException {
        List<Grant> renewable = joinedReleases.renewalStarting(chunk);
        try {
            return renewable.isEmpty() ? Map.of() : renewal.renew(renewable);
        }
        finally {
            joinedReleases.renewalEnded(renewable);
        }
    }

    private Map<String, Instant> renewInOneTrip(Connection connection, List<Grant> chunk, Duration lease)
            throws SQLException {
        TripAnswer answer = new TripAnswer();
        try (PreparedStatement ps = connection.prepareStatement(statementsFor(chunk).trip())) {
            int i = bindIds(ps, 1, chunk);
            ps.setLong(i++, lease.toNanos() / 1000);
            bindIds(ps, i, chunk);
            // the transaction's framing and the locking statement may answer too: the renewal's answer has two columns
            StatementResults.read(ps, (n, rs) -> {
                if (rs.getMetaData().getColumnCount() == 2) {
                    answer.updated = rs.getInt(1);
                    answer.until = dialect.getTime(rs, 2);
                }
            });
        }
        if (answer.until == null) {
            throw new SQLException("The renewal statement answered no expiry");
        }
        return renewedOf(connection, chunk, answer.updated, answer.until);
    }

    /** What a renewal in one round trip answered: the rows extended and their new expiry. */
    private static final class TripAnswer {

        private int updated = -1;

        private Instant until;
    }

    private Map<String, Instant> renewInTransaction(Connection connection, List<Grant> chunk, Duration lease)
            throws SQLException {
        Statements sql = statementsFor(chunk);
        List<Long> locked = new ArrayList<>();
        try (PreparedStatement ps = connection.prepareStatement(sql.lockRows())) {
            bindIds(ps, 1, chunk);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    locked.add(rs.getLong(1));
                }
            }
        }
        Instant now = dialect.currentTime(connection).truncatedTo(ChronoUnit.MICROS);
        Instant until = now.plus(lease).truncatedTo(ChronoUnit.MICROS);
        int updated;
        try (PreparedStatement ps = connection.prepareStatement(sql.extendRows())) {
            int i = 1;
            if (dialect.extendsLockedRowsById()) {
                ps.setString(i++, locked.toString());
            }
            dialect.setTime(ps, i++, until);
            bindIds(ps, i, chunk);
            updated = ps.executeUpdate();
        }
        return renewedOf(connection, chunk, updated, until);
    }

    /**
     * All of the chunk when every row was extended; otherwise the grants all of whose rows now last
     * until {@code until} or later: those this renewal found alive. A grant with one row left short
     * is not renewed, since the paths of that row would lapse while its handle believed them held.
     */
    private Map<String, Instant> renewedOf(Connection connection, List<Grant> chunk, int updated, Instant until)
            throws SQLException {
        Map<String, Instant> renewed = new HashMap<>();
        int expected = chunk.stream().mapToInt(Grant::rows).sum();
        if (updated == expected) {
            chunk.forEach(g -> renewed.put(g.grantId(), until));
            return renewed;
        }
        Map<String, Integer> rows = new HashMap<>();
        chunk.forEach(g -> rows.put(g.grantId(), g.rows()));
        try (PreparedStatement ps = connection.prepareStatement(statementsFor(chunk).renewedRows())) {
            int i = bindIds(ps, 1, chunk);
            dialect.setTime(ps, i, until);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (rs.getInt(2) == rows.get(rs.getString(1))) {
                        renewed.put(rs.getString(1), until);
                    }
                }
            }
        }
        return renewed;
    }

    /** Binds the ids of {@code chunk} into its {@link #slots}; returns the next index. */
    private static int bindIds(PreparedStatement ps, int index, List<Grant> chunk) throws SQLException {
        int i = index;
        for (Grant grant : chunk) {
            ps.setString(i++, grant.grantId());
        }
        String last = chunk.get(chunk.size() - 1).grantId();
        for (int slot = chunk.size(), slots = slots(chunk.size()); slot < slots; slot++) {
            ps.setString(i++, last);
        }
        return i;
    }
}
