package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.locks.jdbc.JdbcLockStore;
import dev.locks.jdbc.SqlDialect;
import dev.locks.store.LockStore;
import dev.locks.testing.TestDatabase;

/**
 * While the store announces other nodes' releases, a waiter polls at the notified interval instead
 * of its backoff; just after queueing it keeps the backoff, for a release that saw no queued waiter
 * yet. The store here is a JDBC store on H2 that says it announces releases when told to,
 * and counts the waiter's looks. The lock is held by another owner throughout, so every look fails.
 */
class NotifiedPollingTest {

    private static final Duration WAIT = Duration.ofMillis(1000);

    private final AtomicInteger looks = new AtomicInteger();

    private long enqueueDelayMillis;

    private HikariDataSource pool;

    private String prefix;

    private JdbcLockStore jdbc;

    private final java.util.List<DefaultLockService> services = new java.util.ArrayList<>();

    @BeforeEach
    void start() {
        prefix = TestDatabase.uniquePrefix();
        pool = TestDatabase.H2.newPool(4);
        jdbc = new JdbcLockStore(pool, SqlDialect.detect(pool), prefix);
        jdbc.createSchema();
    }

    @AfterEach
    void stop() {
        services.forEach(DefaultLockService::close);
        TestDatabase.dropTables(pool, prefix);
        pool.close();
    }

    @Test
    void aWaiterPollsAtTheNotifiedIntervalWhileReleasesAreAnnounced() {
        int announced = looksDuringAWaitOnAHeldLock(true);

        // 1 s at 200 ms: about five looks; at the 10 ms backoff it would be nearer a hundred
        assertThat(announced).isBetween(2, 10);
    }

    @Test
    void aWaiterPollsWithItsBackoffWhenReleasesAreNotAnnounced() {
        int unannounced = looksDuringAWaitOnAHeldLock(false);

        assertThat(unannounced).isGreaterThan(20);
    }

    @Test
    void aWaiterPollsWithItsBackoffForTwiceItsEnqueueTimeBeforeRelyingOnNotices() {
        // a release that looked for waiters before the queue row committed sends no notice
        enqueueDelayMillis = 100;

        int announced = looksDuringAWaitOnAHeldLock(true);

        // about twenty looks in the first 200 ms at the backoff, then about four at 200 ms
        assertThat(announced).isGreaterThan(15);
    }

    private int looksDuringAWaitOnAHeldLock(boolean announces) {
        DefaultLockService holder = service(jdbc);
        DefaultLockService waiter = service(counting(jdbc, announces));
        LockRequest request = LockRequest.paths("/polled").waitAtMost(WAIT).build();
        LockHandle held = holder.acquire(request);
        assertThatThrownBy(() -> waiter.acquire(request)).isInstanceOf(LockTimeoutException.class);
        held.release();
        return looks.get();
    }

    private DefaultLockService service(LockStore store) {
        DefaultLockService service = new DefaultLockService(store, LockSettings.builder().nodeId("n" + services.size())
                .slowWaitLog(null).purgeInterval(null).notifiedPollInterval(Duration.ofMillis(200)).build(), null);
        services.add(service);
        return service;
    }

    private LockStore counting(LockStore store, boolean announces) {
        return (LockStore) Proxy.newProxyInstance(LockStore.class.getClassLoader(), new Class<?>[] { LockStore.class },
                (proxy, method, args) -> {
                    if (method.getName().equals("announcesReleases")) {
                        return announces;
                    }
                    if (method.getName().equals("conflicts")) {
                        looks.incrementAndGet();
                    }
                    if (method.getName().equals("enqueue")) {
                        Thread.sleep(enqueueDelayMillis);
                    }
                    try {
                        return method.invoke(store, args);
                    }
                    catch (InvocationTargetException ex) {
                        throw ex.getCause();
                    }
                });
    }
}
