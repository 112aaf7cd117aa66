package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.locks.store.Grant;
import dev.locks.store.LockStore;
import dev.locks.testing.H2Store;
import dev.locks.testing.InterceptedStore;

/**
 * The background retries of failed releases: how long they go on, and what becomes of them when the
 * lock service closes. No release may vanish without a warning while the log and the gauge say it is
 * being retried.
 */
class ReleaseRetriesTest {

    private final H2Store h2 = new H2Store();

    private final AtomicInteger releaseCalls = new AtomicInteger();

    private final AtomicInteger released = new AtomicInteger();

    /** A grant that is not in the store: releasing it answers false, which ends its retries. */
    private final Grant grant = new Grant("g".repeat(32), "o".repeat(32), 1, 1, Instant.now().plusSeconds(30));

    @AfterEach
    void stop() {
        h2.close();
    }

    @Test
    void aGrantWhoseOutcomeWasNotKnownAndNeverHappenedEndsAtTheFirstAnswerWakingNobody() {
        ReleaseRetries retries = new ReleaseRetries(countingReleases());

        retries.addUncertain(grant, "EXCLUSIVE /never in tenant 'default'", released::incrementAndGet);
        retries.retry();

        assertThat(releaseCalls).hasValue(1);
        assertThat(retries.size()).isZero();
        assertThat(released).as("waiters woken for a grant that freed nothing").hasValue(0);
        retries.close();
    }

    @Test
    void aRenewalThatAnswersAfterTheReleaseFailedExtendsTheRetriesToItsLease() {
        LockStore down = InterceptedStore.of(h2.store(), (method, args, call) -> {
            if (method.equals("release")) {
                releaseCalls.incrementAndGet();
                throw new LockUnavailableException("connection refused", null);
            }
            return call.proceed();
        });
        ReleaseRetries retries = new ReleaseRetries(down);
        GrantedLock handle = new GrantedLock(null, LockRequest.paths("/").build(), "default", List.of(LockPath.ROOT),
                Duration.ofMillis(500), null, grant, System.nanoTime());
        assertThat(retries.add(handle, released::incrementAndGet)).isTrue();

        // the watchdog's renewal was under way when the handle was released, and answers now
        handle.renewed(Instant.now().plusSeconds(5), System.nanoTime(), Duration.ofSeconds(5));

        await().atMost(Duration.ofSeconds(5)).until(() -> releaseCalls.get() >= 2);
        retries.close();
    }

    @Test
    void aReleaseGivenUpAtTheEndOfItsLeaseStillTellsTheWaitersTheLockIsFree() {
        ReleaseRetries retries = new ReleaseRetries(countingReleases());
        GrantedLock handle = new GrantedLock(null, LockRequest.paths("/").build(), "default", List.of(LockPath.ROOT),
                Duration.ofMillis(1), null, grant, System.nanoTime() - TimeUnit.SECONDS.toNanos(1));
        assertThat(retries.add(handle, released::incrementAndGet)).isTrue();

        retries.retry();

        assertThat(releaseCalls).as("no release after the lease").hasValue(0);
        assertThat(released).hasValue(1);
        assertThat(retries.size()).isZero();
        retries.close();
    }

    @Test
    void aReleaseOfferedAfterCloseIsRefusedSoThatItsLeaseIsSaidToFreeIt() {
        ReleaseRetries retries = new ReleaseRetries(h2.store());
        retries.close();

        assertThat(retries.addUnwanted(grant, released::incrementAndGet)).isFalse();
        assertThat(retries.size()).isZero();
    }

    @Test
    void closingWaitsForARetryUnderWayAndTriesItOnceMore() throws Exception {
        CountDownLatch inFlight = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        // the first release waits for the test, then fails as a dropped connection would; the next succeeds
        LockStore store = InterceptedStore.of(h2.store(), (method, args, call) -> {
            if (method.equals("release") && releaseCalls.incrementAndGet() == 1) {
                inFlight.countDown();
                boolean let = letGo.await(10, TimeUnit.SECONDS);
                throw new LockUnavailableException(let ? "connection reset" : "interrupted or timed out", null);
            }
            return call.proceed();
        });
        ReleaseRetries retries = new ReleaseRetries(store);
        assertThat(retries.addUnwanted(grant, released::incrementAndGet)).isTrue();
        assertThat(inFlight.await(5, TimeUnit.SECONDS)).as("the first retry started").isTrue();

        CompletableFuture<Void> closing = CompletableFuture.runAsync(retries::close);
        Thread.sleep(200);
        letGo.countDown();
        closing.get(ReleaseRetries.CLOSE_WAIT.toSeconds() + 5, TimeUnit.SECONDS);

        assertThat(releaseCalls).as("the retry under way, then the last round's").hasValue(2);
        assertThat(released).hasValue(1);
        assertThat(retries.size()).isZero();
    }

    /** The H2 store, counting its release calls. */
    private LockStore countingReleases() {
        return InterceptedStore.of(h2.store(), (method, args, call) -> {
            if (method.equals("release")) {
                releaseCalls.incrementAndGet();
            }
            return call.proceed();
        });
    }
}
