package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * The in-JVM queue in front of grant transactions that lock one node row exclusively (H2): who
 * waits for whom, and that nobody waits longer than the queue's bound.
 */
class LocalGrantQueueTest {

    private static final Duration BOUND = Duration.ofMillis(300);

    private final LocalGrantQueue queue = new LocalGrantQueue(BOUND);

    @Test
    void aSecondGrantOfTheSameRowWaitsUntilTheFirstHasLeft() throws Exception {
        LocalGrantQueue.Place first = queue.enter(exclusive(key(7)));
        CountDownLatch entered = new CountDownLatch(1);
        CompletableFuture<Void> second = CompletableFuture.runAsync(() -> {
            try (LocalGrantQueue.Place place = queue.enter(exclusive(key(7)))) {
                entered.countDown();
            }
        });
        assertThat(entered.await(100, TimeUnit.MILLISECONDS)).isFalse();
        first.close();
        assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
        second.get(5, TimeUnit.SECONDS);
    }

    @Test
    void aGrantOfARowInAnotherStripeDoesNotWait() throws Exception {
        try (LocalGrantQueue.Place first = queue.enter(exclusive(key(7)))) {
            long started = System.nanoTime();
            CompletableFuture.runAsync(() -> queue.enter(exclusive(key(8))).close()).get(5, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(BOUND);
        }
    }

    @Test
    void aGrantWaitsNoLongerThanTheBoundAndThenGoesOnWithoutAPlace() throws Exception {
        try (LocalGrantQueue.Place stuck = queue.enter(exclusive(key(7)))) {
            long started = System.nanoTime();
            LocalGrantQueue.Place late = CompletableFuture.supplyAsync(() -> queue.enter(exclusive(key(7))))
                    .get(5, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(BOUND);
            assertThat(late).isSameAs(LocalGrantQueue.Place.NONE);
        }
    }

    @Test
    void aGrantLockingSeveralRowsExclusivelyDoesNotQueue() throws Exception {
        try (LocalGrantQueue.Place first = queue.enter(exclusive(key(7)))) {
            List<SqlDialect.NodeLock> two = List.of(new SqlDialect.NodeLock(key(7), true),
                    new SqlDialect.NodeLock(key(9), true));
            assertThat(CompletableFuture.supplyAsync(() -> queue.enter(two)).get(5, TimeUnit.SECONDS))
                    .isSameAs(LocalGrantQueue.Place.NONE);
        }
    }

    @Test
    void aGrantLockingRowsSharedOnlyDoesNotQueue() throws Exception {
        try (LocalGrantQueue.Place first = queue.enter(exclusive(key(7)))) {
            List<SqlDialect.NodeLock> shared = List.of(new SqlDialect.NodeLock(key(7), false));
            assertThat(CompletableFuture.supplyAsync(() -> queue.enter(shared)).get(5, TimeUnit.SECONDS))
                    .isSameAs(LocalGrantQueue.Place.NONE);
        }
    }

    @Test
    void anInterruptedGrantGoesOnWithoutAPlaceAndKeepsItsInterrupt() throws Exception {
        try (LocalGrantQueue.Place first = queue.enter(exclusive(key(7)))) {
            CompletableFuture<Boolean> interrupted = CompletableFuture.supplyAsync(() -> {
                Thread.currentThread().interrupt();
                LocalGrantQueue.Place place = queue.enter(exclusive(key(7)));
                return place == LocalGrantQueue.Place.NONE && Thread.interrupted();
            });
            assertThat(interrupted.get(5, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void aPlaceLeftLetsTheSameThreadInAgainAtOnce() {
        queue.enter(exclusive(key(7))).close();
        long started = System.nanoTime();
        queue.enter(exclusive(key(7))).close();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(BOUND);
    }

    private static List<SqlDialect.NodeLock> exclusive(byte[] key) {
        return List.of(new SqlDialect.NodeLock(key, true));
    }

    /** A key whose first byte, which picks the stripe, is {@code first}. */
    private static byte[] key(int first) {
        byte[] key = new byte[32];
        key[0] = (byte) first;
        return key;
    }
}
