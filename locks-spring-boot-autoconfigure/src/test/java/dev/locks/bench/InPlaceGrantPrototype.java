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
import dev.locks.store.WaitGraphRow;

/**
 * A measuring prototype, not the library: the design of {@code docs/in-place-grants.md} for
 * exclusive path grants on MariaDB, behind the store SPI so that the service, its handles and its
 * renewal run as they do for the library.
 *
 * <p>An exclusive grant writes its holder into the node row of its path, which the grant already
 * locks exclusively, with a token from a {@code SEQUENCE}; its release ends the lease in that row.
 * The grant's block is today's MariaDB block with two more counted branches (grants in node rows by
 * key and by subtree range) and an {@code UPDATE} where today's has the {@code INSERT}. It still
 * counts the {@code held} and {@code wait} tables (quiet here, as they would be with shared grants
 * only), so that it costs what the design would.
 *
 * <p>Anything else (shared grants, semaphores, singletons, lock-at-least-for, queued requests) is
 * refused: the prototype answers only the question whether the design reaches ShedLock's rate
 * (BENCHMARKS.md, twenty-third pass).
 */
final class InPlaceGrantPrototype implements LockStore {

    private final DataSource pool;

    private final LockStore delegate;

    private final String node;

    private final String held;

    private final String wait;

    private final String sequence;

    /** The node row each live grant of this store sits in, for release and renewal. */
    private final Map<String, byte[]> keysOfGrants = new ConcurrentHashMap<>();

    /**
     * @param pool the connections
     * @param delegate the library's store on {@code prefix}'s tables: everything but grants and releases
     * @param prefix the library's table prefix; the prototype adds {@code <prefix>ipnode} and
     *               {@code <prefix>iptoken}, which {@link #drop} removes
     */
    InPlaceGrantPrototype(DataSource pool, LockStore delegate, String prefix) {
        this.pool = pool;
        this.delegate = delegate;
        this.node = prefix + "ipnode";
        this.held = prefix + "held";
        this.wait = prefix + "wait";
        this.sequence = prefix + "iptoken";
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + node + " (lock_key BINARY(32) NOT NULL, created_at DATETIME(6) NOT NULL,"
                    + " scope_key BINARY(32) NOT NULL, path VARBINARY(16000) NOT NULL, kind CHAR(1) CHARACTER SET ascii NULL,"
                    + " tenant VARBINARY(760) NULL, grant_id CHAR(32) CHARACTER SET ascii NULL,"
                    + " owner_token CHAR(32) CHARACTER SET ascii NULL, token BIGINT NULL,"
                    + " node VARCHAR(255) CHARACTER SET utf8mb4 NULL, thread VARCHAR(255) CHARACTER SET utf8mb4 NULL,"
                    + " acquired_at DATETIME(6) NULL, expires_at DATETIME(6) NULL, PRIMARY KEY (lock_key),"
                    + " KEY " + node + "_subtree (scope_key, path(3000)), KEY " + node + "_created (created_at))"
                    + " ENGINE=InnoDB ROW_FORMAT=DYNAMIC");
            st.execute("CREATE SEQUENCE " + sequence + " CACHE 1000");
        }
        catch (SQLException ex) {
            throw new IllegalStateException("Cannot create the prototype's tables: " + ex.getMessage(), ex);
        }
    }

    /** Drops the prototype's table and sequence. */
    void drop() {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + node);
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
            block.sql.append(" INSERT IGNORE INTO ").append(node).append(" (lock_key, created_at, scope_key, path) VALUES ");
            for (int i = 0; i < ancestors.size(); i++) {
                block.sql.append(i == 0 ? "" : ",").append("(?, UTC_TIMESTAMP(6), ?, ?)");
                block.values.add(ancestorKeys.get(i));
                block.values.add(scope);
                block.values.add(bytes(ancestors.get(i).value()));
            }
            block.sql.append(';');
        }
        block.sql.append(" INSERT INTO ").append(node).append(" (lock_key, created_at, scope_key, path) VALUES"
                + " (?, UTC_TIMESTAMP(6), ?, ?) ON DUPLICATE KEY UPDATE lock_key = lock_key;");
        block.values.add(key);
        block.values.add(scope);
        block.values.add(pathBytes);
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
        block.sql.append(" IF grant_conflicts = 0 THEN SET grant_token = NEXTVAL(").append(sequence).append(");"
                + " UPDATE ").append(node).append(" SET kind = 'P', tenant = ?, grant_id = ?, owner_token = ?,"
                + " token = grant_token, node = ?, thread = ?, acquired_at = grant_time,"
                + " expires_at = grant_time + INTERVAL grant_lease MICROSECOND WHERE lock_key = ?;"
                + " SELECT grant_token, grant_time + INTERVAL grant_lease MICROSECOND;"
                + " ELSE SELECT NULL, NULL; END IF; COMMIT; END");
        block.values.add(bytes(request.tenant()));
        block.values.add(request.grantId());
        block.values.add(request.owner());
        block.values.add(request.node());
        block.values.add(request.thread());
        block.values.add(key);
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
    public boolean release(Grant grant, Duration keepFor) {
        if (!keepFor.isZero()) {
            throw new UnsupportedOperationException("The prototype does not keep locks for lockAtLeastFor");
        }
        byte[] key = keysOfGrants.remove(grant.grantId());
        try (Connection c = pool.getConnection();
                PreparedStatement ps = c.prepareStatement("UPDATE " + node + " SET expires_at = UTC_TIMESTAMP(6)"
                        + " WHERE lock_key = ? AND grant_id = ? AND owner_token = ? AND expires_at > UTC_TIMESTAMP(6)")) {
            ps.setBytes(1, key);
            ps.setString(2, grant.grantId());
            ps.setString(3, grant.owner());
            return ps.executeUpdate() == 1;
        }
        catch (SQLException ex) {
            throw new IllegalStateException("The prototype's release failed: " + ex.getMessage(), ex);
        }
    }

    @Override
    public Map<String, Instant> renew(Collection<Grant> grants, Duration lease) {
        Map<String, Instant> renewed = new HashMap<>();
        try (Connection c = pool.getConnection();
                PreparedStatement ps = c.prepareStatement("UPDATE " + node + " SET expires_at = GREATEST(expires_at,"
                        + " UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) WHERE lock_key = ? AND grant_id = ?"
                        + " AND expires_at > UTC_TIMESTAMP(6)")) {
            for (Grant grant : grants) {
                byte[] key = keysOfGrants.get(grant.grantId());
                if (key == null) {
                    continue;
                }
                Instant asked = delegate.currentTime().plus(lease);
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
            byKey(block, node, "PRIMARY", lock);
            block.sql.append(" UNION ALL");
            bySubtree(block, node, node + "_subtree", lock);
            block.sql.append(" UNION ALL");
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
