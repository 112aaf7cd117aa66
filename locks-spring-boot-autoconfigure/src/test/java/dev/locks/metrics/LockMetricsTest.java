package dev.locks.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import dev.locks.LockHandle;
import dev.locks.LockHolder;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.LockTimeoutException;
import dev.locks.LockUnavailableException;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;
import dev.locks.testing.TrappingDataSource;

/** The lock meters after known sequences of lock operations, on H2. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LockMetricsTest {

    private final String prefix = TestDatabase.uniquePrefix();

    private HikariDataSource pool;

    private SimpleMeterRegistry registry;

    private JdbcLockService locks;

    private String tenant;

    @BeforeAll
    void createSchema() {
        pool = TestDatabase.H2.newPool(8);
        JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true).build().close();
    }

    @BeforeEach
    void bindMetrics() {
        tenant = "t-" + UUID.randomUUID();
        registry = new SimpleMeterRegistry();
        locks = service("node-a");
        LockMetrics.bind(locks, registry, false);
    }

    @AfterEach
    void closeService() {
        locks.close();
    }

    @AfterAll
    void dropSchema() {
        TestDatabase.dropTables(pool, prefix);
        pool.close();
    }

    private JdbcLockService service(String node) {
        return JdbcLockService.builder(pool).tablePrefix(prefix)
                .settings(LockSettings.builder().nodeId(node).slowWaitLog(null).renewalTick(Duration.ofMillis(20)).build())
                .build();
    }

    private LockRequest.Builder x(String path) {
        return LockRequest.paths(path).exclusive().tenant(tenant);
    }

    private long acquireCount(String kind, String outcome) {
        Timer timer = registry.find("locks.acquire").tags("kind", kind, "outcome", outcome).timer();
        return timer == null ? 0 : timer.count();
    }

    private double counter(String name, String... tags) {
        var counter = registry.find(name).tags(tags).counter();
        return counter == null ? 0 : counter.count();
    }

    private double gauge(String name) {
        return registry.get(name).gauge().value();
    }

    @Test
    void everyAcquisitionIsTimedByKindAndOutcome() {
        try (LockHandle held = locks.acquire(x("/reports").build());
                LockHandle permit = locks.acquire(LockRequest.semaphore("exports", 2).tenant(tenant).build())) {
            assertThat(locks.tryAcquire(x("/reports/2024").build())).isEmpty();
            assertThat(locks.tryAcquire(LockRequest.singleton("nightly").tenant(tenant).build())).isPresent();
            assertThat(locks.tryAcquire(LockRequest.singleton("nightly").tenant(tenant).build())).isEmpty();
        }

        assertThat(acquireCount("path", "acquired")).isEqualTo(1);
        assertThat(acquireCount("path", "busy")).isEqualTo(1);
        assertThat(acquireCount("semaphore", "acquired")).isEqualTo(1);
        assertThat(acquireCount("singleton", "acquired")).isEqualTo(1);
        assertThat(acquireCount("singleton", "busy")).isEqualTo(1);
        assertThat(registry.find("locks.acquire").timers()).hasSize(5);
    }

    @Test
    void onlyAcquisitionsThatWaitedAreTimedAsWaits() {
        try (LockHandle held = locks.acquire(x("/busy").build())) {
            assertThat(locks.tryAcquire(x("/busy").build())).isEmpty();
            locks.acquire(x("/free").build()).release();
        }
        assertThat(registry.find("locks.wait").timers()).isEmpty();
    }

    @Test
    void aWaitThatTimesOutIsTimedAsATimedOutWait() {
        try (LockHandle held = locks.acquire(x("/busy").build())) {
            assertThatThrownBy(() -> locks.acquire(x("/busy").waitAtMost(Duration.ofMillis(150)).build()))
                    .isInstanceOf(LockTimeoutException.class);
        }
        Timer wait = registry.get("locks.wait").tags("kind", "path", "outcome", "timeout").timer();
        assertThat(wait.count()).isEqualTo(1);
        assertThat(wait.totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(150);
        assertThat(acquireCount("path", "timeout")).isEqualTo(1);
    }

    @Test
    void aWaitThatEndsInAGrantIsTimedAsAnAcquiredWait() throws Exception {
        LockHandle held = locks.acquire(x("/busy").build());
        CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(
                () -> locks.acquire(x("/busy").waitAtMost(Duration.ofSeconds(10)).build()));
        await().atMost(Duration.ofSeconds(5)).until(() -> locks.waitingCount() == 1);
        held.release();
        waiter.get(10, TimeUnit.SECONDS).release();

        assertThat(registry.get("locks.wait").tags("kind", "path", "outcome", "acquired").timer().count()).isEqualTo(1);
        assertThat(acquireCount("path", "acquired")).isEqualTo(2);
    }

    @Test
    void gaugesShowWhatThisNodeHoldsAndHowManyOfItsRequestsWait() throws Exception {
        LockHandle a = locks.acquire(x("/a").build());
        LockHandle b = locks.acquire(x("/b").build());
        assertThat(gauge("locks.held")).isEqualTo(2);
        assertThat(gauge("locks.waiting")).isZero();

        CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(
                () -> locks.acquire(x("/a/child").waitAtMost(Duration.ofSeconds(10)).build()));
        await().atMost(Duration.ofSeconds(5)).until(() -> gauge("locks.waiting") == 1);
        a.release();
        LockHandle child = waiter.get(10, TimeUnit.SECONDS);
        assertThat(gauge("locks.waiting")).isZero();
        assertThat(gauge("locks.held")).isEqualTo(2);

        child.release();
        b.release();
        assertThat(gauge("locks.held")).isZero();
    }

    @Test
    void aReleaseTheStoreCouldNotTakeIsAPendingReleaseUntilItsRetrySucceeds() {
        TrappingDataSource trapping = new TrappingDataSource(pool, TrappingDataSource.releasesIn(prefix));
        try (JdbcLockService failing = JdbcLockService.builder(trapping.dataSource()).tablePrefix(prefix)
                .settings(LockSettings.builder().nodeId("node-f").slowWaitLog(null).build()).build()) {
            // a registry of its own: the shared one already has this node's gauges under the same names
            SimpleMeterRegistry own = new SimpleMeterRegistry();
            LockMetrics.bind(failing, own, false);
            LockHandle handle = failing.acquire(x("/pending").build());
            trapping.failNext("connection reset (test)", 1);

            assertThatThrownBy(handle::release).isInstanceOf(LockUnavailableException.class);
            assertThat(own.get("locks.releases.pending").gauge().value()).isEqualTo(1);
            await().atMost(Duration.ofSeconds(5)).until(() -> own.get("locks.releases.pending").gauge().value() == 0);
            assertThat(failing.holders(tenant, "/pending")).isEmpty();
        }
    }

    @Test
    void releasesAreCountedByKind() {
        locks.acquire(x("/one").build()).release();
        locks.acquire(x("/two").build()).release();
        locks.acquire(LockRequest.semaphore("exports", 3).tenant(tenant).build()).release();

        assertThat(counter("locks.released", "kind", "path")).isEqualTo(2);
        assertThat(counter("locks.released", "kind", "semaphore")).isEqualTo(1);
    }

    @Test
    void theWatchdogsRenewalsAreCounted() {
        LockRequest shortLease = x("/renewed").lease(Duration.ofMillis(300)).build();
        locks.run(shortLease, () -> await().atMost(Duration.ofSeconds(5))
                .until(() -> counter("locks.renewals") >= 2));
        assertThat(counter("locks.lease.lost", "kind", "path")).isZero();
    }

    @Test
    void aForceReleasedLockIsCountedAsALostLease() {
        LockHandle handle = locks.enter(x("/stuck").lease(Duration.ofMillis(600)).build());
        try {
            LockHolder holder = locks.holders(tenant, "/stuck").get(0);
            assertThat(locks.forceRelease(holder.lockId())).isTrue();
            await().atMost(Duration.ofSeconds(5)).until(() -> counter("locks.lease.lost", "kind", "path") == 1);
            assertThat(handle.isValid()).isFalse();
        }
        finally {
            handle.release();
        }
    }

    @Test
    void metersCarryNoTenantTagByDefault() {
        locks.acquire(x("/t").build()).release();
        assertThat(registry.getMeters()).allSatisfy(meter -> assertThat(meter.getId().getTag("tenant")).isNull());
    }

    @Test
    void metersCarryTheTenantWhenAskedTo() {
        SimpleMeterRegistry tagged = new SimpleMeterRegistry();
        try (JdbcLockService other = service("node-b")) {
            LockMetrics.bind(other, tagged, true);
            other.acquire(x("/t").build()).release();
            other.acquire(LockRequest.paths("/t").build()).release();
        }
        assertThat(tagged.get("locks.acquire").tags("tenant", tenant, "outcome", "acquired").timer().count()).isEqualTo(1);
        assertThat(tagged.get("locks.acquire").tags("tenant", "default", "outcome", "acquired").timer().count()).isEqualTo(1);
        assertThat(tagged.get("locks.released").tags("tenant", tenant).counter().count()).isEqualTo(1);
        assertThat(tagged.find("locks.held").meters()).extracting(Meter::getId)
                .allSatisfy(id -> assertThat(id.getTag("tenant")).isNull());
    }
}
