package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;

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
        return h2.service(InterceptedStore.of(h2.store(), (method, args, call) -> {
            Object answer = call.proceed();
            if (method.equals("tryGrant") && loseNextAnswer) {
                loseNextAnswer = false;
                throw new LockUnavailableException("connection reset after the commit (test)", null);
            }
            return answer;
        }), H2Store.quietNode("losing").defaultLease(Duration.ofSeconds(60)).build());
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
}
