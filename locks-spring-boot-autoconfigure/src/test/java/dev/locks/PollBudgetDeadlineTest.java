package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.locks.testing.H2Store;

/**
 * A waiter whose next poll slot lies beyond its deadline (the node's poll budget is spent by other
 * waiters) polls no more and leaves the queue, but waits until its deadline for what needs no poll:
 * a release of this JVM handing it the lock.
 */
class PollBudgetDeadlineTest {

    private final H2Store h2 = new H2Store();

    private DefaultLockService locks;

    private LockHandle elsewhere;

    private CompletableFuture<LockHandle> budgetTaker;

    @BeforeEach
    void start() throws Exception {
        // one poll a second for the whole node: a waiter that keeps polling pushes every free slot out
        locks = h2.service(h2.store(), H2Store.quietNode("n").maxPollsPerSecond(1).build());
        elsewhere = locks.acquire(LockRequest.paths("/taken").build());
        budgetTaker = CompletableFuture.supplyAsync(
                () -> locks.acquire(LockRequest.paths("/taken").waitAtMost(Duration.ofSeconds(10)).build()));
        // let it queue and take the slots ahead
        TimeUnit.MILLISECONDS.sleep(100);
        assertThat(budgetTaker).isNotDone();
    }

    @AfterEach
    void stop() throws Exception {
        elsewhere.release();
        budgetTaker.get(15, TimeUnit.SECONDS).release();
        h2.close();
    }

    @Test
    void aWaiterWithoutAPollSlotBeforeItsDeadlineWaitsUntilTheDeadline() {
        locks.acquire(LockRequest.paths("/busy").build());
        long started = System.nanoTime();

        assertThatThrownBy(() -> locks.acquire(LockRequest.paths("/busy").waitAtMost(Duration.ofMillis(500)).build()))
                .isInstanceOf(LockTimeoutException.class);

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(450));
    }

    @Test
    void aWaiterWithoutAPollSlotBeforeItsDeadlineTakesALockHandedOverByAReleaseHere() throws Exception {
        LockHandle holder = locks.acquire(LockRequest.paths("/handed").build());
        long handOffsBefore = locks.handOffCount();
        // the budget's next free slot is a second or more away, after this waiter's deadline
        CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(
                () -> locks.acquire(LockRequest.paths("/handed").waitAtMost(Duration.ofMillis(800)).build()));
        TimeUnit.MILLISECONDS.sleep(300);

        holder.release();

        assertThat(waiter.get(5, TimeUnit.SECONDS).release()).isTrue();
        assertThat(locks.handOffCount()).isEqualTo(handOffsBefore + 1);
    }

    @Test
    void aWaiterWithoutAPollSlotBeforeItsDeadlineHoldsUpNoLaterRequestOfAnotherNode() throws Exception {
        DefaultLockService other = h2.service(h2.store(), H2Store.quietNode("other").build());
        LockHandle holder = other.acquire(LockRequest.paths("/queued").build());
        CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(
                () -> locks.acquire(LockRequest.paths("/queued").waitAtMost(Duration.ofMillis(800)).build()));
        TimeUnit.MILLISECONDS.sleep(300);

        holder.release();

        // the waiter cannot look before its deadline; its queue row would otherwise keep this one out
        assertThat(other.tryAcquire(LockRequest.paths("/queued").build())).isPresent().get()
                .matches(LockHandle::release);
        assertThat(waiter).failsWithin(Duration.ofSeconds(5));
    }
}
