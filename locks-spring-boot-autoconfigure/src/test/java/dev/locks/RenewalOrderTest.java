package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.locks.store.LockStore;
import dev.locks.testing.H2Store;
import dev.locks.testing.InterceptedStore;

/**
 * A renewal by hand and the watchdog's may reach the store in one order and answer in the other.
 * Here the hand renewal runs first and answers last, after the watchdog renewed with the shorter
 * request lease; then the store becomes unreachable for the watchdog. The handle must not believe
 * itself valid once the store no longer holds its grant.
 */
class RenewalOrderTest {

    private static final Duration REQUEST_LEASE = Duration.ofSeconds(1);

    private final CountDownLatch watchdogRenewed = new CountDownLatch(1);

    private final AtomicInteger watchdogRenewals = new AtomicInteger();

    private volatile Thread handRenewer;

    private volatile boolean handRenewalInStore;

    /** Whether the watchdog's renewal reached the store and answered while the hand renewal's answer waited. */
    private volatile boolean reordered;

    private final H2Store h2 = new H2Store();

    private DefaultLockService locks;

    @BeforeEach
    void start() {
        locks = h2.service(reorderingRenewals(h2.store()), H2Store.quietNode("n").build());
    }

    @AfterEach
    void stop() {
        h2.close();
    }

    @Test
    void aHandleIsNeverValidLongerThanTheStoreHoldsItsGrant() throws Exception {
        LockHandle handle = locks.keepRenewed(locks.acquire(LockRequest.paths("/renewed").lease(REQUEST_LEASE).build()));
        handRenewer = Thread.currentThread();

        assertThat(handle.renew(Duration.ofMinutes(10))).isTrue();
        assertThat(reordered).as("the watchdog renewed between the hand renewal's statement and its answer").isTrue();
        Thread.sleep(REQUEST_LEASE.toMillis() + 500);

        boolean inStore = !locks.holders(null, "/renewed").isEmpty();
        assertThat(handle.isValid()).as("valid while the store holds the grant: %s", inStore).isEqualTo(inStore);
        assertThat(inStore).as("the longer lease asked for by hand stays").isTrue();
        assertThat(handle.expiresAt()).isAfter(Instant.now().plus(Duration.ofMinutes(9)));
    }

    /**
     * Lets the hand renewal reach the store, holds its answer back until the watchdog's next renewal
     * has reached the store and answered, and fails the watchdog's renewals after that one.
     */
    private LockStore reorderingRenewals(LockStore store) {
        return InterceptedStore.of(store, (method, args, call) -> {
            boolean renewal = method.equals("renew");
            boolean byHand = Thread.currentThread() == handRenewer;
            boolean watchdogAfterHand = renewal && !byHand && handRenewalInStore;
            if (watchdogAfterHand && watchdogRenewals.getAndIncrement() > 0) {
                throw new LockUnavailableException("The store is out of reach (test)", null);
            }
            Object answer = call.proceed();
            if (renewal && byHand) {
                handRenewalInStore = true;
                reordered = watchdogRenewed.await(5, TimeUnit.SECONDS);
            }
            else if (watchdogAfterHand) {
                watchdogRenewed.countDown();
            }
            return answer;
        });
    }
}
