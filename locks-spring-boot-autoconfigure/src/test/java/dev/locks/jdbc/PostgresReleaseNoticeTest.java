package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.locks.LockKind;
import dev.locks.LockMode;
import dev.locks.PathNormalizer;
import dev.locks.store.Grant;
import dev.locks.store.GrantRequest;
import dev.locks.testing.TestDatabase;

/**
 * Release notices on PostgreSQL reach the other stores but not the sender, which woke its own
 * waiters when it released; a force-release, which may free the sender's own locks, reaches all.
 * Every check reads the first notice a store heard, so a notice that should have been skipped shows
 * up as the wrong tenant rather than as a timing.
 */
class PostgresReleaseNoticeTest extends LockServiceContract {

    private JdbcLockStore a;

    private javax.sql.DataSource poolOfA;

    private JdbcLockStore b;

    // fresh per test: the instance lives for the class, and a closed listener may still deliver
    private BlockingQueue<String> heardByA;

    private BlockingQueue<String> heardByB;

    private final String warmUp = "warm-" + UUID.randomUUID();

    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @BeforeEach
    void twoListeningStores() throws Exception {
        poolOfA = newPool(4);
        a = new JdbcLockStore(poolOfA, new PostgresDialect(), prefix);
        b = new JdbcLockStore(newPool(4), new PostgresDialect(), prefix);
        BlockingQueue<String> toA = new LinkedBlockingQueue<>();
        BlockingQueue<String> toB = new LinkedBlockingQueue<>();
        heardByA = toA;
        heardByB = toB;
        a.onRemoteRelease((kind, tenant) -> toA.add(kind.code() + tenant));
        b.onRemoteRelease((kind, tenant) -> toB.add(kind.code() + tenant));
        // LISTEN starts on the listeners' own threads: release until each has heard the other once
        waitingIn(warmUp);
        untilHeard(b, heardByA);
        untilHeard(a, heardByB);
    }

    @AfterEach
    void closeStores() {
        a.close();
        b.close();
    }

    @Test
    void aStoreHearsAnotherStoresReleaseButNotItsOwn() throws Exception {
        String own = "own-" + UUID.randomUUID();
        String others = "others-" + UUID.randomUUID();
        waitingIn(own);
        waitingIn(others);

        grantAndRelease(a, own);
        grantAndRelease(b, others);

        assertThat(firstHeard(heardByB)).isEqualTo("P" + own);
        assertThat(firstHeard(heardByA)).as("the first notice a heard").isEqualTo("P" + others);
    }

    @Test
    void aForceReleaseIsHeardByTheStoreThatSentItToo() throws Exception {
        String forced = "forced-" + UUID.randomUUID();
        waitingIn(forced);
        Grant grant = a.tryGrant(request(forced, "/forced")).grant();

        assertThat(a.forceRelease(grant.fencingToken())).hasSize(1);

        assertThat(firstHeard(heardByA)).isEqualTo("P" + forced);
    }

    @Test
    void aReleaseInTheCallersTransactionIsHeardByTheOtherStoresOnly() throws Exception {
        // the engine wakes the sending node's waiters itself when the transaction ends (PendingRelease.ended)
        String joined = "joined-" + UUID.randomUUID();
        String others = "others-" + UUID.randomUUID();
        waitingIn(joined);
        waitingIn(others);
        Grant grant = a.tryGrant(request(joined, "/joined")).grant();

        new TransactionTemplate(new DataSourceTransactionManager(poolOfA))
                .executeWithoutResult(status -> assertThat(a.release(grant, Duration.ZERO)).isTrue());
        grantAndRelease(b, others);

        assertThat(firstHeard(heardByB)).isEqualTo("P" + joined);
        assertThat(firstHeard(heardByA)).as("the first notice a heard").isEqualTo("P" + others);
    }

    @Test
    void aListeningStoreAnnouncesReleasesUntilItIsClosed() {
        assertThat(a.announcesReleases()).as("listening, it has heard b").isTrue();

        a.close();

        assertThat(a.announcesReleases()).isFalse();
    }

    @Test
    void noticesReachAListenerWhoseTablePrefixHasCapitals() throws Exception {
        // PostgreSQL folds the unquoted table names, so these stores share a's and b's tables
        String capitals = prefix.toUpperCase(java.util.Locale.ROOT);
        JdbcLockStore sender = new JdbcLockStore(poolOfA, new PostgresDialect(), capitals);
        JdbcLockStore listener = new JdbcLockStore(newPool(4), new PostgresDialect(), capitals);
        BlockingQueue<String> heard = new LinkedBlockingQueue<>();
        listener.onRemoteRelease((kind, tenant) -> heard.add(kind.code() + tenant));
        try {
            waitingIn(warmUp);

            boolean heardOne = untilHeard(sender, heard);

            assertThat(heardOne).as("a notice heard on the channel " + capitals + "released").isTrue();
        }
        finally {
            listener.close();
            sender.close();
        }
    }

    @Test
    void aListenerWhoseNoticesNeverComeBackDoesNotAnnounceReleases() throws Exception {
        // LISTEN succeeds, but the session waiting for notices is not listening, as behind some poolers
        JdbcLockStore deaf = new JdbcLockStore(listenSwallowing(newPool(4)), new PostgresDialect(), prefix);
        deaf.onRemoteRelease((kind, tenant) -> { });
        try {
            // past the probe's 5 s: neither sending the probe nor its time running out may count as hearing
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(7);
            while (System.nanoTime() < until) {
                assertThat(deaf.announcesReleases()).as("announces releases it cannot hear").isFalse();
                Thread.sleep(50);
            }
        }
        finally {
            deaf.close();
        }
    }

    /**
     * A pool whose connections run every LISTEN as a plain SELECT: the session never hears a notice,
     * its own probe included. Prepared statements (the probe) pass untouched.
     */
    private static DataSource listenSwallowing(DataSource pool) {
        return proxy(DataSource.class, (method, args) -> {
            Object result = invoke(pool, method, args);
            return result instanceof Connection connection ? listenSwallowing(connection) : result;
        });
    }

    private static Connection listenSwallowing(Connection connection) {
        return proxy(Connection.class, (method, args) -> {
            Object result = invoke(connection, method, args);
            if (!method.getName().equals("createStatement") || !(result instanceof Statement statement)) {
                return result;
            }
            return proxy(Statement.class, (call, callArgs) -> call.getName().equals("execute") && callArgs.length == 1
                    && callArgs[0] instanceof String sql && sql.startsWith("LISTEN")
                            ? invoke(statement, call, new Object[] { "SELECT 1" })
                            : invoke(statement, call, callArgs));
        });
    }

    private interface Call {

        Object on(Method method, Object[] args) throws Throwable;
    }

    private static <T> T proxy(Class<T> type, Call call) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] { type },
                (proxy, method, args) -> call.on(method, args == null ? new Object[0] : args)));
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        }
        catch (InvocationTargetException ex) {
            throw ex.getCause();
        }
    }

    /** Notices go only to tenants where someone waits: a waiter of a third node, in {@code tenant}. */
    private void waitingIn(String tenant) {
        GrantRequest waiter = new GrantRequest(LockKind.PATH, tenant, paths("/elsewhere"), LockMode.EXCLUSIVE,
                Duration.ofSeconds(30), 0, "f".repeat(32), UUID.randomUUID().toString().replace("-", ""), "node-c",
                "thread", 0, false);
        a.enqueue(waiter, Duration.ofSeconds(60));
    }

    /** @return whether a notice was heard within 30 s */
    private boolean untilHeard(JdbcLockStore sender, BlockingQueue<String> heard) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        do {
            grantAndRelease(sender, warmUp);
            if (heard.poll(100, TimeUnit.MILLISECONDS) != null) {
                return true;
            }
        }
        while (System.nanoTime() < deadline);
        return false;
    }

    /** The first notice heard after the warm-up, whose late notices may still arrive. */
    private String firstHeard(BlockingQueue<String> heard) throws InterruptedException {
        String notice;
        do {
            notice = heard.poll(10, TimeUnit.SECONDS);
        }
        while (notice != null && notice.endsWith(warmUp));
        return notice;
    }

    private static void grantAndRelease(JdbcLockStore store, String tenant) {
        Grant grant = store.tryGrant(request(tenant, "/released")).grant();
        assertThat(store.release(grant, Duration.ZERO)).isTrue();
    }

    private static GrantRequest request(String tenant, String path) {
        return new GrantRequest(LockKind.PATH, tenant, paths(path), LockMode.EXCLUSIVE, Duration.ofSeconds(30), 0,
                "a".repeat(32), UUID.randomUUID().toString().replace("-", ""), "node-a", "thread", 0, false);
    }

    private static List<dev.locks.LockPath> paths(String path) {
        return List.of(new PathNormalizer(true, 4000).normalize(path));
    }
}
