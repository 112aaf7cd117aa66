package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.locks.testing.H2Store;

/**
 * Closing a service while work still holds locks: the work's locks must not be freed under it, since
 * another node would then start the same work beside it.
 */
class ShutdownTest {

    private final H2Store h2 = new H2Store();

    private final ExecutorService worker = Executors.newSingleThreadExecutor();

    private final CountDownLatch workMayEnd = new CountDownLatch(1);

    @AfterEach
    void stop() throws Exception {
        workMayEnd.countDown();
        worker.shutdown();
        worker.awaitTermination(10, TimeUnit.SECONDS);
        h2.close();
    }

    private DefaultLockService node(String id, Duration shutdownWait) {
        return h2.service(h2.store(), H2Store.quietNode(id).shutdownWait(shutdownWait).build());
    }

    private Optional<LockHandle> probe(String path) {
        return node("probe", Duration.ZERO).tryAcquire(LockRequest.paths(path).build());
    }

    @Test
    void aLockOfWorkStillRunningAfterTheShutdownWaitIsLeftToItsLeaseNotReleased() throws Exception {
        DefaultLockService locks = node("closing", Duration.ofMillis(200));
        CountDownLatch working = new CountDownLatch(1);
        worker.submit(() -> locks.call(LockRequest.paths("/busy").build(), () -> {
            working.countDown();
            return workMayEnd.await(10, TimeUnit.SECONDS);
        }));
        assertThat(working.await(5, TimeUnit.SECONDS)).isTrue();

        locks.close();

        assertThat(probe("/busy")).isEmpty();
    }

    @Test
    void closingWaitsForWorkInProgressToEndAndItsLockIsThenFree() throws Exception {
        DefaultLockService locks = node("closing", Duration.ofSeconds(10));
        CountDownLatch working = new CountDownLatch(1);
        AtomicBoolean workEnded = new AtomicBoolean();
        Future<?> work = worker.submit(() -> locks.call(LockRequest.paths("/busy").build(), () -> {
            working.countDown();
            Thread.sleep(300);
            workEnded.set(true);
            return null;
        }));
        assertThat(working.await(5, TimeUnit.SECONDS)).isTrue();

        locks.close();

        assertThat(workEnded).isTrue();
        work.get(5, TimeUnit.SECONDS);
        assertThat(probe("/busy")).isPresent();
    }

    @Test
    void aHandleTakenWithoutTheWatchdogIsReleasedAtClose() {
        DefaultLockService locks = node("closing", Duration.ofSeconds(10));
        locks.acquire(LockRequest.paths("/taken").build());

        locks.close();

        assertThat(probe("/taken")).isPresent();
    }

    @Test
    void aRequestStillWaitingWhenTheServiceClosesEndsWithoutTheLock() throws Exception {
        DefaultLockService locks = node("closing", Duration.ofSeconds(10));
        LockHandle held = node("holder", Duration.ZERO).acquire(LockRequest.paths("/contended").build());
        Future<LockHandle> waiter = worker.submit(
                () -> locks.acquire(LockRequest.paths("/contended").waitAtMost(Duration.ofSeconds(30)).build()));
        TimeUnit.MILLISECONDS.sleep(200);

        locks.close();

        assertThatThrownBy(() -> waiter.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("/contended").hasMessageContaining("closed while it was waiting");
        assertThat(held.release()).isTrue();
    }

    @Test
    void aRequestAfterCloseIsRefusedNamingTheLock() {
        DefaultLockService locks = node("closing", Duration.ZERO);
        locks.close();

        assertThatThrownBy(() -> locks.tryAcquire(LockRequest.paths("/late").build()))
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("/late")
                .hasMessageContaining("the lock service is closed");
    }
}
