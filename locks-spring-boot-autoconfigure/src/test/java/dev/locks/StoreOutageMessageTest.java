package dev.locks;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.locks.store.LockStore;
import dev.locks.testing.H2Store;
import dev.locks.testing.InterceptedStore;

/**
 * An acquisition the store cannot serve says which lock it was for, in which tenant, and why: the
 * store's own message names only its operation.
 */
class StoreOutageMessageTest {

    private final H2Store h2 = new H2Store();

    private volatile String failing;

    private final DefaultLockService locks = h2.service(failing(h2.store()), H2Store.quietNode("n").build());

    @AfterEach
    void stop() {
        h2.close();
    }

    @Test
    void aGrantTheStoreCannotMakeNamesTheLockTheTenantAndTheReason() {
        failing = "tryGrant";

        assertThatThrownBy(() -> locks.tryAcquire(LockRequest.paths("/reports/q3").tenant("acme").build()))
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("EXCLUSIVE /reports/q3 in tenant 'acme'")
                .hasMessageContaining("connection refused (test)");
    }

    @Test
    void aLookWhileWaitingThatTheStoreCannotAnswerNamesTheLockToo() {
        LockHandle held = locks.acquire(LockRequest.paths("/busy").build());
        failing = "conflicts";

        assertThatThrownBy(() -> locks.acquire(LockRequest.paths("/busy").waitAtMost(Duration.ofSeconds(5)).build()))
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("EXCLUSIVE /busy in tenant 'default'")
                .hasMessageContaining("connection refused (test)");
        failing = null;
        held.release();
    }

    private LockStore failing(LockStore store) {
        return InterceptedStore.of(store, (method, args, call) -> {
            if (method.equals(failing)) {
                throw new LockUnavailableException("Lock store failed to " + method + ": connection refused (test)", null);
            }
            return call.proceed();
        });
    }
}
