package dev.locks.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.locks.LockHandle;
import dev.locks.LockHolder;
import dev.locks.LockKind;
import dev.locks.LockMode;
import dev.locks.LockRequest;
import dev.locks.LockTimeoutException;
import dev.locks.annotation.PathLocked;
import dev.locks.annotation.Semaphore;

/** {@code @Semaphore}: the limit across nodes, keys, default names, leases, waits and tenants. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(90)
abstract class SemaphoreContract extends AnnotationContract {

    private LockTestNodes nodes;

    private Exports nodeA;

    private Exports nodeB;

    @BeforeAll
    void start() {
        nodes = new LockTestNodes(database());
        nodeA = nodes.node("node-a", Application.class).getBean(Exports.class);
        nodeB = nodes.node("node-b", Application.class).getBean(Exports.class);
    }

    @AfterAll
    void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }

    @Test
    void thirtyCallersOnTwoNodesNeverExceedMaxHolders() throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        Runnable work = () -> {
            most.accumulateAndGet(inside.incrementAndGet(), Math::max);
            PathLockedContract.sleep(40);
            inside.decrementAndGet();
        };
        ExecutorService callers = Executors.newFixedThreadPool(30);
        try {
            List<CompletableFuture<Void>> calls = new ArrayList<>();
            CountDownLatch go = new CountDownLatch(1);
            for (int i = 0; i < 30; i++) {
                Exports node = i % 2 == 0 ? nodeA : nodeB;
                calls.add(CompletableFuture.runAsync(() -> {
                    awaitQuietly(go);
                    node.export(work);
                }, callers));
            }
            go.countDown();
            CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        }
        finally {
            callers.shutdownNow();
        }
        assertThat(most.get()).isLessThanOrEqualTo(3).isGreaterThan(1);
        assertThat(nodes.holders(LockKind.SEMAPHORE, null, "exports")).isZero();
    }

    @Test
    void theDefaultNameIsClassNameDotMethodName() {
        nodeA.defaultName(() -> assertThat(nodes.holders(LockKind.SEMAPHORE, null, "Exports.defaultName")).isEqualTo(1));
    }

    @Test
    void aKeyMakesOneSemaphorePerKeyValue() {
        nodeA.perCustomer("acme", () -> {
            assertThat(nodes.holders(LockKind.SEMAPHORE, null, "per-customer:acme")).isEqualTo(1);
            nodeB.perCustomer("globex", () ->
                    assertThat(nodes.holders(LockKind.SEMAPHORE, null, "per-customer:globex")).isEqualTo(1));
            assertThat(nodes.isFree(LockRequest.semaphore("per-customer:acme", 1).build())).isFalse();
        });
        assertThat(nodes.isFree(LockRequest.semaphore("per-customer:acme", 1).build())).isTrue();
    }

    @Test
    void aNullKeyFailsBeforeTheMethodRuns() {
        assertThatThrownBy(() -> nodeA.perCustomer(null, () -> { }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("@Semaphore on Exports.perCustomer(String, Runnable)")
                .hasMessageContaining("key expression '#customer' gave null");
    }

    @Test
    void waitAtMostBoundsTheWaitForAPermit() {
        try (LockHandle taken = nodes.probe().tryAcquire(LockRequest.semaphore("tiny", 1).build()).orElseThrow()) {
            long started = System.nanoTime();
            assertThatThrownBy(nodeA::tiny).isInstanceOf(LockTimeoutException.class).hasMessageContaining("tiny");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(300))
                    .isLessThan(Duration.ofSeconds(5));
        }
    }

    @Test
    void leaseIsThePermitsLease() {
        nodeA.leased(() -> {
            List<LockHolder> holders = nodes.probe().holders(LockKind.SEMAPHORE, null, "leased");
            assertThat(holders).hasSize(1);
            assertThat(Duration.between(holders.get(0).since(), holders.get(0).expiresAt()))
                    .isBetween(Duration.ofSeconds(49), Duration.ofSeconds(51));
        });
    }

    @Test
    void tenantExpressionNamesThePermitsTenant() {
        nodeA.inTenant("acme", () -> {
            assertThat(nodes.holders(LockKind.SEMAPHORE, "acme", "tenant-sem")).isEqualTo(1);
            assertThat(nodes.holders(LockKind.SEMAPHORE, null, "tenant-sem")).isZero();
        });
    }

    @Test
    void aSemaphoreAndAPathLockOnOneMethodAreBothHeld() {
        nodeA.exportFolder("/exports/acme", () -> {
            assertThat(nodes.holders(LockKind.SEMAPHORE, null, "folder-exports")).isEqualTo(1);
            assertThat(nodes.isLocked("/exports/acme")).isTrue();
        });
        assertThat(nodes.holders(LockKind.SEMAPHORE, null, "folder-exports")).isZero();
    }

    @Test
    void whenTheSecondLockIsBusyTheFirstIsGivenBack() {
        try (LockHandle folder = nodes.probe().tryAcquire(LockRequest.paths("/exports/busy").build()).orElseThrow()) {
            assertThatThrownBy(() -> nodeA.exportFolder("/exports/busy", () -> { }))
                    .isInstanceOf(LockTimeoutException.class).hasMessageContaining("/exports/busy");
            assertThat(nodes.holders(LockKind.SEMAPHORE, null, "folder-exports")).isZero();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** Semaphores for each attribute. */
    public static class Exports {

        @Semaphore(name = "exports", max = 3, waitAtMost = "30s")
        public void export(Runnable inside) {
            inside.run();
        }

        @Semaphore(max = 1)
        public void defaultName(Runnable inside) {
            inside.run();
        }

        @Semaphore(name = "per-customer", key = "#customer", max = 1, waitAtMost = "0s")
        public void perCustomer(String customer, Runnable inside) {
            inside.run();
        }

        @Semaphore(name = "tiny", max = 1, waitAtMost = "300ms")
        public void tiny() {
        }

        @Semaphore(name = "leased", max = 2, lease = "50s")
        public void leased(Runnable inside) {
            inside.run();
        }

        @Semaphore(name = "folder-exports", max = 2)
        @PathLocked(paths = "#folder", mode = LockMode.SHARED, waitAtMost = "0s")
        public void exportFolder(String folder, Runnable inside) {
            inside.run();
        }

        @Semaphore(name = "tenant-sem", max = 1, tenant = "#tenant")
        public void inTenant(String tenant, Runnable inside) {
            inside.run();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Application {

        @Bean
        Exports exports() {
            return new Exports();
        }
    }
}
