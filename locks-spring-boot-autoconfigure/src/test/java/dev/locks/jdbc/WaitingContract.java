package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import dev.locks.LockHandle;
import dev.locks.LockKind;
import dev.locks.LockLostException;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.LockTimeoutException;
import dev.locks.LockUnavailableException;
import dev.locks.testing.TestDatabase;

/** Waiting, timeouts and a store that cannot be reached. */
abstract class WaitingContract extends LockServiceContract {

    @Test
    void aTimeoutNamesTheHoldersNodeThreadAndPath() {
        JdbcLockService other = newNode("node-b");
        try (LockHandle held = other.tryAcquire(x("/busy/file").build()).orElseThrow()) {
            assertThatThrownBy(() -> locks.acquire(x("/busy").waitAtMost(Duration.ofMillis(300)).build()))
                    .isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("/busy/file")
                    .hasMessageContaining("node-b")
                    .hasMessageContaining(Thread.currentThread().getName())
                    .satisfies(ex -> assertThat(((LockTimeoutException) ex).getHolders()).hasSize(1));
        }
    }

    @Test
    void aWaiterGetsTheLockOnceTheHolderReleases() throws Exception {
        LockHandle held = tryX("/wait").orElseThrow();
        CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
            try (LockHandle h = locks.acquire(x("/wait/child").waitAtMost(Duration.ofSeconds(20)).build())) {
                return h.fencingToken();
            }
        });
        sleep(Duration.ofMillis(300));
        assertThat(waiter).isNotDone();
        held.release();
        assertThat(waiter.get(20, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
    }

    @Test
    void aWaiterOnAnotherNodeGetsTheLockOnceTheHolderReleases() throws Exception {
        JdbcLockService other = newNode("node-b");
        LockHandle held = tryX("/wait2").orElseThrow();
        CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
            try (LockHandle h = other.acquire(x("/wait2").waitAtMost(Duration.ofSeconds(20)).build())) {
                return h.fencingToken();
            }
        });
        sleep(Duration.ofMillis(300));
        held.release();
        assertThat(waiter.get(20, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
    }

    @Test
    void anUnreachableStoreRaisesUnavailableNotTimeout() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(mainPool().getJdbcUrl().startsWith("jdbc:postgresql")
                ? "jdbc:postgresql://127.0.0.1:1/test" : "jdbc:mysql://127.0.0.1:1/test");
        config.setUsername("nobody");
        config.setConnectionTimeout(500);
        config.setInitializationFailTimeout(-1);
        try (HikariDataSource dead = new HikariDataSource(config)) {
            JdbcLockService broken = JdbcLockService.builder(dead).dialect(locks.store().dialect()).tablePrefix(prefix)
                    .settings(LockSettings.builder().nodeId("broken").build()).build();
            try {
                assertThatThrownBy(() -> broken.acquire(x("/down").waitAtMost(Duration.ofSeconds(5)).build()))
                        .isInstanceOf(LockUnavailableException.class);
            }
            finally {
                broken.close();
            }
        }
    }

    @Test
    void missingTablesFailTheBuildNamingThemAndTheScriptThatCreatesThem() {
        assertThatThrownBy(() -> JdbcLockService.builder(mainPool()).tablePrefix("nosuch_")
                .settings(LockSettings.builder().nodeId("x").build()).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("The lock tables [nosuch_held, nosuch_wait")
                .hasMessageContaining("createSchema(true)").hasMessageContaining("locks.jdbc.initialize-schema=always")
                .hasMessageContaining("dev/locks/jdbc/schema-");
    }

    @Test
    void tablesDroppedAfterTheStartRaiseUnavailableNamingTheFailure() throws Exception {
        String dropped = TestDatabase.uniquePrefix();
        JdbcLockService service = JdbcLockService.builder(mainPool()).tablePrefix(dropped).createSchema(true)
                .settings(LockSettings.builder().nodeId("x").build()).build();
        try {
            TestDatabase.dropTables(mainPool(), dropped);

            assertThatThrownBy(() -> service.tryAcquire(x("/a").build()))
                    .isInstanceOf(LockUnavailableException.class)
                    .satisfies(ex -> assertThat(ex.getMessage()).containsIgnoringCase(dropped));
        }
        finally {
            service.close();
        }
    }

    @Test
    void semaphoreGrantsAtMostMaxPermits() {
        LockRequest permit = LockRequest.semaphore("exports", 3).tenant(tenant).build();
        JdbcLockService other = newNode("node-b");
        LockHandle a = locks.tryAcquire(permit).orElseThrow();
        LockHandle b = other.tryAcquire(permit).orElseThrow();
        LockHandle c = locks.tryAcquire(permit).orElseThrow();
        assertThat(other.tryAcquire(permit)).isEmpty();
        b.release();
        LockHandle d = other.tryAcquire(permit).orElseThrow();
        assertThat(locks.tryAcquire(permit)).isEmpty();
        a.release();
        c.release();
        d.release();
    }

    @Test
    void aSemaphoreRequestWithALargerMaxStopsAtTheSmallestMaxAmongTheHolders() {
        LockRequest small = LockRequest.semaphore("exports", 2).tenant(tenant).build();
        LockRequest large = LockRequest.semaphore("exports", 5).tenant(tenant).build();
        JdbcLockService other = newNode("node-b");
        LockHandle a = locks.tryAcquire(small).orElseThrow();
        LockHandle b = other.tryAcquire(large).orElseThrow();
        assertThat(other.tryAcquire(large)).isEmpty();
        a.release();
        LockHandle c = other.tryAcquire(large).orElseThrow();
        LockHandle d = locks.tryAcquire(large).orElseThrow();
        assertThat(locks.tryAcquire(small)).isEmpty();
        b.release();
        c.release();
        d.release();
    }

    @Test
    void aLapsedPermitNoLongerLowersTheMax() {
        LockHandle lapsing = locks.tryAcquire(LockRequest.semaphore("exports", 1).tenant(tenant)
                .lease(Duration.ofMillis(400)).build()).orElseThrow();
        LockRequest large = LockRequest.semaphore("exports", 3).tenant(tenant).build();
        JdbcLockService other = newNode("node-b");
        assertThat(other.tryAcquire(large)).as("while the permit of max 1 is live").isEmpty();
        sleep(Duration.ofMillis(700));
        LockHandle a = other.tryAcquire(large).orElseThrow();
        LockHandle b = other.tryAcquire(large).orElseThrow();
        LockHandle c = other.tryAcquire(large).orElseThrow();
        assertThat(other.tryAcquire(large)).as("three permits of max 3").isEmpty();
        lapsing.release();
        a.release();
        b.release();
        c.release();
    }

    @Test
    void aWaitingSemaphoreRequestWithALargerMaxIsGrantedWhenAHolderWithTheSmallerMaxLeaves() throws Exception {
        LockRequest small = LockRequest.semaphore("exports", 1).tenant(tenant).build();
        LockHandle held = locks.tryAcquire(small).orElseThrow();
        JdbcLockService other = newNode("node-b");
        CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(() -> other.acquire(
                LockRequest.semaphore("exports", 3).tenant(tenant).waitAtMost(Duration.ofSeconds(20)).build()));
        sleep(Duration.ofMillis(300));
        assertThat(waiter).isNotDone();
        held.release();
        waiter.get(20, TimeUnit.SECONDS).release();
    }

    @Test
    void aSingletonHasOneHolderAndIsNotAPath() {
        LockRequest job = LockRequest.singleton("nightly").tenant(tenant).build();
        try (LockHandle h = locks.tryAcquire(job).orElseThrow()) {
            assertThat(newNode("node-b").tryAcquire(job)).isEmpty();
            assertThat(tryX("/nightly")).isPresent().get().matches(LockHandle::release);
            assertThat(tryX("/")).isPresent().get().matches(LockHandle::release);
        }
    }

    @Test
    void aNestedScopedCallReentersWithoutANewGrant() {
        locks.run(x("/outer").build(), () -> {
            LockHandle inner = locks.enter(x("/outer/inner").build());
            LockHandle again = locks.enter(s("/outer").build());
            assertThat(inner.fencingToken()).isEqualTo(again.fencingToken());
            assertThat(locks.holders(tenant, "/outer")).hasSize(1);
            inner.release();
            again.release();
            assertThat(locks.holders(tenant, "/outer")).hasSize(1);
        });
        assertThat(locks.holders(tenant, "/outer")).isEmpty();
    }

    @Test
    void aNestedSemaphoreRequestWithASmallerMaxThanThePermitHeldIsRefused() {
        locks.run(LockRequest.semaphore("exports", 10).tenant(tenant).build(),
                () -> assertThatThrownBy(() -> locks.tryEnter(LockRequest.semaphore("exports", 2).tenant(tenant).build()))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("Semaphore 'exports'")
                        .hasMessageContaining("max 10")
                        .hasMessageContaining("max 2"));
    }

    @Test
    void aNestedSemaphoreRequestWithTheSameOrALargerMaxReentersThePermitHeld() {
        locks.run(LockRequest.semaphore("exports", 2).tenant(tenant).build(), () -> {
            LockHandle again = locks.enter(LockRequest.semaphore("exports", 10).tenant(tenant).build());
            assertThat(locks.holders(LockKind.SEMAPHORE, tenant, "exports")).hasSize(1);
            again.release();
        });
    }

    @Test
    void aReenteredHandleIsNoLongerValidOnceTheLockEnclosingItIsLost() {
        LockHandle outer = locks.enter(x("/gone").build());
        LockHandle reentered = locks.enter(x("/gone/deep").build());
        try {
            locks.forceRelease(outer.fencingToken());
            assertThat(outer.renew()).isFalse();

            assertThat(reentered.isValid()).isFalse();
            assertThatThrownBy(reentered::checkValid).isInstanceOf(LockLostException.class)
                    .hasMessageContaining("enclosing lock").hasMessageContaining("/gone");
        }
        finally {
            reentered.release();
            outer.release();
        }
    }

    @Test
    void aNestedHandleWithAGrantOfItsOwnIsNoLongerValidOnceTheLockEnclosingItIsLost() {
        LockHandle outer = locks.enter(x("/lost").build());
        LockHandle nested = locks.enter(x("/lost", "/more").build());
        try {
            locks.forceRelease(outer.fencingToken());
            assertThat(outer.renew()).isFalse();

            assertThat(nested.isValid()).isFalse();
            assertThat(locks.holders(tenant, "/more")).as("its own grant stays until released").hasSize(1);
        }
        finally {
            nested.release();
            outer.release();
        }
        assertThat(locks.holders(tenant, "/more")).isEmpty();
    }

    @Test
    void renewingANestedHandleWithAShortLeaseLeavesTheEnclosingLockItsOwn() {
        LockHandle outer = locks.enter(x("/kept-lease").lease(Duration.ofSeconds(30)).build());
        LockHandle nested = locks.enter(x("/kept-lease/deep").build());
        try {
            java.time.Instant outerExpiry = outer.expiresAt();
            assertThat(nested.renew(Duration.ofMillis(400))).isTrue();
            assertThat(outer.expiresAt()).as("the enclosing lease, untouched").isEqualTo(outerExpiry);
            sleep(Duration.ofMillis(800));

            assertThat(outer.isValid()).isTrue();
            assertThat(nested.isValid()).isTrue();
        }
        finally {
            nested.release();
            outer.release();
        }
    }

    @Test
    void aReenteredHandleTakesTheNewestTokenOfTheLocksEnclosingIt() {
        LockHandle a = locks.enter(x("/tok/a").build());
        LockHandle b = locks.enter(x("/tok/b").build());
        LockHandle both = locks.enter(x("/tok/a", "/tok/b").build());
        try {
            assertThat(b.fencingToken()).isGreaterThan(a.fencingToken());
            assertThat(both.fencingToken()).isEqualTo(b.fencingToken());
        }
        finally {
            both.release();
            b.release();
            a.release();
        }
    }

    @Test
    void aNestedScopedCallThatNeedsMoreAcquiresAndReleasesOnlyWhatItAdded() {
        locks.run(s("/up").build(), () -> {
            LockHandle upgraded = locks.enter(x("/up", "/side").build());
            assertThat(locks.holders(tenant, "/up")).hasSize(2);
            upgraded.release();
            assertThat(locks.holders(tenant, "/up")).hasSize(1);
            assertThat(locks.holders(tenant, "/side")).isEmpty();
        });
    }
}
