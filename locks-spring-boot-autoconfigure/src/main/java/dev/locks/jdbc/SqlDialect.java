package dev.locks.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Collections;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.Locale;

import javax.sql.DataSource;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.locks.LockKind;

/**
 * What differs between databases: how conflicting acquisitions are serialised, the clock, text and
 * time types, and the subtree range. All other SQL is shared and lives in {@link JdbcLockStore},
 * {@link PathConflictQuery} and {@link LeaseRenewal}. One subclass per database.
 */
public abstract class SqlDialect {

    private static final Logger log = LoggerFactory.getLogger(SqlDialect.class);

    /** One key to lock while a grant is checked and written. */
    record NodeLock(byte[] key, boolean exclusive) {
    }

    /** @return {@code n} comma-separated parameter markers, for an {@code IN (...)} list */
    static String placeholders(int n) {
        return String.join(",", Collections.nCopies(n, "?"));
    }

    /** @return the dialect's name, also the suffix of its schema script */
    public abstract String name();

    /** @return the classpath location of the schema script, with {@code ${prefix}} placeholders */
    public String schemaResource() {
        return "dev/locks/jdbc/schema-" + name() + ".sql";
    }

    /**
     * @return false where {@link #now()} stands still for a whole transaction (H2): maintenance
     *         statements then run in auto-commit, since a renewal in a long transaction could judge a
     *         lapsed lease by a clock from before it lapsed
     */
    boolean clockMovesInTransactions() {
        return true;
    }

    /**
     * Runs {@code work} so that the database plans each of its statements for that run, with the lock
     * tables as they are then, where it would otherwise go on with a plan made when they were far
     * smaller. By default the work just runs. Planning every run costs time: frequent statements use
     * {@link #indexedPlansLead} instead.
     */
    <T> T plannedPerRun(Connection connection, StoreTransactions.SqlWork<T> work) throws SQLException {
        return work.run(connection);
    }

    /**
     * What a frequent statement is sent after in the same execution, so that the database plans it on
     * the lock tables' indexes whatever it planned when they were small; it yields one result set, and
     * {@link #indexedPlansEnd} follows the statement. Empty (the default) where none is needed. Callers
     * tell a transaction from auto-commit by the JDBC flag, so a dialect with a lead must not {@link
     * #startsTransactionsWithStatements start transactions with statements} nor {@link
     * #groupsGrantsInBlocks group grants in blocks}.
     *
     * @param openTransaction whether the lead is to open a transaction for the statement, on a connection
     *                        of the store's own in auto-commit: {@link #indexedPlansEnd} commits it, and a
     *                        failure leaves it open ({@link #endTransaction} rolls it back). Otherwise the
     *                        statement runs in the connection's transaction, perhaps the caller's, which the
     *                        lead and end leave as they found it
     */
    String indexedPlansLead(boolean openTransaction) {
        return "";
    }

    /** What follows a statement sent after {@link #indexedPlansLead}; it yields no more than one result set. */
    String indexedPlansEnd(boolean openTransaction) {
        return "";
    }

    /** Called after auto-commit was switched off, before the first statement of a grant transaction. */
    void beginTransaction(Connection connection) throws SQLException {
    }

    /**
     * Where switching the JDBC auto-commit flag costs a round trip each way (MySQL Connector/J sends
     * {@code SET autocommit}), the dialect may run a transaction with statements instead, on a
     * connection left in auto-commit: {@link #startTransaction}, then {@link #endTransaction}.
     *
     * @return true if it does
     */
    boolean startsTransactionsWithStatements() {
        return false;
    }

    /** Starts a transaction on a connection in auto-commit, at the grant transactions' isolation. */
    void startTransaction(Connection connection) throws SQLException {
        throw new UnsupportedOperationException(name() + " uses the JDBC auto-commit flag");
    }

    /**
     * Commits or rolls back a transaction begun with statements on a connection in auto-commit: by
     * {@link #startTransaction}, a pipelined grant or a block grant.
     */
    void endTransaction(Connection connection, boolean commit) throws SQLException {
        throw new UnsupportedOperationException(name() + " uses the JDBC auto-commit flag");
    }

    /**
     * Serialises this transaction against every other grant transaction that could conflict with
     * it: shared on the ancestors, exclusive on the requested paths, taken in path order (where locks
     * cannot be shared, {@link #sharesNodeLocks}, {@code locks} is the tenant's root alone).
     *
     * @return the database's time once the locks are held
     */
    abstract Instant serialise(Connection connection, LockTables tables, List<NodeLock> locks) throws SQLException;

    /** @return an SQL expression for the database's current time, in UTC */
    abstract String now();

    /** @return an SQL expression adding {@code ?} microseconds to {@code column} */
    abstract String plusMicros(String column);

    /**
     * A hint after a table name that makes the statement read the table through {@code index}, or
     * nothing where the planner needs no hint. A conflict count is a locking read on MySQL/MariaDB,
     * so a plan that scans the table would lock every live grant's row and wait for any grant or
     * release in flight.
     */
    String readThrough(String index) {
        return "";
    }

    /** @return the condition selecting a subtree; bound by {@link #bindSubtree} */
    abstract String subtree();

    /** Binds {@link #subtree()}: paths {@code >= low} and {@code < high}; returns the next index. */
    int bindSubtree(PreparedStatement ps, int index, String low, String high) throws SQLException {
        setText(ps, index++, low);
        setText(ps, index++, high);
        return index;
    }

    void setText(PreparedStatement ps, int index, String value) throws SQLException {
        ps.setString(index, value);
    }

    String getText(ResultSet rs, String column) throws SQLException {
        return rs.getString(column);
    }

    void setTime(PreparedStatement ps, int index, Instant value) throws SQLException {
        ps.setObject(index, OffsetDateTime.ofInstant(value, ZoneOffset.UTC));
    }

    Instant getTime(ResultSet rs, String column) throws SQLException {
        return rs.getObject(column, OffsetDateTime.class).toInstant();
    }

    Instant getTime(ResultSet rs, int column) throws SQLException {
        return rs.getObject(column, OffsetDateTime.class).toInstant();
    }

    /**
     * Whether a grant is sent as one execution of several statements that begin and commit one
     * transaction, on a connection in auto-commit: {@link #pipelinedSerialise}, then {@code INSERT ...
     * SELECT ... WHERE NOT EXISTS (conflicts)}, then {@link #pipelinedEnd}. Only where each statement
     * takes its snapshot when it starts, so after the serialising statement's locks are held, and the
     * insert locks none of the rows it reads.
     *
     * @return true if grants take one round trip
     */
    boolean pipelinesGrants() {
        return false;
    }

    /**
     * The first statements of a pipelined grant, each ending with {@code ;}: the start of a READ
     * COMMITTED transaction, then the serialising statement, whose one row holds the time once the
     * locks are held. Bound by {@link #bindSerialise}.
     */
    String pipelinedSerialise() {
        throw new UnsupportedOperationException(name() + " does not pipeline grants");
    }

    /** The last statement of a pipelined grant, which commits it; starts with {@code ;}. */
    String pipelinedEnd() {
        throw new UnsupportedOperationException(name() + " does not pipeline grants");
    }

    /** Binds {@link #pipelinedSerialise} from parameter {@code index}; returns the next index. */
    int bindSerialise(Connection connection, PreparedStatement ps, int index, List<NodeLock> locks) throws SQLException {
        throw new UnsupportedOperationException(name() + " does not pipeline grants");
    }

    /**
     * What keeps nodes that create the lock tables at the same moment from failing each other: a
     * statement taking a lock on the number bound to its one parameter, run first in the transaction
     * that then runs the schema script. PostgreSQL's {@code CREATE ... IF NOT EXISTS} is not safe
     * against a concurrent creation of the same name, and its DDL is transactional, so the second
     * node waits and then finds every table there. Null where DDL commits at once (MySQL, H2): the
     * script then runs in auto-commit.
     *
     * @return the locking statement, or null
     */
    String schemaCreationLock() {
        return null;
    }

    /**
     * Whether a release may join a caller's transaction at REPEATABLE READ or SERIALIZABLE: its
     * {@code DELETE} must find the latest committed rows, as InnoDB's locking reads do. Where it
     * works on the transaction's snapshot (PostgreSQL, H2) it misses a grant committed after the
     * snapshot, and fails on rows a renewal updated since; such a release waits for the end of the
     * caller's transaction instead.
     *
     * @return true if the release joins transactions of any isolation level
     */
    boolean releasesInSnapshotTransactions() {
        return false;
    }

    /**
     * Whether a grant is sent as one compound statement that opens, serialises and commits its own
     * transaction (MariaDB's {@code BEGIN NOT ATOMIC}): {@link #blockOpening}, the counts of
     * {@link #blockCounts}, the insert (its times {@link #blockTimes}), {@link #blockClosing}. Its one
     * result row holds the fencing token, the expiry and the time, or nulls and the time when busy.
     *
     * @return true if grants take one round trip as a block
     */
    boolean groupsGrantsInBlocks() {
        return false;
    }

    /** The block grant's variable holding the database's time once the locks are held. */
    String blockClock() {
        throw new UnsupportedOperationException(name() + " does not group grants in blocks");
    }

    /**
     * The start of a block grant, up to its {@link #blockCounts counts}; bound by {@link #bindBlockOpening}, then
     * by the parameters of {@code releasing}.
     *
     * @param releasing a statement releasing a grant once the locks are held (a hand-off), or null;
     *                  {@link #blockClosing} answers its count
     */
    String blockOpening(LockTables tables, List<NodeLock> locks, String releasing) {
        throw new UnsupportedOperationException(name() + " does not group grants in blocks");
    }

    /**
     * Binds {@link #blockOpening} from parameter {@code index}; returns the next index.
     *
     * @param limit how many counted rows make the grant busy: one, or a semaphore's max, which the
     *              smallest max among its grants ({@link PathConflictQuery.Selected#HELD_MAX}) may lower
     */
    int bindBlockOpening(PreparedStatement ps, int index, Duration lease, int limit, List<NodeLock> locks)
            throws SQLException {
        throw new UnsupportedOperationException(name() + " does not group grants in blocks");
    }

    /**
     * The counts of conflicts in a block grant, in order, each of the conflict branches read with its
     * {@link BlockCount#lockClause}; the last leaves the block where the insert goes, if the counts
     * allow it. They follow {@link #lockingReadWithoutWaiting}: a locking read that does not wait,
     * and where a row was locked, the snapshot, a locking read that waits a bounded time, and the
     * snapshot once more.
     */
    List<BlockCount> blockCounts() {
        throw new UnsupportedOperationException(name() + " does not group grants in blocks");
    }

    /**
     * One count of a block grant: {@code start}, the conflict branches read with {@code lockClause}
     * (null: by the snapshot), each selecting {@link PathConflictQuery.Selected#HELD_MAX}, {@code end}.
     * Its parameters are those of the branches, then the most conflicting rows counted (1 for a
     * path, the permits for a semaphore).
     */
    record BlockCount(String start, String lockClause, String end) {
    }

    /**
     * The clause that makes a grant's count of conflicts a locking read that fails at once on a row
     * another transaction holds, or null where a snapshot taken once the grant's node locks are held
     * always shows the grants before it. A locking read sees the rows themselves, so its count decides
     * the grant; if a row was locked ({@link #isLockNotAvailable}), the grant counts by its snapshot,
     * and if that finds the way free, by a {@link #lockingRead locking read that waits a bounded
     * time}, and if a row stays locked past the bound, by a snapshot once more (see
     * {@link MySqlDialect}).
     *
     * @param connection the grant's connection, whose server may decide the syntax
     * @return the clause, with a leading space, or null
     * @throws SQLException if the server cannot be told
     */
    String lockingReadWithoutWaiting(Connection connection) throws SQLException {
        return null;
    }

    /**
     * The clause of the locking read that waits a bounded time for a locked row
     * ({@link #lockingReadWithoutWaiting}), or null where the database has no such bound and the
     * snapshot's count stands.
     *
     * @param connection the grant's connection, whose server may decide the syntax
     * @return the clause, with a leading space, or null
     * @throws SQLException if the server cannot be told
     */
    String lockingRead(Connection connection) throws SQLException {
        return null;
    }

    /**
     * The condition that a lock row's lease outlives {@code time} (an SQL expression), as the conflict
     * queries, releases and a waiting request's renewal state it: in a form the planner cannot read an
     * index by, where that matters. A statement that locks the rows it reads (a
     * {@link #lockingReadWithoutWaiting locking count}, a release's {@code DELETE}) locks every record
     * of the index range it scans, and the first one past its end. On a range of lease ends (the
     * expiry index, or the key index after the key) that is every live grant in the table, or the
     * grant whose key sorts next, and the statement waits for any of them that another transaction
     * holds: a grant still being written, or a release in a caller's transaction that is still open,
     * for as long as that stays open. A look-up on the key or the grant id alone stops at its last
     * row; one on a subtree locks the row after the subtree's range (a known cost, BENCHMARKS.md).
     * A snapshot read gains too: the planner cannot pick the expiry index, which holds every live
     * grant, for a look-up by key or subtree.
     */
    String leaseOutlives(String time) {
        return "expires_at > " + time;
    }

    /**
     * Whether {@code ex} is a locking read that gave up on a row another transaction held, leaving
     * the grant's transaction open.
     */
    boolean isLockNotAvailable(Connection connection, SQLException ex) throws SQLException {
        return false;
    }

    /** The acquired and expiry times of a block grant's rows, in SQL. */
    String blockTimes() {
        throw new UnsupportedOperationException(name() + " does not group grants in blocks");
    }

    /**
     * Ends a block grant after its insert: answers token, expiry, time and the rows of the release
     * (0 without one), commits and closes the block.
     */
    String blockClosing() {
        throw new UnsupportedOperationException(name() + " does not group grants in blocks");
    }

    /**
     * Locks the held rows of some grants and answers their ids; in id order where the database
     * follows the {@code ORDER BY} (MySQL/MariaDB lock in the order of the grant index).
     *
     * @param held the held table
     * @param grantIds the placeholders of the grant ids, the statement's only parameters
     */
    String lockRowsOfGrants(String held, String grantIds) {
        return "SELECT id FROM " + held + " WHERE grant_id IN (" + grantIds + ") ORDER BY id FOR UPDATE";
    }

    /**
     * Extends the rows of some grants that are still live by the clock when it runs, never
     * shortening one. Runs after {@link #lockRowsOfGrants} in the same transaction. Its parameters:
     * those of {@code lockedRowIds}, then of {@code until}, then the grant ids.
     *
     * @param held the held table
     * @param grantIds the placeholders of the grant ids
     * @param until the SQL of the new expiry
     * @param lockedRowIds the SQL of a JSON array of the ids that {@link #lockRowsOfGrants} answered,
     *        where {@link #extendsLockedRowsById}; otherwise null
     */
    String extendRowsOfGrants(String held, String grantIds, String until, String lockedRowIds) {
        return "UPDATE " + held + " SET expires_at = GREATEST(expires_at, " + until + ") WHERE grant_id IN ("
                + grantIds + ") AND expires_at > " + now();
    }

    /** @return true if {@link #extendRowsOfGrants} finds its rows by the ids that were locked */
    boolean extendsLockedRowsById() {
        return false;
    }

    /**
     * Deletes up to 5,000 expired held rows, oldest first, passing over rows another transaction
     * has locked. Those may be held until a caller's transaction ends, however long (a release that
     * joined it), and the purge runs on the watchdog's thread: waiting for them would hold up every
     * renewal of the node. A renewal under way keeps its rows the same way. The expiry is judged
     * again on the locked row. Parameters: the time, twice.
     *
     * @param held the held table
     */
    String deleteExpired(String held) {
        return "DELETE FROM " + held + " WHERE id IN (SELECT id FROM " + held
                + " WHERE expires_at <= ? ORDER BY id LIMIT 5000 FOR UPDATE SKIP LOCKED) AND expires_at <= ?";
    }

    /**
     * A lease renewal in one round trip on a connection in auto-commit: it begins a READ COMMITTED
     * transaction, runs {@link #lockRowsOfGrants}, reads the clock once those row locks are held and
     * adds the lease to it, runs {@link #extendRowsOfGrants} with that expiry, and commits. Its only
     * result set of two columns holds one row: the rows extended and the expiry. Parameters: the
     * grant ids, the lease in microseconds, the grant ids.
     *
     * @param held the held table
     * @param grantIds the placeholders of the grant ids
     * @return the statement, or null where a renewal is a transaction of several statements
     */
    String renewalTrip(String held, String grantIds) {
        return null;
    }

    /** @return true if grant transactions serialise on rows of the node table */
    boolean usesNodeTable() {
        return false;
    }

    /**
     * @return the parameter of a 32-byte key in a {@code VALUES} row, cast where the database would
     *         otherwise give the row's column the type of text (H2, whose {@code INSERT ... SELECT}
     *         from such rows then stores the bytes decoded as UTF-8)
     */
    String keyParameter() {
        return "?";
    }

    /**
     * @return true where a grant transaction inserts its rows and checks for conflicts in one
     *         {@code INSERT ... SELECT ... WHERE NOT EXISTS}; false where it could cost more than the two
     *         (InnoDB takes its table-level auto-increment lock for an {@code INSERT ... SELECT} under
     *         {@code innodb_autoinc_lock_mode} 0 and 1, MariaDB's default; MySQL 8 defaults to 2)
     */
    boolean insertsUnlessConflicting() {
        return false;
    }

    /**
     * @return false where the database has no shared row locks (H2): ancestors would be locked
     *         exclusively too, the root's row among them for every path, so a path grant locks that
     *         row alone, and a tenant's path grants take turns
     */
    boolean sharesNodeLocks() {
        return true;
    }

    /**
     * A statement that runs {@code modification} (a DELETE or UPDATE of lock rows) and tells other
     * nodes listening on {@code channel} about the tenants touched where requests wait in
     * {@code waitTable}, in one round trip; its one row holds the update count.
     *
     * @param origin the store that sends the notice, {@link ReleaseOrigin#ANY} for every listener
     * @param lazyCommit for a statement in auto-commit only: let its transaction's commit return before
     *                   it is flushed to disk where the database allows that per transaction
     * @return the statement, or null where the database has no notifications (waiters poll)
     */
    String notifying(String modification, String channel, String waitTable, ReleaseOrigin origin, boolean lazyCommit) {
        return null;
    }

    /**
     * Starts listening for releases of other nodes, where the database can notify.
     *
     * @param self the listening store: its own notices are left out, since it woke its waiters itself
     * @return the running listener, or null where waiters must poll
     */
    ReleaseListener listen(DataSource dataSource, String channel, ReleaseOrigin self,
            BiConsumer<LockKind, String> subscriber) {
        return null;
    }

    /** Deletes old node rows, if the dialect keeps any; they are recreated on demand. */
    int purgeNodes(Connection connection, LockTables tables, Instant before) throws SQLException {
        if (!usesNodeTable()) {
            return 0;
        }
        try (PreparedStatement ps = connection.prepareStatement("DELETE FROM " + tables.node()
                + " WHERE created_at < ? LIMIT 5000")) {
            setTime(ps, 1, before);
            return ps.executeUpdate();
        }
    }

    /** @return true for failures that only mean "try the transaction again" (deadlock, serialisation, lock timeout) */
    boolean isRetryable(SQLException ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql) {
                String state = sql.getSQLState();
                if ("40001".equals(state) || "40P01".equals(state)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Reads the database's current time. */
    Instant currentTime(Connection connection) throws SQLException {
        try (Statement st = connection.createStatement(); ResultSet rs = st.executeQuery("SELECT " + now())) {
            rs.next();
            return getTime(rs, 1);
        }
    }

    /**
     * Picks the dialect from the connection's metadata.
     *
     * @param dataSource the lock store's DataSource
     * @return the dialect
     * @throws IllegalStateException for an unsupported database
     */
    public static SqlDialect detect(DataSource dataSource) {
        try (Connection connection = dataSource.getConnection()) {
            DatabaseMetaData meta = connection.getMetaData();
            String product = meta.getDatabaseProductName().toLowerCase(Locale.ROOT);
            SqlDialect dialect = of(product, meta.getDatabaseProductVersion());
            if (dialect == null) {
                throw new IllegalStateException("The locks library supports MySQL/MariaDB, PostgreSQL and H2, not '"
                        + meta.getDatabaseProductName() + "'");
            }
            return dialect;
        }
        catch (SQLException ex) {
            throw new IllegalStateException("Cannot connect to detect the lock store's database: " + ex.getMessage(), ex);
        }
    }

    /**
     * Whether the server behind a MySQL driver is MariaDB, by the product name and version its
     * metadata reports (a MariaDB server tells Connector/J it is MySQL, with "MariaDB" in the version).
     */
    static boolean isMariaDb(String product, String version) {
        return product.toLowerCase(Locale.ROOT).contains("mariadb") || version.contains("MariaDB");
    }

    private static SqlDialect of(String product, String version) {
        if (isMariaDb(product, version)) {
            return new MariaDbDialect();
        }
        if (product.contains("mysql")) {
            return new MySqlDialect();
        }
        if (product.contains("postgresql")) {
            return new PostgresDialect();
        }
        return product.contains("h2") ? new H2Dialect() : null;
    }

    /**
     * What a connection's driver or database settings cost the store, and how to change them: a
     * sentence for the log, or null when nothing needs changing. The store cannot change a pool's
     * settings itself, so the lock service says so once, when it is built ({@link #inspect}).
     *
     * @param connection a connection of the lock store's pool
     * @return the advice, or null
     * @throws SQLException if the settings cannot be read
     */
    String tuningAdvice(Connection connection) throws SQLException {
        return null;
    }

    /**
     * Looks at the lock store's database once, when the lock service is built: a dialect that was
     * given rather than detected must fit it ({@link #checkFits}), and the {@link #tuningAdvice} is
     * logged at INFO, if there is any.
     *
     * @param dataSource the lock store's DataSource
     * @param given whether this dialect was chosen by the application instead of detected
     * @throws IllegalStateException if a given dialect is another database's
     */
    void inspect(DataSource dataSource, boolean given) {
        try (Connection connection = dataSource.getConnection()) {
            if (given) {
                DatabaseMetaData meta = connection.getMetaData();
                checkFits(meta.getDatabaseProductName(), meta.getDatabaseProductVersion());
            }
            String advice = tuningAdvice(connection);
            if (advice != null) {
                log.info(advice);
            }
        }
        // neither check nor advice may stop a start for want of a connection: the database may be down
        // yet (a dialect given is then checked by its first statement), or a driver of another version may
        // lack what the advice reads
        catch (SQLException | RuntimeException | LinkageError ex) {
            if (ex instanceof MismatchedDialectException mismatch) {
                throw mismatch;
            }
            log.debug("Could not read the lock store's database and driver settings", ex);
        }
    }

    /**
     * A dialect chosen by the application may pick MySQL's statements for a MariaDB server, or
     * MariaDB's for a server whose version a proxy hides, but not another database's SQL, which would
     * fail only at the first lock.
     *
     * @param product the database's product name, as its driver reports it
     * @param version the database's version, as its driver reports it
     * @throws IllegalStateException if the database is of another family than this dialect
     */
    void checkFits(String product, String version) {
        String expected = family(this);
        SqlDialect detected = of(product.toLowerCase(Locale.ROOT), version);
        if (expected != null && (detected == null || !expected.equals(family(detected)))) {
            throw new MismatchedDialectException("The lock store was given the " + getClass().getSimpleName()
                    + ", which speaks " + expected + ", but its database reports '" + product + " " + version + "'"
                    + ": leave the dialect unset (locks.jdbc.dialect with Spring Boot) to detect it from the connection");
        }
    }

    /** The databases whose SQL a dialect speaks, or null for a dialect of the application's own. */
    private static String family(SqlDialect dialect) {
        if (dialect instanceof MySqlDialect) {
            return "MySQL and MariaDB";
        }
        if (dialect instanceof PostgresDialect) {
            return "PostgreSQL";
        }
        return dialect instanceof H2Dialect ? "H2" : null;
    }

    /** A dialect given for a database of another family; not swallowed as a failure to connect is. */
    private static final class MismatchedDialectException extends IllegalStateException {

        private static final long serialVersionUID = 1L;

        MismatchedDialectException(String message) {
            super(message);
        }
    }

    @Override
    public String toString() {
        return name();
    }
}
