package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.locks.jdbc.JdbcLockStore;
import dev.locks.jdbc.SqlDialect;
import dev.locks.testing.H2Store;
import dev.locks.testing.TestDatabase;

/**
 * What the exceptions about a request say: which lock, in the words of the timeout message, short
 * whatever the request holds, and with no invisible character printed raw.
 */
class RequestMessagesTest {

    private final H2Store h2 = new H2Store();

    private final DefaultLockService locks = h2.service(h2.store(), H2Store.quietNode("n").build());

    @AfterEach
    void stop() {
        h2.close();
    }

    @Test
    void aTimeoutOnAHundredLongPathsNamesTheFirstFiveAndCountsTheRest() {
        try (LockHandle root = locks.acquire(LockRequest.paths("/").build())) {
            LockRequest hundred = LockRequest.paths(longPaths(100)).waitAtMost(Duration.ZERO).build();

            assertThatThrownBy(() -> locks.acquire(hundred)).isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("… and 95 more] in tenant 'default' is busy")
                    .satisfies(ex -> assertThat(ex.getMessage()).hasSizeLessThan(2_000));
        }
    }

    @Test
    void aStoreFailureOnTheMostLongPathsAllowedKeepsTheMessageShort() {
        HikariDataSource pool = TestDatabase.H2.newPool(1);
        JdbcLockStore store = new JdbcLockStore(pool, SqlDialect.detect(pool), TestDatabase.uniquePrefix());
        DefaultLockService down = h2.service(store, H2Store.quietNode("down").build());
        pool.close();

        assertThatThrownBy(() -> down.tryAcquire(LockRequest.paths(longPaths(LockSettings.MOST_PATHS_PER_REQUEST)).build()))
                .isInstanceOf(LockUnavailableException.class)
                .satisfies(ex -> assertThat(ex.getMessage()).contains("Could not acquire EXCLUSIVE [/")
                        .contains("grant PATH [/").hasSizeLessThan(4_000))
                .satisfies(ex -> assertThat(ex.getMessage().split("… and " + (LockSettings.MOST_PATHS_PER_REQUEST - 5) + " more", -1)).hasSize(3));
    }

    @Test
    void aPathWithAZeroWidthSpaceIsPrintedApartFromThePathWithout() {
        try (LockHandle held = locks.acquire(LockRequest.paths("/a\u200B").build())) {
            assertThatThrownBy(() -> locks.acquire(LockRequest.paths("/a\u200B").waitAtMost(Duration.ZERO).build()))
                    .hasMessageStartingWith("Lock EXCLUSIVE /a\\u200B in tenant 'default' is busy")
                    .hasMessageContaining("held by EXCLUSIVE /a\\u200B (tenant 'default'");
        }
    }

    @Test
    void aLineSeparatorInATenantCannotStartANewLineOfTheMessage() {
        String tenant = "acme\u2028ERROR forged line";
        try (LockHandle held = locks.acquire(LockRequest.paths("/a").tenant(tenant).build())) {
            assertThatThrownBy(() -> locks.acquire(LockRequest.paths("/a").tenant(tenant).waitAtMost(Duration.ZERO)
                    .build())).hasMessageContaining("in tenant 'acme\\u2028ERROR forged line'")
                    .satisfies(ex -> assertThat(ex.getMessage()).doesNotContain("\u2028"));
        }
    }

    @Test
    void anInterruptedWaitForASemaphoreNamesTheSemaphoreAndItsMax() throws Exception {
        try (LockHandle permit = locks.acquire(LockRequest.semaphore("exports", 1).build())) {
            CompletableFuture<Thread> waiter = new CompletableFuture<>();
            CompletableFuture<Throwable> failure = CompletableFuture.supplyAsync(() -> {
                waiter.complete(Thread.currentThread());
                try {
                    locks.acquire(LockRequest.semaphore("exports", 1).waitAtMost(Duration.ofSeconds(60)).build()).release();
                    return null;
                }
                catch (RuntimeException ex) {
                    return ex;
                }
            });
            while (locks.waitingCount() == 0 && !failure.isDone()) {
                Thread.sleep(5);
            }
            waiter.get().interrupt();

            assertThat(failure.get(30, TimeUnit.SECONDS)).isInstanceOf(LockInterruptedException.class)
                    .hasMessageStartingWith("Interrupted while waiting for semaphore 'exports' (max 1) in tenant 'default'");
        }
    }

    @Test
    void aDeadlockBetweenSingletonsNamesThemAsSingletons() throws Exception {
        CountDownLatch bothHold = new CountDownLatch(2);
        CompletableFuture<Throwable> first = CompletableFuture.supplyAsync(() -> nested("job-a", "job-b", bothHold));
        CompletableFuture<Throwable> second = CompletableFuture.supplyAsync(() -> nested("job-b", "job-a", bothHold));

        List<Throwable> failures = new ArrayList<>();
        for (CompletableFuture<Throwable> owner : List.of(first, second)) {
            Throwable failure = owner.get(60, TimeUnit.SECONDS);
            if (failure != null) {
                failures.add(failure);
            }
        }
        assertThat(failures).hasSize(1).first().isInstanceOf(DeadlockDetectedException.class)
                .satisfies(ex -> assertThat(ex.getMessage()).startsWith("Deadlock: singleton '")
                        .doesNotContain("EXCLUSIVE"));
    }

    private Throwable nested(String outer, String inner, CountDownLatch bothHold) {
        try {
            locks.run(LockRequest.singleton(outer).build(), () -> {
                bothHold.countDown();
                try {
                    bothHold.await(10, TimeUnit.SECONDS);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
                locks.run(LockRequest.singleton(inner).waitAtMost(Duration.ofSeconds(30)).build(), () -> {
                });
            });
            return null;
        }
        catch (RuntimeException ex) {
            return ex;
        }
    }

    private static List<String> longPaths(int count) {
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            paths.add("/" + "d".repeat(300) + "/" + i);
        }
        return paths;
    }
}
