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
        return h2.service(InterceptedStore.of(h2.store(), (method, args, call) -> {
            Object answer = call.proceed();
            if (method.equals(storeMethod) && loseNextAnswer) {
                loseNextAnswer = false;
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

    /** A service whose next hand-off commits, then reports a failure; its waiters sleep until woken here. */
    private DefaultLockService losingHandOffAnswers() {
        return losingNextAnswerOf("releaseAndGrant", H2Store.quietNode("losing").defaultLease(Duration.ofSeconds(60))
                .backoff(Duration.ofMinutes(1), 1.0, Duration.ofMinutes(1), Duration.ZERO)
                .waiterLease(Duration.ofMinutes(5)));
    }
}
