package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.locks.store.LockStore;
import dev.locks.store.ReleaseDeferredException;
import dev.locks.testing.H2Store;
import dev.locks.testing.InterceptedStore;

/**
 * Releases the store cannot take: they must not hide what the work did, and they are retried in the
 * background until one succeeds or the lease has run out, unless the store repeats them itself when
 * the caller's transaction ends.
 */
class FailedReleaseTest {

    private final H2Store h2 = new H2Store();

    private final AtomicInteger releaseAttempts = new AtomicInteger();

    /** The store fails releases while this is set; {@link ReleaseDeferredException}s if it says so. */
    private volatile String storeDown = "The store is down (test)";

    private volatile boolean defersReleases;

    private DefaultLockService locks;

    @BeforeEach
    void start() {
        locks = h2.service(failingReleases(h2.store()), H2Store.quietNode("n").build());
    }

    @AfterEach
    void stop() {
        h2.close();
    }

    @Test
    void theWorksOwnExceptionSurvivesAFailedReleaseWhichItCarriesAsSuppressed() {
        IOException mine = new IOException("the work failed");

        assertThatThrownBy(() -> locks.call(LockRequest.paths("/work").build(), () -> {
            throw mine;
        })).isSameAs(mine);
        assertThat(mine.getSuppressed()).singleElement().isInstanceOf(LockUnavailableException.class);
    }

    @Test
    void aFailedReleaseNamesTheLock() {
        LockHandle handle = locks.acquire(LockRequest.paths("/named/lock").build());

        assertThatThrownBy(handle::release).isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("Could not release EXCLUSIVE /named/lock in tenant 'default'")
                .hasMessageContaining("The store is down (test)");
    }

    @Test
    void workThatSucceededReturnsItsResultThoughTheReleaseFailed() {
        String result = locks.call(LockRequest.paths("/work").build(), () -> "done");

        assertThat(result).isEqualTo("done");
    }

    @Test
    void aReleaseTheStoreCouldNotTakeIsRetriedUntilItSucceeds() {
        LockHandle handle = locks.acquire(LockRequest.paths("/retried").build());
        assertThatThrownBy(handle::release).isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("retrying in the background");

        storeDown = null;

        await().atMost(Duration.ofSeconds(5))
                .until(() -> locks.holders(null, "/retried").isEmpty() && locks.pendingReleaseCount() == 0);
    }

    @Test
    void aFailedReleaseIsRetriedNoLongerThanItsLease() {
        LockHandle handle = locks.acquire(LockRequest.paths("/lapsing").lease(Duration.ofSeconds(3)).build());
        assertThatThrownBy(handle::release).isInstanceOf(LockUnavailableException.class);

        await().atMost(Duration.ofSeconds(8)).until(() -> locks.pendingReleaseCount() == 0);
        int attempts = releaseAttempts.get();

        assertThat(attempts).as("release attempts while the lease lasted").isGreaterThan(1);
        // no attempt after the lease ran out, over two more retry intervals
        await().during(Duration.ofMillis(2500)).atMost(Duration.ofSeconds(3)).until(() -> releaseAttempts.get() == attempts);
    }

    @Test
    void aReleaseTheStoreDefersToTheCallersTransactionIsNotRetriedHere() {
        defersReleases = true;
        LockHandle handle = locks.acquire(LockRequest.paths("/deferred").build());
        assertThatThrownBy(handle::release).isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("released again when the caller's transaction ends");
        storeDown = null;

        // nothing over two retry intervals: the store repeats the release when the transaction ends
        await().during(Duration.ofMillis(2500)).atMost(Duration.ofSeconds(3)).until(() -> releaseAttempts.get() == 1);
        assertThat(locks.holders(null, "/deferred")).hasSize(1);
    }

    private LockStore failingReleases(LockStore store) {
        return InterceptedStore.of(store, (method, args, call) -> {
            if (method.equals("release") || method.equals("releaseAndGrant")) {
                releaseAttempts.incrementAndGet();
                String down = storeDown;
                if (down != null) {
                    throw defersReleases ? new ReleaseDeferredException(down, null) : new LockUnavailableException(down, null);
                }
            }
            return call.proceed();
        });
    }
}
