package dev.locks.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BiConsumer;
import java.util.function.Predicate;

import javax.sql.DataSource;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.locks.HolderQuery;
import dev.locks.LockHolder;
import dev.locks.LockKind;
import dev.locks.LockMode;
import dev.locks.LockPath;
import dev.locks.LockUnavailableException;
import dev.locks.MessageText;
import dev.locks.PathNormalizer;
import dev.locks.store.Grant;
import dev.locks.store.GrantRequest;
import dev.locks.store.GrantResult;
import dev.locks.store.HandOff;
import dev.locks.store.LockStore;
import dev.locks.store.PendingRelease;
import dev.locks.store.WaitGraphRow;

/**
 * The lock store in a relational database. A grant is one short transaction: serialise against
 * conflicting grant transactions ({@link SqlDialect#serialise}), look for live conflicts
 * ({@link PathConflictQuery}), insert one row per path. The rows' generated ids are the fencing
 * tokens: a later overlapping grant can only insert after an earlier one committed, so its ids are
 * larger, and sequences and InnoDB's persistent auto-increment never go back across restarts.
 */
public class JdbcLockStore implements LockStore {

    private static final Logger log = LoggerFactory.getLogger(JdbcLockStore.class);

    /** The start-up check of the tables must not hang behind DDL another node runs on them. */
    private static final int SCHEMA_CHECK_TIMEOUT_SECONDS = 5;

    /** How often the schema script is tried where a concurrent creation can fail it. */
    private static final int SCHEMA_ATTEMPTS = 3;

    private static final int SHOWN_CONFLICTS = 5;

    private static final String UNTIMED_COLUMN_LIST = "grant_id, owner_token, kind, tenant, path, lock_key, scope_key,"
            + " lock_mode, permits, node, thread";

    private static final String COLUMN_LIST = UNTIMED_COLUMN_LIST + ", acquired_at, expires_at";

    /** The acquired and expiry times of {@link #valueRows} as parameters, bound by {@link #bindRows}. */
    private static final String BOUND_TIMES = ",?,?";

    /** Node rows are only a serialisation point; old ones are dropped and recreated on demand. */
    private static final Duration NODE_AGE = Duration.ofHours(1);

    private static final PathNormalizer EXACT_PATHS = new PathNormalizer(true, Integer.MAX_VALUE / 8);

    private final SqlDialect dialect;

    private final LockTables tables;

    private final StoreTransactions transactions;

    private final PathConflictQuery conflicts;

    private final LeaseRenewal renewal;

    private final CallersTransactionReleases callersTransactions;

    private final StatementShapes shapes = new StatementShapes();

    private final String channel;

    /** Removes a request's queue rows, bound to its grant id. */
    private final String dequeueSql;

    /**
     * Deletes a grant's live rows: the text of every release without lockAtLeastFor. It depends only on
     * the tables and the dialect, both fixed here, so it is built once.
     */
    private final String deleteSql;

    /** Tags this store's release notices, so that its own listener skips them. */
    private final ReleaseOrigin origin = ReleaseOrigin.random();

    private volatile ReleaseListener listener;

    private volatile boolean releaseNotifications = true;

    private volatile boolean durableReleases;

    /**
     * @param dataSource the lock tables' DataSource
     * @param dialect the database's dialect
     * @param tablePrefix prefix of the table names, e.g. {@code locks_}
     */
    public JdbcLockStore(DataSource dataSource, SqlDialect dialect, String tablePrefix) {
        this.dialect = dialect;
        this.tables = new LockTables(tablePrefix);
        this.transactions = new StoreTransactions(dataSource, dialect);
        this.conflicts = new PathConflictQuery(dialect, tables);
        JoinedReleases joinedReleases = new JoinedReleases();
        this.renewal = new LeaseRenewal(dialect, tables, transactions, joinedReleases);
        this.channel = tables.prefix() + "released";
        this.dequeueSql = "DELETE FROM " + tables.waiting() + " WHERE grant_id = ?";
        this.deleteSql = "DELETE FROM " + tables.held() + liveRowsOfGrant();
        this.callersTransactions = new CallersTransactionReleases(transactions, dialect, joinedReleases,
                new CallersTransactionReleases.ReleaseStatements() {

                    // the engine wakes this node's waiters when the transaction has ended (PendingRelease.ended)
                    @Override
                    public StoreTransactions.SqlWork<Integer> joining(Grant grant, Duration keepFor) {
                        return releaseWork(grant, keepFor, origin, false, false);
                    }

                    @Override
                    public StoreTransactions.SqlWork<Integer> afterTransaction(Grant grant, Duration keepFor) {
                        return releaseWork(grant, keepFor, origin, !durableReleases, true);
                    }

                    @Override
                    public boolean isLive(Connection connection, Grant grant) throws SQLException {
                        return JdbcLockStore.this.isLive(connection, grant);
                    }
                });
    }

    /** @return the dialect in use */
    public SqlDialect dialect() {
        return dialect;
    }

    /**
     * @return the DataSource of the lock tables; a transaction that holds it is joined by releases
     */
    public DataSource dataSource() {
        return transactions.dataSource();
    }

    @Override
    public GrantResult tryGrant(GrantRequest request) {
        callersTransactions.watchCommitPhase();
        return grant(request, null).next();
    }

    @Override
    public HandOff releaseAndGrant(Grant grant, GrantRequest next) {
        // a release joining the caller's transaction must not carry a grant that its rollback would undo
        return callersTransactions.inCallersTransaction() ? null : grant(next, grant);
    }

    /** Grants {@code request}, after releasing {@code releasing} in the same transaction unless it is null. */
    private HandOff grant(GrantRequest request, Grant releasing) {
        String what = (releasing != null ? "hand over to " : "grant ") + request.kind() + " "
                + MessageText.paths(request.paths());
        // each key is a digest, and a grant binds most of them more than once
        RequestKeys keys = RequestKeys.of(request);
        HandOff result = dialect.pipelinesGrants()
                ? transactions.inGrantBlock(what, connection -> pipelinedGrant(connection, request, keys, releasing))
                : dialect.groupsGrantsInBlocks()
                        ? transactions.inGrantBlock(what, connection -> blockGrant(connection, request, keys, releasing))
                        : null;
        if (result != null) {
            return result;
        }
        List<SqlDialect.NodeLock> locks = nodeLocks(request, keys);
        return transactions.inGrantTransaction(what, locks,
                connection -> transactionalGrant(connection, request, keys, locks, releasing));
    }

    private HandOff transactionalGrant(Connection connection, GrantRequest request, RequestKeys keys,
            List<SqlDialect.NodeLock> locks, Grant releasing) throws SQLException {
        Instant now = dialect.serialise(connection, tables, locks).truncatedTo(ChronoUnit.MICROS);
        boolean released = releasing != null
                && releaseWork(releasing, Duration.ZERO, origin, false, true).run(connection) > 0;
        boolean nameHolders = releasing == null;
        Grant grant;
        if (request.kind() == LockKind.SEMAPHORE && !dialect.insertsUnlessConflicting()) {
            // permits are counted, so the holders are read either way
            List<LockHolder> ahead = look(connection, clause -> findConflicts(connection, request, keys, now, clause),
                    rows -> !rows.isEmpty());
            if (!ahead.isEmpty()) {
                return new HandOff(released, GrantResult.busy(nameHolders ? ahead : List.of()));
            }
            grant = insert(connection, tables.held(), request, keys, now, request.lease());
        }
        else {
            // the free case costs one or two statements; naming the holders costs another only when busy
            grant = dialect.insertsUnlessConflicting() ? insertUnlessConflicting(connection, request, keys, now)
                    : conflictExists(connection, request, keys, now) ? null
                    : insert(connection, tables.held(), request, keys, now, request.lease());
            if (grant == null) {
                return new HandOff(released, busyNow(connection, request, keys, now, nameHolders));
            }
        }
        if (request.ticket() > 0) {
            // no notice: the granted waiter's held rows block exactly what its waiting rows blocked
            try (PreparedStatement ps = connection.prepareStatement(dequeueSql)) {
                ps.setString(1, request.grantId());
                ps.executeUpdate();
            }
        }
        return new HandOff(released, GrantResult.granted(grant));
    }

    /**
     * A busy answer naming the holders (empty if they left in between, and the caller looks again),
     * or, in a hand-off, naming nobody: the release must not wait for a query only the waiter needs.
     */
    private GrantResult busyNow(Connection connection, GrantRequest request, RequestKeys keys, Instant now,
            boolean nameHolders) throws SQLException {
        return GrantResult.busy(nameHolders ? findConflicts(connection, request, keys, now, null) : List.of());
    }

    // a waiter's look, sent every few milliseconds while it waits: the query reads the clock itself
    @Override
    public List<LockHolder> conflicts(GrantRequest request) {
        RequestKeys keys = RequestKeys.of(request);
        return transactions.autoCommitLed("look for conflicts", connection ->
                findConflicts(connection, request, keys, null, null));
    }

    /**
     * How many rows of the conflict branches a grant in one round trip counts at most: one for paths
     * and singletons; for a semaphore its permits, counting every live row on its key.
     */
    private static int countedRows(GrantRequest request) {
        return request.kind() == LockKind.SEMAPHORE ? request.permits() : 1;
    }

    /**
     * How many of the counted rows make a grant in one statement ({@link #insertUnlessConflicting})
     * busy, in SQL over {@code clock}: one for paths and singletons; for a semaphore its
     * {@link PathConflictQuery#permitLimit permit limit}. Bound by {@link #bindBusyAt}.
     */
    private String busyAt(GrantRequest request, String clock) {
        return request.kind() == LockKind.SEMAPHORE ? conflicts.permitLimit(clock) : "?";
    }

    /**
     * Binds {@link #busyAt} from parameter {@code index}; returns the next index.
     *
     * @param now the time for {@link PathConflictQuery#BOUND_CLOCK}, or null where the clock is an SQL expression
     */
    private int bindBusyAt(PreparedStatement ps, int index, GrantRequest request, RequestKeys keys, Instant now)
            throws SQLException {
        if (request.kind() == LockKind.SEMAPHORE) {
            return conflicts.bindPermitLimit(ps, index, keys.path(0), request.permits(), now);
        }
        ps.setInt(index, 1);
        return index + 1;
    }

    /** The owner whose rows never conflict with the request; none for a semaphore, whose permits every row takes. */
    private static String exemptOwner(GrantRequest request) {
        return request.kind() == LockKind.SEMAPHORE ? null : request.owner();
    }

    /** Whether only exclusive rows conflict: for a shared path or singleton request, not for a semaphore's permits. */
    private static boolean onlyExclusive(GrantRequest request) {
        return request.kind() != LockKind.SEMAPHORE && request.mode() == LockMode.SHARED;
    }

    /** Waiting rows that count against the request: none if its owner holds locks, else those queued before it. */
    static long waitersBefore(GrantRequest request) {
        return request.ownerHoldsLocks() ? PathConflictQuery.NO_WAITERS
                : request.ticket() > 0 ? request.ticket() : PathConflictQuery.ALL_WAITERS;
    }

    /** Whether a conflict exists, without reading the holders' columns, which only a busy answer needs. */
    private boolean conflictExists(Connection connection, GrantRequest request, RequestKeys keys, Instant now)
            throws SQLException {
        return look(connection, clause -> conflictExists(connection, request, keys, now, clause), busy -> busy);
    }

    /**
     * A grant's look at the conflicting rows: by a locking read that fails at once on a locked row, and
     * then by the snapshot and, if that finds the way free, by a locking read that waits a bounded
     * time, and after that by the snapshot once more ({@link SqlDialect#lockingReadWithoutWaiting}).
     *
     * @param busy whether an answer makes the grant busy
     */
    private <T> T look(Connection connection, Look<T> look, Predicate<T> busy) throws SQLException {
        String withoutWaiting = dialect.lockingReadWithoutWaiting(connection);
        if (withoutWaiting == null) {
            return look.read(null);
        }
        try {
            return look.read(withoutWaiting);
        }
        catch (SQLException ex) {
            if (!dialect.isLockNotAvailable(connection, ex)) {
                throw ex;
            }
        }
        // a row was locked: a busy answer by the snapshot neither waits nor locks a holder's row
        T bySnapshot = look.read(null);
        String waiting = dialect.lockingRead(connection);
        if (busy.test(bySnapshot) || waiting == null) {
            return bySnapshot;
        }
        try {
            return look.read(waiting);
        }
        catch (SQLException ex) {
            if (!dialect.isLockNotAvailable(connection, ex)) {
                throw ex;
            }
            return look.read(null);
        }
    }

    /** A conflict query read by a locking read's clause, or by the snapshot for null. */
    @FunctionalInterface
    private interface Look<T> {

        T read(String lockClause) throws SQLException;
    }

    private boolean conflictExists(Connection connection, GrantRequest request, RequestKeys keys, Instant now,
            String lockClause) throws SQLException {
        return conflicts.exists(connection, keys, now, request.owner(), request.mode() == LockMode.SHARED,
                waitersBefore(request), lockClause);
    }

    /** @param lockClause null for the snapshot, or a locking read's clause ({@link #look}) for a semaphore's rows */
    private List<LockHolder> findConflicts(Connection connection, GrantRequest request, RequestKeys keys, Instant now,
            String lockClause) throws SQLException {
        long waitersBefore = waitersBefore(request);
        if (request.kind() == LockKind.SEMAPHORE) {
            // permits in use plus earlier waiters: a newcomer does not overtake the queue. One row more than
            // the permits shows a waiter who takes the next free permit first, which tells this request's
            // waiting that its turn is not next; it also reads every grant whenever fewer than the permits
            // are held, so that the smallest max among them is exact when it matters
            PathConflictQuery.KeyRows ahead = conflicts.onKey(connection, keys.path(0), now, waitersBefore,
                    request.permits() + 1, lockClause);
            int limit = Math.min(request.permits(), ahead.smallestHeldMax());
            return ahead.rows().size() >= limit ? ahead.rows() : List.of();
        }
        return conflicts.find(connection, keys, now, request.owner(), request.mode() == LockMode.SHARED, waitersBefore,
                SHOWN_CONFLICTS);
    }

    @Override
    public long enqueue(GrantRequest request, Duration waitLease) {
        // a waiter may be granted by another thread's hand-off, and then released at the commit
        callersTransactions.watchCommitPhase();
        return transactions.autoCommit("queue a waiting request", connection ->
                insert(connection, tables.waiting(), request, RequestKeys.of(request), dialect.currentTime(connection),
                        waitLease).fencingToken());
    }

    @Override
    public boolean keepWaiting(GrantRequest request, Duration waitLease) {
        return transactions.isolated("renew a waiting request", connection -> {
            Instant now = dialect.currentTime(connection);
            // the lapse is judged by the clock at the update itself: a waiter that stalled after reading
            // the time must not bring back a queue record that has lapsed meanwhile
            try (PreparedStatement ps = connection.prepareStatement("UPDATE " + tables.waiting()
                    + " SET expires_at = ? WHERE grant_id = ? AND " + dialect.leaseOutlives(dialect.now()))) {
                dialect.setTime(ps, 1, now.plus(waitLease));
                ps.setString(2, request.grantId());
                return ps.executeUpdate() > 0;
            }
        });
    }

    @Override
    public void dequeue(GrantRequest request) {
        // a waiter leaving may unblock the requests queued behind it
        transactions.autoCommitLed("leave the wait queue", connection -> modifyAndNotify(connection, dequeueSql, origin, false,
                true, ps -> ps.setString(1, request.grantId())));
    }

    /** Binds statement parameters. */
    @FunctionalInterface
    private interface Binder {
        void bind(PreparedStatement ps) throws SQLException;
    }

    /**
     * Runs a DELETE or UPDATE of lock rows and, where the database can, tells the listeners
     * {@code from} does not exclude.
     *
     * @param ownConnection whether the connection is the store's own, where in auto-commit the statement's
     *                      lead opens a transaction for it ({@link SqlDialect#indexedPlansLead})
     */
    private int modifyAndNotify(Connection connection, String sql, ReleaseOrigin from, boolean lazyCommit,
            boolean ownConnection, Binder binder) throws SQLException {
        // a connection in a transaction, the caller's or a grant's, would pass the lazy commit on to everything
        // else that transaction wrote
        boolean autoCommit = connection.getAutoCommit();
        String notifying = dialect.notifying(sql, channel, tables.waiting(), from, lazyCommit && autoCommit);
        if (notifying == null) {
            try (PreparedStatement ps = connection.prepareStatement(sql)) {
                binder.bind(ps);
                return ps.executeUpdate();
            }
        }
        boolean openTransaction = ownConnection && autoCommit;
        String lead = dialect.indexedPlansLead(openTransaction);
        try (PreparedStatement ps = connection.prepareStatement(lead + notifying
                + dialect.indexedPlansEnd(openTransaction))) {
            binder.bind(ps);
            int[] rows = { 0 };
            StatementResults.readLed(lead, ps, rs -> rows[0] = rs.getInt(1));
            return rows[0];
        }
    }

    @Override
    public boolean announcesReleases() {
        ReleaseListener current = listener;
        return current != null && current.listening();
    }

    @Override
    public synchronized void onRemoteRelease(BiConsumer<LockKind, String> subscriber) {
        if (listener != null || !releaseNotifications) {
            return;
        }
        if (PoolSize.atMost(transactions.dataSource(), 2)) {
            // the listener keeps a connection for itself: with one or two, acquisitions would starve
            log.info(
                    "Release notifications are off: the lock DataSource's pool has fewer than 3 connections;"
                            + " waiters on other nodes poll instead");
            return;
        }
        listener = dialect.listen(transactions.dataSource(), channel, origin, subscriber);
    }

    /**
     * Whether to keep a connection listening for other nodes' releases where the database can
     * notify (PostgreSQL). Off, waiters on other nodes poll; on by default.
     *
     * @param enabled false to poll only
     */
    public void setReleaseNotifications(boolean enabled) {
        this.releaseNotifications = enabled;
    }

    /**
     * Whether a release on its own waits until its commit is on disk. Off by default where the
     * database can choose per transaction (PostgreSQL), on a connection in auto-commit, including a
     * release that follows the caller's transaction, which commits after it: exclusion
     * never rests on a release being durable, since the log survives a crash or reaches a standby only
     * as an unbroken prefix, so no grant that saw the release outlives it. A release lost that way
     * leaves its lock held until the lease ends. Grants, hand-offs and releases inside the caller's
     * transaction commit as the server's {@code synchronous_commit} says.
     *
     * @param durable true to wait for the flush of every release
     */
    public void setDurableReleases(boolean durable) {
        this.durableReleases = durable;
    }

    @Override
    public synchronized void close() {
        if (listener != null) {
            try {
                listener.close();
            }
            catch (Exception ex) {
                log.debug("Closing the release listener failed", ex);
            }
            listener = null;
        }
    }

    @Override
    public List<WaitGraphRow> waitGraph(LockKind kind, String tenant) {
        // one statement, so waiters and holdings come from one snapshot and a cycle seen is a cycle that was
        String waiters = "SELECT owner_token FROM " + tables.waiting() + " WHERE scope_key = ? AND expires_at > ?";
        String sql = "SELECT " + PathConflictQuery.COLUMNS + ", 'W' AS row_state FROM " + tables.waiting()
                + " WHERE scope_key = ? AND expires_at > ? UNION ALL SELECT " + PathConflictQuery.COLUMNS
                + ", 'H' AS row_state FROM " + tables.held() + " WHERE scope_key = ? AND expires_at > ? AND owner_token IN ("
                + waiters + ") ORDER BY id";
        return transactions.autoCommit("read the wait-for graph", connection -> {
            Instant now = dialect.currentTime(connection);
            byte[] scope = LockKeys.scopeKey(kind, tenant);
            try (PreparedStatement ps = connection.prepareStatement(sql)) {
                for (int i = 0; i < 3; i++) {
                    ps.setBytes(2 * i + 1, scope);
                    dialect.setTime(ps, 2 * i + 2, now);
                }
                List<WaitGraphRow> rows = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        LockHolder holder = conflicts.holder(rs);
                        rows.add(new WaitGraphRow(rs.getString("owner_token"), holder.waiting(), holder));
                    }
                }
                return rows;
            }
        });
    }

    /**
     * Ancestors shared, requested paths exclusive, all in path order (a parent before its children);
     * where node locks cannot be shared, the tenant's root alone.
     */
    private List<SqlDialect.NodeLock> nodeLocks(GrantRequest request, RequestKeys keys) {
        if (!dialect.sharesNodeLocks() && request.kind() == LockKind.PATH) {
            // the root is an ancestor of every other path, so each path grant of the tenant would lock its
            // row exclusively anyway: that row alone serialises them, and the rows below it add only work
            return List.of(new SqlDialect.NodeLock(keys.root(), true));
        }
        return keys.nodeLocks();
    }

    /**
     * The request's held rows, inserted in one statement with the conflict check (for a semaphore:
     * while its grants and earlier waiters are fewer than its {@link PathConflictQuery#permitLimit
     * permit limit}); null if nothing went in.
     */
    private Grant insertUnlessConflicting(Connection connection, GrantRequest request, RequestKeys keys, Instant now)
            throws SQLException {
        Instant expires = now.plus(request.lease()).truncatedTo(ChronoUnit.MICROS);
        long waitersBefore = waitersBefore(request);
        StatementShapes.Shape shape = StatementShapes.Shape.of(StatementShapes.Form.UNLESS_CONFLICTING, request, keys,
                null, waitersBefore, false);
        String sql = shapes.text(shape, () -> unlessConflictingSql(request, waitersBefore));
        try (PreparedStatement ps = connection.prepareStatement(sql, new String[] { "id" })) {
            int i = bindRows(ps, 1, request, keys, now, expires);
            bindUnlessConflicting(ps, i, request, keys, now, waitersBefore);
            return ps.executeUpdate() == 0 ? null : grantOf(ps, request, expires);
        }
    }

    /** The text of {@link #insertUnlessConflicting}, the same for every request of its {@link StatementShapes.Shape}. */
    String unlessConflictingSql(GrantRequest request, long waitersBefore) {
        StringBuilder sql = new StringBuilder("INSERT INTO ");
        sql.append(tables.held()).append(" (").append(COLUMN_LIST).append(") SELECT * FROM (")
                .append(valueRows(request, BOUND_TIMES)).append(") AS v (").append(COLUMN_LIST).append(')');
        appendUnlessConflicting(sql, request, PathConflictQuery.BOUND_CLOCK, waitersBefore);
        return sql.toString();
    }

    /**
     * Appends the condition of an {@code INSERT ... SELECT} that inserts the request's rows unless a
     * conflicting grant or earlier waiter exists (for a semaphore: unless its grants and earlier
     * waiters reach its {@link PathConflictQuery#permitLimit permit limit}), judged at {@code clock}.
     * Bound by {@link #bindUnlessConflicting}.
     */
    private void appendUnlessConflicting(StringBuilder sql, GrantRequest request, String clock, long waitersBefore) {
        boolean semaphore = request.kind() == LockKind.SEMAPHORE;
        // paths and singletons keep NOT EXISTS: the count that permits need measured a little slower on
        // PostgreSQL's acquire path (0.83-0.98x ShedLock against 0.97-1.06x in alternating runs)
        sql.append(semaphore ? " WHERE (SELECT count(*) FROM (" : " WHERE NOT EXISTS (");
        conflicts.appendBranches(sql, PathConflictQuery.Selected.CONSTANT, clock, request.kind(), request.paths(),
                exemptOwner(request), onlyExclusive(request), waitersBefore, null);
        sql.append(semaphore ? " LIMIT ?) AS taken) < " + busyAt(request, clock) : ")");
    }

    /**
     * Binds {@link #appendUnlessConflicting} from parameter {@code index}; returns the next index.
     *
     * @param now the time for {@link PathConflictQuery#BOUND_CLOCK}, or null where the clock is an SQL expression
     */
    private int bindUnlessConflicting(PreparedStatement ps, int index, GrantRequest request, RequestKeys keys,
            Instant now, long waitersBefore) throws SQLException {
        int i = conflicts.bind(ps, index, keys, now, exemptOwner(request), waitersBefore);
        if (request.kind() == LockKind.SEMAPHORE) {
            ps.setInt(i++, countedRows(request));
            i = bindBusyAt(ps, i, request, keys, now);
        }
        return i;
    }

    private Grant insert(Connection connection, String table, GrantRequest request, RequestKeys keys, Instant now,
            Duration lease) throws SQLException {
        Instant expires = now.plus(lease).truncatedTo(ChronoUnit.MICROS);
        String sql = "INSERT INTO " + table + " (" + COLUMN_LIST + ") " + valueRows(request, BOUND_TIMES);
        try (PreparedStatement ps = connection.prepareStatement(sql, new String[] { "id" })) {
            bindRows(ps, 1, request, keys, now, expires);
            ps.executeUpdate();
            return grantOf(ps, request, expires);
        }
    }

    /**
     * A grant in one round trip: the dialect's start of a transaction and serialising statement, then
     * an insert of the rows unless a conflicting grant or earlier waiter exists (for a semaphore: unless
     * its grants and earlier waiters reach its {@link PathConflictQuery#permitLimit permit limit}), judged by the
     * database's clock at that insert, then for a queued request the removal of its waiting row if the
     * rows went in, then the commit ({@link SqlDialect#pipelinesGrants}). Only a busy answer costs a
     * second round trip, to name the holders.
     */
    private HandOff pipelinedGrant(Connection connection, GrantRequest request, RequestKeys keys, Grant releasing)
            throws SQLException {
        List<SqlDialect.NodeLock> locks = nodeLocks(request, keys);
        long waitersBefore = waitersBefore(request);
        StatementShapes.Shape shape = StatementShapes.Shape.of(StatementShapes.Form.PIPELINED, request, keys, locks,
                waitersBefore, releasing != null);
        String sql = shapes.text(shape, () -> pipelinedSql(request, waitersBefore, releasing != null));
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            int i = dialect.bindSerialise(connection, ps, 1, locks);
            if (releasing != null) {
                i = bindRelease(ps, i, releasing, Duration.ZERO);
            }
            ps.setLong(i++, request.lease().toNanos() / 1000);
            i = bindRows(ps, i, request, keys, null, null);
            i = bindUnlessConflicting(ps, i, request, keys, null, waitersBefore);
            if (request.ticket() > 0) {
                ps.setString(i++, request.grantId());
                ps.setString(i, request.grantId());
            }
            return pipelinedResult(connection, ps, request, keys, releasing != null);
        }
    }

    /** The text of {@link #pipelinedGrant}, the same for every request of its {@link StatementShapes.Shape}. */
    String pipelinedSql(GrantRequest request, long waitersBefore, boolean releasing) {
        StringBuilder sql = new StringBuilder(dialect.pipelinedSerialise());
        if (releasing) {
            // after the locks, as in every grant, so that the hand-off cannot deadlock with one
            sql.append(notifyingRelease()).append("; ");
        }
        sql.append("WITH c AS (SELECT ").append(dialect.now()).append(" AS now) INSERT INTO ").append(tables.held())
                .append(" (").append(COLUMN_LIST).append(") SELECT v.*, c.now, ").append(dialect.plusMicros("c.now"))
                .append(" FROM c, (").append(valueRows(request, "")).append(") AS v (").append(UNTIMED_COLUMN_LIST)
                .append(')');
        appendUnlessConflicting(sql, request, "c.now", waitersBefore);
        sql.append(" RETURNING id, expires_at");
        if (request.ticket() > 0) {
            // no notice: the granted waiter's held rows block exactly what its waiting rows blocked
            sql.append("; ").append(dequeueSql).append(" AND EXISTS (SELECT 1 FROM ").append(tables.held())
                    .append(" WHERE grant_id = ?)");
        }
        sql.append(dialect.pipelinedEnd());
        return sql.toString();
    }

    /**
     * Reads the answers of {@link #pipelinedGrant}: the serialising time, the count of a release,
     * then the inserted rows.
     */
    private HandOff pipelinedResult(Connection connection, PreparedStatement ps, GrantRequest request,
            RequestKeys keys, boolean releasing) throws SQLException {
        Answer answer = new Answer();
        // result sets in statement order: the serialising SELECT, the release's count, the inserted rows
        int releasedAt = releasing ? 1 : -1;
        int insertedAt = releasing ? 2 : 1;
        StatementResults.read(ps, (n, rs) -> {
            if (n == 0) {
                answer.now = dialect.getTime(rs, 2).truncatedTo(ChronoUnit.MICROS);
            }
            else if (n == releasedAt) {
                answer.released = rs.getInt(1) > 0;
            }
            else if (n == insertedAt) {
                answer.token = Math.min(answer.token, rs.getLong(1));
                answer.expires = dialect.getTime(rs, 2);
            }
        });
        return answer.result(connection, request, keys, !releasing);
    }

    /** The release of a hand-off as a statement answering its count in a result set, as pipelined grants read it. */
    private String notifyingRelease() {
        String notifying = dialect.notifying(releaseSql(Duration.ZERO), channel, tables.waiting(), origin, false);
        if (notifying == null) {
            throw new IllegalStateException(dialect.name() + " pipelines grants but cannot answer a release's count");
        }
        return notifying;
    }

    /** What a grant in one round trip answered: the time once its locks were held, and its rows if it inserted any. */
    private final class Answer {

        private Instant now;

        private long token = Long.MAX_VALUE;

        private Instant expires;

        private boolean released;

        HandOff result(Connection connection, GrantRequest request, RequestKeys keys, boolean nameHolders)
                throws SQLException {
            if (now == null) {
                throw new SQLException("The grant statement answered no time");
            }
            if (expires == null) {
                return new HandOff(released, busyNow(connection, request, keys, now, nameHolders));
            }
            return new HandOff(released, GrantResult.granted(new Grant(request.grantId(), request.owner(), token,
                    request.paths().size(), expires)));
        }
    }

    /**
     * A grant in one round trip as a compound statement ({@link SqlDialect#groupsGrantsInBlocks}):
     * node rows created and locked, the clock read, the conflicts counted ({@link SqlDialect#blockCounts}),
     * the rows inserted unless something conflicts (for a semaphore: unless its grants and earlier
     * waiters reach its max, or the smallest max among the grants counted),
     * the waiting row of a queued request removed, committed.
     */
    private HandOff blockGrant(Connection connection, GrantRequest request, RequestKeys keys, Grant releasing)
            throws SQLException {
        List<SqlDialect.NodeLock> locks = nodeLocks(request, keys);
        long waitersBefore = waitersBefore(request);
        StatementShapes.Shape shape = StatementShapes.Shape.of(StatementShapes.Form.BLOCK, request, keys, locks,
                waitersBefore, releasing != null);
        String sql = shapes.text(shape, () -> blockSql(request, locks, waitersBefore, releasing != null));
        List<SqlDialect.BlockCount> counts = dialect.blockCounts();
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            int i = dialect.bindBlockOpening(ps, 1, request.lease(), countedRows(request), locks);
            if (releasing != null) {
                i = bindRelease(ps, i, releasing, Duration.ZERO);
            }
            for (int count = 0; count < counts.size(); count++) {
                i = conflicts.bind(ps, i, keys, null, exemptOwner(request), waitersBefore);
                ps.setInt(i++, countedRows(request));
            }
            i = bindRows(ps, i, request, keys, null, null);
            if (request.ticket() > 0) {
                ps.setString(i, request.grantId());
            }
            return blockResult(connection, ps, request, keys, releasing != null);
        }
    }

    /** The text of {@link #blockGrant}, the same for every request of its {@link StatementShapes.Shape}. */
    String blockSql(GrantRequest request, List<SqlDialect.NodeLock> locks, long waitersBefore, boolean releasing) {
        String release = releasing ? releaseSql(Duration.ZERO) : null;
        String clock = dialect.blockClock();
        StringBuilder sql = new StringBuilder(dialect.blockOpening(tables, locks, release));
        List<SqlDialect.BlockCount> counts = dialect.blockCounts();
        for (SqlDialect.BlockCount count : counts) {
            sql.append(count.start());
            // each count reads the smallest max among a semaphore's grants from the rows it counted
            conflicts.appendBranches(sql, PathConflictQuery.Selected.HELD_MAX, clock, request.kind(), request.paths(),
                    exemptOwner(request), onlyExclusive(request), waitersBefore, count.lockClause());
            sql.append(count.end());
        }
        sql.append("INSERT INTO ")
                .append(tables.held()).append(" (").append(COLUMN_LIST).append(") ").append(valueRows(request, ", " + dialect.blockTimes()));
        if (request.ticket() > 0) {
            sql.append("; ").append(dequeueSql);
        }
        sql.append(dialect.blockClosing());
        return sql.toString();
    }

    /**
     * Reads the one row of {@link #blockGrant}: token, expiry and time, or nulls and the time when
     * busy, then the count of a release.
     */
    private HandOff blockResult(Connection connection, PreparedStatement ps, GrantRequest request, RequestKeys keys,
            boolean releasing) throws SQLException {
        Answer answer = new Answer();
        StatementResults.read(ps, (n, rs) -> {
            answer.token = rs.getLong(1);
            answer.expires = rs.wasNull() ? null : dialect.getTime(rs, 2);
            answer.now = dialect.getTime(rs, 3);
            answer.released = rs.getInt(4) > 0;
        });
        return answer.result(connection, request, keys, !releasing);
    }

    /**
     * One row of parameters per path, in the order of {@link #UNTIMED_COLUMN_LIST}, then
     * {@code times}: {@link #BOUND_TIMES}, the times in SQL, or nothing.
     */
    private String valueRows(GrantRequest request, String times) {
        String key = dialect.keyParameter();
        return "VALUES " + String.join(",", Collections.nCopies(request.paths().size(),
                "(?,?,?,?,?," + key + "," + key + ",?,?,?,?" + times + ")"));
    }

    /**
     * Binds {@link #valueRows} from parameter {@code index}, the times too where they are given
     * ({@link #BOUND_TIMES}); returns the next index.
     */
    private int bindRows(PreparedStatement ps, int index, GrantRequest request, RequestKeys keys, Instant now,
            Instant expires) throws SQLException {
        String mode = request.mode() == LockMode.EXCLUSIVE ? "X" : "S";
        int i = index;
        for (int p = 0; p < request.paths().size(); p++) {
            LockPath path = request.paths().get(p);
            ps.setString(i++, request.grantId());
            ps.setString(i++, request.owner());
            ps.setString(i++, String.valueOf(request.kind().code()));
            dialect.setText(ps, i++, request.tenant());
            dialect.setText(ps, i++, path.value());
            ps.setBytes(i++, keys.path(p));
            ps.setBytes(i++, keys.scope());
            ps.setString(i++, mode);
            ps.setInt(i++, request.permits());
            ps.setString(i++, truncate(request.node()));
            ps.setString(i++, truncate(request.thread()));
            if (now != null) {
                dialect.setTime(ps, i++, now);
                dialect.setTime(ps, i++, expires);
            }
        }
        return i;
    }

    /** The grant whose rows {@code ps} inserted; the smallest generated id is its fencing token. */
    private static Grant grantOf(PreparedStatement ps, GrantRequest request, Instant expires) throws SQLException {
        long token = Long.MAX_VALUE;
        try (ResultSet keys = ps.getGeneratedKeys()) {
            while (keys.next()) {
                token = Math.min(token, keys.getLong(1));
            }
        }
        if (token == Long.MAX_VALUE) {
            throw new SQLException("The database returned no generated id for the lock rows");
        }
        return new Grant(request.grantId(), request.owner(), token, request.paths().size(), expires);
    }

    private static String truncate(String s) {
        return s.length() <= 255 ? s : s.substring(0, 255);
    }

    /** Whether the grant's rows are live, as {@code connection} sees them: a count, bound to its grant id and owner. */
    private boolean isLive(Connection connection, Grant grant) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("SELECT COUNT(*) FROM " + tables.held()
                + liveRowsOfGrant())) {
            ps.setString(1, grant.grantId());
            ps.setString(2, grant.owner());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getInt(1) > 0;
            }
        }
    }

    /** Inside a caller's transaction the release waits for its commit ({@link CallersTransactionReleases}). */
    @Override
    public boolean release(Grant grant, Duration keepFor, PendingRelease pending) {
        CommitPhase waitingFor = callersTransactions.waitingFor();
        if (waitingFor != null) {
            return callersTransactions.release(waitingFor, grant, keepFor, pending);
        }
        return transactions.autoCommitLed("release a lock", releaseWork(grant, keepFor, origin, !durableReleases, true)) > 0;
    }

    @Override
    public void discard(Grant grant) {
        transactions.autoCommitLed("release a lock granted to a waiter that had left",
                releaseWork(grant, Duration.ZERO, origin, !durableReleases, true));
    }

    /**
     * The release of a grant on a given connection, telling the listeners {@code from} does not
     * exclude where the database can.
     *
     * @param ownConnection whether the release runs on a connection of the store's own, not the caller's
     */
    private StoreTransactions.SqlWork<Integer> releaseWork(Grant grant, Duration keepFor, ReleaseOrigin from,
            boolean lazyCommit, boolean ownConnection) {
        String sql = releaseSql(keepFor);
        return connection -> modifyAndNotify(connection, sql, from, lazyCommit, ownConnection,
                ps -> bindRelease(ps, 1, grant, keepFor));
    }

    /** Deletes a grant's live rows, or with {@code keepFor} ends their lease that long after the grant. */
    private String releaseSql(Duration keepFor) {
        // only live rows count: an expired grant may belong to nobody or be overtaken; the purge removes it
        return keepFor.isZero()
                ? deleteSql
                // lockAtLeastFor: end the lease at acquired_at + keepFor (in the past if that has passed already),
                // later than the lease would have if keepFor is longer: the live rows are the caller's to extend.
                // A new grant id, so that a renewal already under way cannot extend the kept rows again
                : "UPDATE " + tables.held() + " SET expires_at = " + dialect.plusMicros("acquired_at")
                        + ", grant_id = ?" + liveRowsOfGrant();
    }

    /**
     * The live rows of one grant and owner, whose ids are the two parameters, by the database's clock.
     * A release deletes them: found through the grant index alone, so that it locks no other grant's
     * rows and waits for none of them.
     */
    private String liveRowsOfGrant() {
        return " WHERE grant_id = ? AND owner_token = ? AND " + dialect.leaseOutlives(dialect.now());
    }

    /** Binds {@link #releaseSql} from parameter {@code index}; returns the next index. */
    private static int bindRelease(PreparedStatement ps, int index, Grant grant, Duration keepFor) throws SQLException {
        int i = index;
        if (!keepFor.isZero()) {
            ps.setLong(i++, keepFor.toNanos() / 1000);
            ps.setString(i++, UUID.randomUUID().toString().replace("-", ""));
        }
        ps.setString(i++, grant.grantId());
        ps.setString(i++, grant.owner());
        return i;
    }

    @Override
    public Map<String, Instant> renew(Collection<Grant> grants, Duration lease) {
        return renewal.renew(grants, lease);
    }

    @Override
    public List<LockHolder> holders(LockKind kind, String tenant, LockPath path) {
        // the queries read the clock themselves: one statement
        return transactions.autoCommitLed("list holders", connection -> {
            if (kind != LockKind.PATH) {
                return conflicts.onKey(connection, LockKeys.lockKey(kind, tenant, path), null,
                        PathConflictQuery.NO_WAITERS, MAX_HOLDERS + 1, null).rows();
            }
            return conflicts.find(connection, RequestKeys.of(kind, tenant, List.of(path)), null, null, false,
                    PathConflictQuery.NO_WAITERS, MAX_HOLDERS + 1);
        });
    }

    @Override
    public Instant currentTime() {
        return transactions.autoCommit("read the database time", dialect::currentTime);
    }

    @Override
    public int purgeExpired() {
        return transactions.isolated("purge expired locks", connection -> {
            Instant now = dialect.currentTime(connection);
            int deleted;
            try (PreparedStatement ps = connection.prepareStatement(dialect.deleteExpired(tables.held()))) {
                dialect.setTime(ps, 1, now);
                dialect.setTime(ps, 2, now);
                deleted = ps.executeUpdate();
            }
            try (PreparedStatement ps = connection.prepareStatement("DELETE FROM " + tables.waiting()
                    + " WHERE expires_at <= ?")) {
                dialect.setTime(ps, 1, now);
                deleted += ps.executeUpdate();
            }
            return deleted + dialect.purgeNodes(connection, tables, now.minus(NODE_AGE));
        });
    }

    @Override
    public List<LockHolder> list(HolderQuery query) {
        return transactions.autoCommit("list locks", connection -> {
            StringBuilder where = new StringBuilder(" WHERE expires_at > ?");
            List<Object> args = new ArrayList<>();
            if (query.kind() != null) {
                where.append(" AND kind = ?");
                args.add(String.valueOf(query.kind().code()));
            }
            if (query.tenant() != null) {
                where.append(" AND tenant = ?");
                args.add(new Text(query.tenant()));
            }
            if (query.pathPrefix() != null) {
                if ((query.kind() == null || query.kind() == LockKind.PATH) && query.pathPrefix().startsWith("/")) {
                    // the service normalised it already; normalising again only rebuilds the LockPath
                    LockPath prefix = EXACT_PATHS.normalize(query.pathPrefix());
                    List<Object> subtreeArgs = List.of(new Text(query.pathPrefix()),
                            new Range(PathConflictQuery.subtreeLow(prefix), PathConflictQuery.subtreeHigh(prefix)));
                    if (query.kind() == LockKind.PATH) {
                        where.append(" AND (path = ? OR (").append(dialect.subtree()).append("))");
                        args.addAll(subtreeArgs);
                    }
                    else {
                        // a subtree holds path locks only: a singleton or semaphore matches by its exact name
                        String pathKind = String.valueOf(LockKind.PATH.code());
                        where.append(" AND ((kind = ? AND (path = ? OR (").append(dialect.subtree())
                                .append("))) OR (kind <> ? AND path = ?))");
                        args.add(pathKind);
                        args.addAll(subtreeArgs);
                        args.add(pathKind);
                        args.add(new Text(query.pathPrefix()));
                    }
                }
                else {
                    where.append(" AND path = ?");
                    args.add(new Text(query.pathPrefix()));
                }
            }
            if (query.node() != null) {
                where.append(" AND node = ?");
                args.add(query.node());
            }
            StringBuilder sql = new StringBuilder("SELECT " + PathConflictQuery.COLUMNS + ", 'H' AS row_state FROM "
                    + tables.held() + where);
            if (query.includeWaiting()) {
                sql.append(" UNION ALL SELECT " + PathConflictQuery.COLUMNS + ", 'W' AS row_state FROM ")
                        .append(tables.waiting()).append(where);
            }
            sql.append(" ORDER BY id LIMIT ").append(query.limit());
            try (PreparedStatement ps = connection.prepareStatement(sql.toString())) {
                int i = 1;
                Instant now = dialect.currentTime(connection);
                for (int branch = 0; branch < (query.includeWaiting() ? 2 : 1); branch++) {
                    dialect.setTime(ps, i++, now);
                    for (Object arg : args) {
                        if (arg instanceof Text text) {
                            dialect.setText(ps, i++, text.value());
                        }
                        else if (arg instanceof Range range) {
                            i = dialect.bindSubtree(ps, i, range.low(), range.high());
                        }
                        else {
                            ps.setString(i++, (String) arg);
                        }
                    }
                }
                List<LockHolder> holders = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        holders.add(conflicts.holder(rs));
                    }
                }
                return holders;
            }
        });
    }

    private record Text(String value) {
    }

    private record Range(String low, String high) {
    }

    @Override
    public List<LockHolder> forceRelease(long lockId) {
        return transactions.inTransaction("force-release a lock", connection -> {
            List<LockHolder> rows = new ArrayList<>();
            // only live rows count, as for an owner's release: an expired grant is nobody's to free, the purge removes it
            try (PreparedStatement ps = connection.prepareStatement("SELECT " + PathConflictQuery.COLUMNS
                    + ", 'H' AS row_state FROM " + tables.held() + " WHERE grant_id = (SELECT grant_id FROM "
                    + tables.held() + " WHERE id = ?) AND " + dialect.leaseOutlives(dialect.now())
                    + " ORDER BY id FOR UPDATE")) {
                ps.setLong(1, lockId);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        rows.add(conflicts.holder(rs));
                    }
                }
            }
            if (rows.isEmpty()) {
                return rows;
            }
            // the lock may be this node's: its own waiters learn of it from the notice too
            modifyAndNotify(connection, "DELETE FROM " + tables.held() + " WHERE id IN ("
                    + SqlDialect.placeholders(rows.size()) + ")", ReleaseOrigin.ANY, false, true, ps -> {
                        for (int i = 0; i < rows.size(); i++) {
                            ps.setLong(i + 1, rows.get(i).lockId());
                        }
                    });
            return rows;
        });
    }

    /**
     * Checks, for a store whose tables were not created at start-up, that they exist and can be read:
     * without them the application would start and fail at every lock. Only the database's answer
     * that a table does not exist or may not be read counts; a database that cannot be reached, or
     * any other failure (a timeout, a lock wait behind DDL), is logged and not judged for that table.
     *
     * @throws IllegalStateException naming the tables that cannot be read and how to create them
     */
    public void checkSchema() {
        List<String> checked = new ArrayList<>(List.of(tables.held(), tables.waiting()));
        if (dialect.usesNodeTable()) {
            checked.add(tables.node());
        }
        TableCheck check;
        try {
            check = transactions.autoCommit("check the lock tables", connection -> readEach(connection, checked));
        }
        catch (LockUnavailableException ex) {
            log.warn("Could not check the lock tables at start-up: {}", ex.getMessage());
            return;
        }
        List<String> unreadable = check.unreadable();
        List<String> unjudged = check.unjudged();
        String firstError = check.firstError();
        if (!unjudged.isEmpty()) {
            log.warn("Could not check the lock tables at start-up: {}", unjudged);
        }
        if (!unreadable.isEmpty()) {
            throw new IllegalStateException("The lock tables " + unreadable + " are missing or may not be read ("
                    + firstError + "): create them at start-up (locks.jdbc.initialize-schema=always with Spring Boot,"
                    + " createSchema(true) on JdbcLockService's builder), or apply the script "
                    + dialect.schemaResource() + " from the library's jar with ${prefix} replaced by '"
                    + tables.prefix() + "'");
        }
    }

    /** What the start-up check found: tables the database says are missing or forbidden; those it could not judge. */
    private record TableCheck(List<String> unreadable, String firstError, List<String> unjudged) {
    }

    /** One query per table, each judged on its own answer. */
    private static TableCheck readEach(Connection connection, List<String> checked) throws SQLException {
        List<String> unreadable = new ArrayList<>();
        String firstError = null;
        List<String> unjudged = new ArrayList<>();
        for (String table : checked) {
            try (PreparedStatement ps = connection.prepareStatement("SELECT 1 FROM " + table + " WHERE 1 = 0")) {
                ps.setQueryTimeout(SCHEMA_CHECK_TIMEOUT_SECONDS);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                }
            }
            catch (SQLException ex) {
                if (isMissingOrForbidden(ex)) {
                    unreadable.add(table);
                    firstError = firstError == null ? ex.getMessage() : firstError;
                }
                else {
                    unjudged.add(table + " (" + ex.getMessage() + ")");
                }
                if (!connection.getAutoCommit()) {
                    // PostgreSQL refuses every statement after a failed one until the transaction ends
                    connection.rollback();
                }
            }
        }
        return new TableCheck(unreadable, firstError, unjudged);
    }

    /**
     * An undefined table (42S02 on MySQL, MariaDB and H2, H2's 42S03 and 42S04 too, 42P01 on PostgreSQL)
     * or a missing privilege (42501 on PostgreSQL, 90096 on H2, MySQL's errors 1142 and 1143 under
     * 42000, which also holds its syntax errors).
     */
    private static boolean isMissingOrForbidden(SQLException ex) {
        String state = ex.getSQLState();
        if (state == null) {
            return false;
        }
        return switch (state) {
            case "42S02", "42S03", "42S04", "42P01", "42501", "90096" -> true;
            case "42000" -> ex.getErrorCode() == 1142 || ex.getErrorCode() == 1143;
            default -> false;
        };
    }

    /**
     * Creates the tables if they do not exist, from the dialect's schema script.
     */
    public void createSchema() {
        String script = SchemaScript.load(dialect, tables.prefix());
        StoreTransactions.SqlWork<Void> runScript = connection -> {
            try (Statement st = connection.createStatement()) {
                for (String statement : SchemaScript.statements(script)) {
                    st.execute(statement);
                }
            }
            return null;
        };
        if (dialect.schemaCreationLock() == null) {
            createSchemaInAutoCommit(runScript);
            return;
        }
        transactions.inTransaction("create the lock tables", connection -> {
            try (PreparedStatement ps = connection.prepareStatement(dialect.schemaCreationLock())) {
                ps.setLong(1, LockKeys.numericKey(LockKeys.schemaKey(tables.prefix())));
                ps.execute();
            }
            return runScript.run(connection);
        });
    }

    /**
     * Where DDL commits statement by statement, another node creating the same tables at the same
     * moment can make an {@code IF NOT EXISTS} fail half-way (H2); once it is done, the script runs
     * through.
     */
    private void createSchemaInAutoCommit(StoreTransactions.SqlWork<Void> runScript) {
        for (int attempt = 1; ; attempt++) {
            try {
                transactions.autoCommit("create the lock tables", runScript);
                return;
            }
            catch (LockUnavailableException ex) {
                if (attempt == SCHEMA_ATTEMPTS) {
                    throw ex;
                }
                log.debug("Creating the lock tables failed, trying again: {}", ex.getMessage());
                try {
                    Thread.sleep(50L * attempt);
                }
                catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw ex;
                }
            }
        }
    }
}
