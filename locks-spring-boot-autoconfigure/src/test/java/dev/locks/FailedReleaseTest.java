package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

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

        await(() -> locks.holders(null, "/retried").isEmpty() && locks.pendingReleaseCount() == 0, Duration.ofSeconds(5));
    }

    @Test
    void aFailedReleaseIsRetriedNoLongerThanItsLease() {
        LockHandle handle = locks.acquire(LockRequest.paths("/lapsing").lease(Duration.ofSeconds(3)).build());
        assertThatThrownBy(handle::release).isInstanceOf(LockUnavailableException.class);

        await(() -> locks.pendingReleaseCount() == 0, Duration.ofSeconds(8));
        int attempts = releaseAttempts.get();
        sleep(Duration.ofMillis(2500));

        assertThat(attempts).as("release attempts while the lease lasted").isGreaterThan(1);
        assertThat(releaseAttempts.get()).as("release attempts after the lease ran out").isEqualTo(attempts);
    }

    @Test
    void aReleaseTheStoreDefersToTheCallersTransactionIsNotRetriedHere() {
        defersReleases = true;
        LockHandle handle = locks.acquire(LockRequest.paths("/deferred").build());
        assertThatThrownBy(handle::release).isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("released again when the caller's transaction ends");
        storeDown = null;

        sleep(Duration.ofMillis(2500));

        assertThat(releaseAttempts.get()).isEqualTo(1);
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

    private static void await(BooleanSupplier condition, Duration atMost) {
        long until = System.nanoTime() + atMost.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - until).as("waited %s for the condition", atMost).isNegative();
            sleep(Duration.ofMillis(20));
        }
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
