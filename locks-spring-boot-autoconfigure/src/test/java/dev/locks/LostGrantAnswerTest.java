package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.locks.testing.H2Store;
import dev.locks.testing.InterceptedStore;

/**
 * A grant whose commit went through while its answer was lost (a connection reset after the
 * commit): the caller sees a failure and holds no handle, so the grant must not stay held for its
 * whole lease.
 */
class LostGrantAnswerTest {

    private final H2Store h2 = new H2Store();

    /** The next grant commits, then the store reports a failure. */
    private volatile boolean loseNextAnswer = true;

    @AfterEach
    void stop() {
        h2.close();
    }

    private DefaultLockService losingAnswers() {
        return losingNextAnswerOf("tryGrant", H2Store.quietNode("losing").defaultLease(Duration.ofSeconds(60)));
    }

    /** A service whose next call of {@code storeMethod} commits, then reports a failure. */
    private DefaultLockService losingNextAnswerOf(String storeMethod, LockSettings.Builder settings) {
        return losingNextAnswerOf(storeMethod, settings, () -> { });
    }

    /** As above, running {@code betweenCommitAndFailure} once the call has committed. */
    private DefaultLockService losingNextAnswerOf(String storeMethod, LockSettings.Builder settings,
            Runnable betweenCommitAndFailure) {
        return h2.service(InterceptedStore.of(h2.store(), (method, args, call) -> {
            Object answer = call.proceed();
            if (method.equals(storeMethod) && loseNextAnswer) {
                loseNextAnswer = false;
                betweenCommitAndFailure.run();
                throw new LockUnavailableException("connection reset after the commit of " + storeMethod + " (test)", null);
            }
            return answer;
        }), settings.build());
    }

    @Test
    void aGrantWhoseAnswerWasLostIsReleasedInTheBackground() {
        DefaultLockService locks = losingAnswers();
        DefaultLockService other = h2.service(h2.store(), H2Store.quietNode("other").build());

        assertThatThrownBy(() -> locks.tryAcquire(LockRequest.paths("/lost").build()))
                .isInstanceOf(LockUnavailableException.class);

        await().atMost(Duration.ofSeconds(10)).until(() -> other.tryAcquire(LockRequest.paths("/lost").build())
                .map(LockHandle::release).orElse(false));
    }

    @Test
    void aOnePermitSemaphoreWhoseGrantAnswerWasLostIsFreeForTheSameNodeAgain() {
        DefaultLockService locks = losingAnswers();
        LockRequest permit = LockRequest.semaphore("exports", 1).waitAtMost(Duration.ofSeconds(10)).build();

        assertThatThrownBy(() -> locks.acquire(permit)).isInstanceOf(LockUnavailableException.class);

        assertThat(locks.acquire(permit).release()).isTrue();
    }

    @Test
    void aOnePermitSemaphoreHandedOverWithItsAnswerLostReachesTheWaiterLongBeforeTheLease() throws Exception {
        DefaultLockService locks = losingHandOffAnswers();
        LockRequest permit = LockRequest.semaphore("exports", 1).waitAtMost(Duration.ofSeconds(10)).build();
        LockHandle held = locks.acquire(permit);
        CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(() -> locks.acquire(permit));
        await().atMost(Duration.ofSeconds(10)).until(() -> locks.waitingCount() > 0);
        // asleep, so that the release hands the permit over
        Thread.sleep(200);

        held.release();

        // the hand-off's grant holds the waiter's old request id: without its release the waiter would
        // wait for itself until that grant's lease of a minute ran out
        LockHandle handed = waiter.get(8, TimeUnit.SECONDS);
        assertThat(loseNextAnswer).as("the hand-off's answer was lost").isFalse();
        assertThat(handed.release()).isTrue();
        assertThat(locks.tryAcquire(permit)).as("the permit free again").isPresent().get().matches(LockHandle::release);
    }

    @Test
    void aHandOffWithItsAnswerLostToAWaiterThatHadLeftLeavesNothingHeld() throws Exception {
        LockRequest permit = LockRequest.semaphore("exports", 1).waitAtMost(Duration.ofSeconds(30)).build();
        Thread[] waiter = new Thread[1];
        // the waiter leaves before the releasing thread hears that the hand-off failed
        DefaultLockService locks = losingHandOffAnswers(() -> {
            waiter[0].interrupt();
            joinUninterruptibly(waiter[0]);
        });
        DefaultLockService other = h2.service(h2.store(), H2Store.quietNode("other").build());
        LockHandle held = locks.acquire(permit);
        waiter[0] = waitingFor(locks, permit);

        held.release();

        assertThat(loseNextAnswer).as("the hand-off's answer was lost").isFalse();
        // the hand-off's grant under the departed waiter's request id holds the permit for a minute unless released
        await().atMost(Duration.ofSeconds(10)).until(() -> other.tryAcquire(permit).map(LockHandle::release).orElse(false));
    }

    /**
     * The waiter may leave before or after the failed hand-off's answer reaches it: before, the
     * releasing thread releases the hand-off's grant; after, the waiter does as it leaves with the
     * answer untaken. Which comes first is a race, so the test runs it several times.
     */
    @Test
    void aHandOffWithItsAnswerLostToAWaiterLeavingAtThatMomentLeavesNothingHeld() throws Exception {
        LockRequest permit = LockRequest.semaphore("exports", 1).waitAtMost(Duration.ofSeconds(30)).build();
        DefaultLockService other = h2.service(h2.store(), H2Store.quietNode("other").build());
        for (int round = 0; round < 10; round++) {
            loseNextAnswer = true;
            Thread[] waiter = new Thread[1];
            DefaultLockService locks = losingHandOffAnswers(() -> waiter[0].interrupt());
            LockHandle held = locks.acquire(permit);
            waiter[0] = waitingFor(locks, permit);

            held.release();
            waiter[0].join(10_000);

            assertThat(loseNextAnswer).as("round %d handed the permit over and lost the answer", round).isFalse();
            assertThat(waiter[0].isAlive()).isFalse();
            await("round " + round).atMost(Duration.ofSeconds(10))
                    .until(() -> other.tryAcquire(permit).map(LockHandle::release).orElse(false));
            locks.close();
        }
    }

    /** A waiter for {@code permit} on a thread of its own, asleep until a release hands the permit over. */
    private static Thread waitingFor(DefaultLockService locks, LockRequest permit) throws InterruptedException {
        int before = locks.waitingCount();
        Thread waiter = new Thread(() -> {
            try {
                locks.acquire(permit).release();
            }
            catch (LockInterruptedException ex) {
                // the test's way of making it leave
            }
        }, "waiter");
        waiter.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> locks.waitingCount() > before);
        // asleep, so that the release hands the permit over
        Thread.sleep(200);
        return waiter;
    }

    private static void joinUninterruptibly(Thread thread) {
        try {
            thread.join(10_000);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** A service whose next hand-off commits, then reports a failure; its waiters sleep until woken here. */
    private DefaultLockService losingHandOffAnswers() {
        return losingHandOffAnswers(() -> { });
    }

    private DefaultLockService losingHandOffAnswers(Runnable betweenCommitAndFailure) {
        return losingNextAnswerOf("releaseAndGrant", H2Store.quietNode("losing").defaultLease(Duration.ofSeconds(60))
                .backoff(Duration.ofMinutes(1), 1.0, Duration.ofMinutes(1), Duration.ZERO)
                .waiterLease(Duration.ofMinutes(5)), betweenCommitAndFailure);
    }
}
