package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.locks.store.LockStore;
import dev.locks.testing.H2Store;
import dev.locks.testing.InterceptedStore;

/**
 * {@link LockService#call} when the store cannot take the release: the lease frees the lock, so the
 * failed release must not hide what the work did.
 */
class FailedReleaseTest {

    private final H2Store h2 = new H2Store();

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

    private static LockStore failingReleases(LockStore store) {
        return InterceptedStore.of(store, (method, args, call) -> {
    if (method.equals("release") || method.equals("releaseAndGrant")) {
        throw new LockUnavailableException("The store is down (test)", null);
    }
    return call.proceed();
});
    }
}
