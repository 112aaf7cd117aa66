package dev.locks.bench;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

import javax.sql.DataSource;

import dev.locks.HolderQuery;
import dev.locks.LockHolder;
import dev.locks.LockKind;
import dev.locks.LockMode;
import dev.locks.LockPath;
import dev.locks.store.Grant;
import dev.locks.store.GrantRequest;
import dev.locks.store.GrantResult;
import dev.locks.store.LockStore;
import dev.locks.store.PendingRelease;
import dev.locks.store.WaitGraphRow;

/**
 * A measuring prototype, not the library: exclusive path grants on MariaDB kept in place, in one of
 * two {@link Design designs}, behind the store SPI so that the service, its handles and its renewal
 * run as they do for the library.
 *
 * <p>Both take the grant's token from a {@code SEQUENCE} and end a released lease in place instead
 * of deleting a row, so that a release leaves nothing for InnoDB's purge in the rows the counts
 * read. The grant's block is today's MariaDB block with a different write at its end.
 *
 * <p>Anything else (shared grants, semaphores, singletons, lock-at-least-for, queued requests) is
 * refused: the prototype answers only the question what each design would win against ShedLock
 * (BENCHMARKS.md, twenty-third pass; {@code docs/in-place-grants.md}).
 */
final class InPlaceGrantPrototype implements LockStore {

    /** Where an exclusive grant lives. */
    enum Design {

        /**
         * In the node row of its path, which the grant already locks exclusively
         * ({@code docs/in-place-grants.md}): the counts add two branches, grants in node rows by key
         * and by subtree range, and still count {@code held} and {@code wait}, which stay quiet as
         * they would with only shared grants in them.
         */
        NODE_ROW("node", "locks, grants in node rows (prototype)"),

        /**
         * In a row of {@code held} as today, but a grant takes over an expired row of its path where
         * there is one, and a release ends the lease instead of deleting the row. The rows carry the
         * token in a column of its own, and the key index loses {@code expires_at}, so that ending a
         * lease changes no entry the counts read. The counts are today's.
         */
        REUSED_HELD_ROW("held", "locks, held rows reused (prototype)");

        /** Its name in {@code -Dlocks.bench.inPlacePrototype}. */
        final String option;

        /** Its name in the benchmark's tables. */
        final String label;

        Design(String option, String label) {
            this.option = option;
            this.label = label;
        }
    }

    private final Design design;

    private final DataSource pool;

    private final LockStore delegate;

    private final String node;

    private final String held;

    private final String wait;

    private final String sequence;

    /** The node row each live grant of this store sits in, for release and renewal. */
    private final Map<String, byte[]> keysOfGrants = new ConcurrentHashMap<>();

    /**
     * @param design where grants live
     * @param pool the connections
     * @param delegate the library's store on {@code prefix}'s tables: everything but grants and releases
     * @param prefix the library's table prefix; the prototype adds {@code <prefix>iptoken} and, for
     *               {@link Design#NODE_ROW}, {@code <prefix>ipnode}, which {@link #drop} removes; for
     *               {@link Design#REUSED_HELD_ROW} it changes {@code <prefix>held}
     */
    InPlaceGrantPrototype(Design design, DataSource pool, LockStore delegate, String prefix) {
        this.design = design;
        this.pool = pool;
        this.delegate = delegate;
        this.node = prefix + (design == Design.NODE_ROW ? "ipnode" : "node");
        this.held = prefix + "held";
        this.wait = prefix + "wait";
        this.sequence = prefix + "iptoken";
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE SEQUENCE " + sequence + " CACHE 1000");
            if (design == Design.REUSED_HELD_ROW) {
                st.execute("ALTER TABLE " + held + " ADD COLUMN token BIGINT NULL, DROP INDEX " + held + "_key,"
                        + " ADD INDEX " + held + "_key (lock_key)");
                return;
            }
            st.execute("CREATE TABLE " + node + " (lock_key BINARY(32) NOT NULL, created_at DATETIME(6) NOT NULL,"
                    + " scope_key BINARY(32) NOT NULL, path VARBINARY(16000) NOT NULL, kind CHAR(1) CHARACTER SET ascii NULL,"
                    + " tenant VARBINARY(760) NULL, grant_id CHAR(32) CHARACTER SET ascii NULL,"
                    + " owner_token CHAR(32) CHARACTER SET ascii NULL, token BIGINT NULL,"
                    + " node VARCHAR(255) CHARACTER SET utf8mb4 NULL, thread VARCHAR(255) CHARACTER SET utf8mb4 NULL,"
                    + " acquired_at DATETIME(6) NULL, expires_at DATETIME(6) NULL, PRIMARY KEY (lock_key),"
                    + " KEY " + node + "_subtree (scope_key, path(3000)), KEY " + node + "_created (created_at))"
                    + " ENGINE=InnoDB ROW_FORMAT=DYNAMIC");
        }
        catch (SQLException ex) {
            throw new IllegalStateException("Cannot create the prototype's tables: " + ex.getMessage(), ex);
        }
    }

    /** Drops the prototype's sequence, and its node table if it made one. */
    void drop() {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            if (design == Design.NODE_ROW) {
                st.execute("DROP TABLE IF EXISTS " + node);
            }
            st.execute("DROP SEQUENCE IF EXISTS " + sequence);
        }
        catch (SQLException ex) {
            System.err.println("Dropping the prototype's tables failed: " + ex);
        }
    }

    @Override
    public GrantResult tryGrant(GrantRequest request) {
        if (request.kind() != LockKind.PATH || request.mode() != LockMode.EXCLUSIVE || request.paths().size() != 1
                || request.ticket() != 0) {
            throw new UnsupportedOperationException("The prototype grants one exclusive path, unqueued: " + request);
        }
        LockPath path = request.paths().get(0);
        List<LockPath> ancestors = path.ancestors();
        byte[] scope = sha256(request.tenant(), null);
        byte[] key = sha256(request.tenant(), path.value());
        List<byte[]> ancestorKeys = new ArrayList<>();
        for (LockPath a : ancestors) {
            ancestorKeys.add(sha256(request.tenant(), a.value()));
        }
        List<byte[]> allKeys = new ArrayList<>(ancestorKeys);
        allKeys.add(key);
        byte[] pathBytes = bytes(path.value());
        byte[] from = bytes(path.value() + "/");
        byte[] to = bytes(path.value() + "0");
        Block block = new Block();
        block.sql.append("BEGIN NOT ATOMIC DECLARE grant_time DATETIME(6); DECLARE grant_lease BIGINT DEFAULT ?;"
                + " DECLARE grant_conflicts INT; DECLARE grant_waited INT DEFAULT 0; DECLARE grant_token BIGINT;"
                + " SET TRANSACTION ISOLATION LEVEL READ COMMITTED; START TRANSACTION;");
        block.values.add(request.lease().toNanos() / 1000);
        if (!ancestors.isEmpty()) {
            block.sql.append(" INSERT IGNORE INTO ").append(node).append(nodeColumns()).append(" VALUES ");
            for (int i = 0; i < ancestors.size(); i++) {
                block.sql.append(i == 0 ? "" : ",");
                nodeValues(block, ancestorKeys.get(i), scope, bytes(ancestors.get(i).value()));
            }
            block.sql.append(';');
        }
        block.sql.append(" INSERT INTO ").append(node).append(nodeColumns()).append(" VALUES");
        nodeValues(block, key, scope, pathBytes);
        block.sql.append(" ON DUPLICATE KEY UPDATE lock_key = lock_key;");
        block.sql.append(" SET grant_time = UTC_TIMESTAMP(6);");
        Count count = new Count(allKeys, scope, from, to, request.owner());
        // today's order: a locking count that does not wait; on a locked row the snapshot, and if that
        // finds nothing, a locking count that waits a second, then the snapshot again
        block.sql.append(" BEGIN DECLARE CONTINUE HANDLER FOR 1205 SET grant_waited = 1;"
                + " SET STATEMENT innodb_lock_wait_timeout = 0 FOR");
        count.append(block, true);
        block.sql.append(" END; IF grant_waited = 1 THEN SET grant_waited = 0;");
        count.append(block, false);
        block.sql.append(" IF grant_conflicts = 0 THEN BEGIN DECLARE CONTINUE HANDLER FOR 1205 SET grant_waited = 1;"
                + " SET STATEMENT innodb_lock_wait_timeout = 1 FOR");
        count.append(block, true);
        block.sql.append(" END; IF grant_waited = 1 THEN");
        count.append(block, false);
        block.sql.append(" END IF; END IF; END IF;");
        // one NEXTVAL per grant: in a multi-row UPDATE it would be evaluated per row
        block.sql.append(" IF grant_conflicts = 0 THEN SET grant_token = NEXTVAL(").append(sequence).append(");");
        if (design == Design.NODE_ROW) {
            block.sql.append(" UPDATE ").append(node).append(" SET kind = 'P', tenant = ?, grant_id = ?, owner_token = ?,"
                    + " token = grant_token, node = ?, thread = ?, acquired_at = grant_time,"
                    + " expires_at = grant_time + INTERVAL grant_lease MICROSECOND WHERE lock_key = ?;");
            block.values.addAll(List.of(bytes(request.tenant()), request.grantId(), request.owner(), request.node(),
                    request.thread(), key));
        }
        else {
            // the node row, held exclusively, keeps any other grant of the path from taking the same row
            String columns = " grant_id = ?, owner_token = ?, kind = 'P', tenant = ?, path = ?, lock_key = ?, scope_key = ?,"
                    + " lock_mode = 'X', permits = 0, node = ?, thread = ?, acquired_at = grant_time,"
                    + " expires_at = grant_time + INTERVAL grant_lease MICROSECOND, token = grant_token";
            List<Object> values = List.of(request.grantId(), request.owner(), bytes(request.tenant()), pathBytes, key,
                    scope, request.node(), request.thread());
            block.sql.append(" UPDATE ").append(held).append(" FORCE INDEX (").append(held).append("_key) SET")
                    .append(columns).append(" WHERE lock_key = ? AND expires_at <= grant_time LIMIT 1;"
                            + " IF ROW_COUNT() = 0 THEN INSERT INTO ").append(held).append(" SET").append(columns)
                    .append("; END IF;");
            block.values.addAll(values);
            block.values.add(key);
            block.values.addAll(values);
        }
        block.sql.append(" SELECT grant_token, grant_time + INTERVAL grant_lease MICROSECOND;"
                + " ELSE SELECT NULL, NULL; END IF; COMMIT; END");
        try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(block.sql.toString())) {
            for (int i = 0; i < block.values.size(); i++) {
                ps.setObject(i + 1, block.values.get(i));
            }
            boolean results = ps.execute();
            while (!results && ps.getUpdateCount() != -1) {
                results = ps.getMoreResults();
            }
            try (ResultSet rs = ps.getResultSet()) {
                rs.next();
                long token = rs.getLong(1);
                if (rs.wasNull()) {
                    return GrantResult.busy(List.of());
                }
                Instant expires = rs.getObject(2, LocalDateTime.class).toInstant(ZoneOffset.UTC);
                keysOfGrants.put(request.grantId(), key);
                return GrantResult.granted(new Grant(request.grantId(), request.owner(), token, 1, expires));
            }
        }
        catch (SQLException ex) {
            throw new IllegalStateException("The prototype's grant of " + path + " failed: " + ex.getMessage(), ex);
        }
    }

    @Override
    public boolean release(Grant grant, Duration keepFor, PendingRelease pending) {
        // the benchmarks release outside transactions, so pending is never told
        if (!keepFor.isZero()) {
            throw new UnsupportedOperationException("The prototype does not keep locks for lockAtLeastFor");
        }
        byte[] key = keysOfGrants.remove(grant.grantId());
        // adding nothing hides expires_at from the range optimiser, as the library's release does, so
        // that the statement cannot read through the expiry index and lock every live grant
        String sql = design == Design.NODE_ROW
                ? "UPDATE " + node + " SET expires_at = UTC_TIMESTAMP(6) WHERE lock_key = ? AND grant_id = ?"
                        + " AND owner_token = ? AND expires_at + INTERVAL 0 SECOND > UTC_TIMESTAMP(6)"
                : "UPDATE " + held + " SET expires_at = UTC_TIMESTAMP(6) WHERE grant_id = ? AND owner_token = ?"
                        + " AND expires_at + INTERVAL 0 SECOND > UTC_TIMESTAMP(6)";
        try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            int i = 1;
            if (design == Design.NODE_ROW) {
                ps.setBytes(i++, key);
            }
            ps.setString(i++, grant.grantId());
            ps.setString(i, grant.owner());
            return ps.executeUpdate() == 1;
        }
        catch (SQLException ex) {
            throw new IllegalStateException("The prototype's release failed: " + ex.getMessage(), ex);
        }
    }

    @Override
    public Map<String, Instant> renew(Collection<Grant> grants, Duration lease) {
        if (design == Design.REUSED_HELD_ROW) {
            // the rows are held rows with their grant ids, as the library's renewal reads them
            return delegate.renew(grants, lease);
        }
        Map<String, Instant> renewed = new HashMap<>();
        try (Connection c = pool.getConnection();
                PreparedStatement ps = c.prepareStatement("UPDATE " + node + " SET expires_at = GREATEST(expires_at,"
                        + " UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) WHERE lock_key = ? AND grant_id = ?"
                        + " AND expires_at > UTC_TIMESTAMP(6)")) {
            // read before the updates, so that the lease end reported is one each renewed row holds at least
            Instant asked = delegate.currentTime().plus(lease);
            for (Grant grant : grants) {
                byte[] key = keysOfGrants.get(grant.grantId());
                if (key == null) {
                    continue;
                }
                ps.setLong(1, lease.toNanos() / 1000);
                ps.setBytes(2, key);
                ps.setString(3, grant.grantId());
                if (ps.executeUpdate() == 1) {
                    renewed.put(grant.grantId(), asked);
                }
            }
        }
        catch (SQLException ex) {
            throw new IllegalStateException("The prototype's renewal failed: " + ex.getMessage(), ex);
        }
        return renewed;
    }

    @Override
    public List<LockHolder> conflicts(GrantRequest request) {
        return List.of();
    }

    @Override
    public long enqueue(GrantRequest request, Duration waitLease) {
        throw new UnsupportedOperationException("The prototype does not queue: a benchmark's grant found a conflict");
    }

    @Override
    public boolean keepWaiting(GrantRequest request, Duration waitLease) {
        throw new UnsupportedOperationException("The prototype does not queue");
    }

    @Override
    public void dequeue(GrantRequest request) {
        throw new UnsupportedOperationException("The prototype does not queue");
    }

    @Override
    public List<WaitGraphRow> waitGraph(LockKind kind, String tenant) {
        return List.of();
    }

    @Override
    public List<LockHolder> holders(LockKind kind, String tenant, LockPath path) {
        throw new UnsupportedOperationException("The prototype does not list holders");
    }

    @Override
    public List<LockHolder> list(HolderQuery query) {
        throw new UnsupportedOperationException("The prototype does not list holders");
    }

    @Override
    public List<LockHolder> forceRelease(long lockId) {
        throw new UnsupportedOperationException("The prototype does not force releases");
    }

    @Override
    public void onRemoteRelease(BiConsumer<LockKind, String> subscriber) {
        delegate.onRemoteRelease(subscriber);
    }

    @Override
    public Instant currentTime() {
        return delegate.currentTime();
    }

    @Override
    public int purgeExpired() {
        return delegate.purgeExpired();
    }

    private String nodeColumns() {
        return design == Design.NODE_ROW ? " (lock_key, created_at, scope_key, path)" : " (lock_key, created_at)";
    }

    /** One row of a node insert: node rows in place carry their path, so that subtree scans find them. */
    private void nodeValues(Block block, byte[] key, byte[] scope, byte[] path) {
        block.values.add(key);
        if (design == Design.NODE_ROW) {
            block.sql.append("(?, UTC_TIMESTAMP(6), ?, ?)");
            block.values.add(scope);
            block.values.add(path);
        }
        else {
            block.sql.append("(?, UTC_TIMESTAMP(6))");
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] sha256(String tenant, String path) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(bytes(tenant));
            if (path != null) {
                digest.update((byte) 0);
                digest.update(bytes(path));
            }
            return digest.digest();
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException(ex);
        }
    }

    private static final class Block {

        final StringBuilder sql = new StringBuilder();

        final List<Object> values = new ArrayList<>();
    }

    /**
     * The count of live conflicting grants and earlier waiters: grants in node rows by key (the path
     * and its ancestors) and by subtree range, rows of {@code held} the same two ways, and waiting rows
     * by snapshot, as today's block counts {@code held} and {@code wait}.
     */
    private final class Count {

        private final List<byte[]> keys;

        private final byte[] scope;

        private final byte[] from;

        private final byte[] to;

        private final String owner;

        Count(List<byte[]> keys, byte[] scope, byte[] from, byte[] to, String owner) {
            this.keys = keys;
            this.scope = scope;
            this.from = from;
            this.to = to;
            this.owner = owner;
        }

        void append(Block block, boolean locking) {
            String lock = locking ? " LOCK IN SHARE MODE" : "";
            block.sql.append(" SELECT COUNT(*) INTO grant_conflicts FROM (");
            if (design == Design.NODE_ROW) {
                byKey(block, node, "PRIMARY", lock);
                block.sql.append(" UNION ALL");
                bySubtree(block, node, node + "_subtree", lock);
                block.sql.append(" UNION ALL");
            }
            byKey(block, held, held + "_key", lock);
            block.sql.append(" UNION ALL");
            bySubtree(block, held, held + "_subtree", lock);
            block.sql.append(" UNION ALL");
            byKey(block, wait, held + "_key", "");
            block.sql.append(" UNION ALL");
            bySubtree(block, wait, held + "_subtree", "");
            block.sql.append(" LIMIT 1) AS conflicts;");
        }

        private void byKey(Block block, String table, String index, String lock) {
            block.sql.append(" (SELECT NULL FROM ").append(table).append(" FORCE INDEX (").append(index)
                    .append(") WHERE lock_key IN (");
            for (int i = 0; i < keys.size(); i++) {
                block.sql.append(i == 0 ? "?" : ",?");
                block.values.add(keys.get(i));
            }
            block.sql.append(") AND expires_at + INTERVAL 0 SECOND > grant_time AND owner_token <> ?").append(lock)
                    .append(')');
            block.values.add(owner);
        }

        private void bySubtree(Block block, String table, String index, String lock) {
            block.sql.append(" (SELECT NULL FROM ").append(table).append(" FORCE INDEX (").append(index)
                    .append(") WHERE scope_key = ? AND path >= ? AND path < ?"
                            + " AND expires_at + INTERVAL 0 SECOND > grant_time AND owner_token <> ?")
                    .append(lock).append(')');
            block.values.add(scope);
            block.values.add(from);
            block.values.add(to);
            block.values.add(owner);
        }
    }
}
