package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.locks.store.LockStore;
import dev.locks.testing.H2Store;
import dev.locks.testing.InterceptedStore;

/**
 * A waiter that stops waiting while a release is handing it the lock: the grant made for it must
 * not outlive it. The store here passes everything to a JDBC store on H2, but holds every hand-off
 * until the test lets it go on, and fails discards while the test asks it to.
 */
class HandOffRaceTest {

    private final CountDownLatch handOffStarted = new CountDownLatch(1);

    private final CountDownLatch goOn = new CountDownLatch(1);

    private final AtomicInteger handOffs = new AtomicInteger();

    private final AtomicInteger grants = new AtomicInteger();

    /** Whether the thread leaving the wait queue was interrupted when it asked the store. */
    private final AtomicReference<Boolean> dequeuedInterrupted = new AtomicReference<>();

    /** How many discards are still to fail, as when the database is briefly away. */
    private final AtomicInteger failingDiscards = new AtomicInteger();

    private final H2Store h2 = new H2Store();

    private DefaultLockService locks;

    /** The lock whose release hands over, taken by {@link #waitFor}. */
    private LockHandle held;

    @BeforeEach
    void start() {
        // a minute's backoff: the waiter sleeps until a release here wakes it
        locks = h2.service(stalling(h2.store()), H2Store.quietNode("race")
                .backoff(Duration.ofMinutes(1), 1.0, Duration.ofMinutes(1), Duration.ZERO)
                    .waiterLease(Duration.ofMinutes(5)).build());
    }

    @AfterEach
    void stop() {
        h2.close();
    }

    @Test
    void aGrantHandedToAWaiterWhoseWaitEndedMeanwhileIsReleased() throws Exception {
        CompletableFuture<LockHandle> waiter = waitFor(Duration.ofMillis(1500), new AtomicReference<>());
        CompletableFuture<Boolean> release = startHandOff();

        // the waiter's time runs out while the release's transaction is under way
        assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(LockTimeoutException.class);
        goOn.countDown();

        assertThat(release.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(handOffs).as("the release did hand the lock over").hasValue(1);
        assertThat(locks.holders(null, "/race")).as("nobody holds what was granted to the waiter that left").isEmpty();
        assertThat(locks.tryAcquire(exclusive().build())).isPresent();
    }

    @Test
    void aGrantForAWaiterThatLeftIsReleasedInTheBackgroundWhenItsDiscardFails() throws Exception {
        failingDiscards.set(1);
        CompletableFuture<LockHandle> waiter = waitFor(Duration.ofMillis(1500), new AtomicReference<>());
        CompletableFuture<Boolean> release = startHandOff();
        assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LockTimeoutException.class);
        goOn.countDown();

        assertThat(release.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(failingDiscards).as("the discard was tried and failed").hasValue(0);
        // the lease is 30 s: only the retry can free it this soon
        await().atMost(Duration.ofSeconds(5)).until(() -> locks.holders(null, "/race").isEmpty());
        assertThat(locks.pendingReleaseCount()).isZero();
        assertThat(locks.tryAcquire(exclusive().build())).isPresent();
    }

    @Test
    void aWaiterInterruptedDuringAHandOffThrowsAndItsGrantIsReleased() throws Exception {
        AtomicReference<Thread> waiting = new AtomicReference<>();
        CompletableFuture<LockHandle> waiter = waitFor(Duration.ofSeconds(30), waiting);
        CompletableFuture<Boolean> release = startHandOff();

        waiting.get().interrupt();
        assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(LockInterruptedException.class);
        goOn.countDown();

        assertThat(release.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(locks.holders(null, "/race")).isEmpty();
    }

    @Test
    void anInterruptedWaiterLeavesTheQueueUninterruptedAndKeepsItsInterruptFlag() throws Exception {
        AtomicReference<Thread> waiting = new AtomicReference<>();
        AtomicReference<Boolean> flagAfter = new AtomicReference<>();
        held = locks.acquire(exclusive().build());
        CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(() -> {
            waiting.set(Thread.currentThread());
            try {
                return locks.acquire(exclusive().waitAtMost(Duration.ofSeconds(30)).build());
            }
            finally {
                flagAfter.set(Thread.interrupted());
            }
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> locks.waitingCount() > 0);

        waiting.get().interrupt();

        assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(LockInterruptedException.class)
                .hasMessageContaining("/race").hasMessageContaining("tenant 'default'");
        // a pool with no idle connection refuses an interrupted thread, which would leave the record behind
        assertThat(dequeuedInterrupted.get()).as("interrupted while leaving the queue").isFalse();
        assertThat(flagAfter.get()).as("the caller still sees its interrupt").isTrue();
        held.release();
    }

    @Test
    void aWaiterWakingDuringAHandOffTakesTheGrantInsteadOfAskingTheStore() throws Exception {
        CompletableFuture<LockHandle> waiter = waitFor(Duration.ofSeconds(30), new AtomicReference<>());
        CompletableFuture<Boolean> release = startHandOff();
        int grantsBefore = grants.get();
        goOn.countDown();

        LockHandle got = waiter.get(10, TimeUnit.SECONDS);
        assertThat(release.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(got.isValid()).isTrue();
        assertThat(grants).as("grants the waiter asked for itself").hasValue(grantsBefore);
        got.release();
    }

    private static LockRequest.Builder exclusive() {
        return LockRequest.paths("/race").exclusive();
    }

    /** Holds {@code /race}, then starts a waiter for it and returns once the waiter is asleep. */
    private CompletableFuture<LockHandle> waitFor(Duration wait, AtomicReference<Thread> waiting)
            throws InterruptedException {
        held = locks.acquire(exclusive().build());
        CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(() -> {
            waiting.set(Thread.currentThread());
            return locks.acquire(exclusive().waitAtMost(wait).build());
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (locks.waitingCount() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(locks.waitingCount()).isPositive();
        Thread.sleep(200);
        return waiter;
    }

    /** Releases the holder's lock on another thread and returns once its hand-off is stalled in the store. */
    private CompletableFuture<Boolean> startHandOff() throws InterruptedException {
        CompletableFuture<Boolean> release = CompletableFuture.supplyAsync(held::release);
        assertThat(handOffStarted.await(10, TimeUnit.SECONDS)).isTrue();
        return release;
    }

    /**
     * {@code store} with every hand-off held until {@link #goOn} opens, counting hand-offs and grants,
     * and the next {@link #failingDiscards} discards failing.
     */
    private LockStore stalling(LockStore store) {
        return InterceptedStore.of(store, (method, args, call) -> {
            if (method.equals("releaseAndGrant")) {
                handOffStarted.countDown();
                if (!goOn.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never let the hand-off go on");
                }
                handOffs.incrementAndGet();
            }
            else if (method.equals("discard") && failingDiscards.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new LockUnavailableException("Could not release a lock: the database is away", null);
            }
            else if (method.equals("dequeue")) {
                dequeuedInterrupted.set(Thread.currentThread().isInterrupted());
            }
            else if (method.equals("tryGrant")) {
                grants.incrementAndGet();
            }
            return call.proceed();
        });
    }
}
