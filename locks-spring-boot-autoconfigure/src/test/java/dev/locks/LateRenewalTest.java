package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.AfterEach;
import org.slf4j.LoggerFactory;
import org.junit.jupiter.api.Test;

import dev.locks.testing.H2Store;
import dev.locks.testing.InterceptedStore;

/**
 * A lease lost because the watchdog's renewal came too late (a pool whose connections the
 * application's work holds, a slow database) says so, with how late: the store alone would only
 * say that the grant had expired.
 */
class LateRenewalTest {

    private static final Duration LEASE = Duration.ofMillis(300);

    private final H2Store h2 = new H2Store();

    private final List<String> reasons = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        h2.close();
    }

    @Test
    void aLeaseLostToARenewalSlowerThanWhatWasLeftOfItSaysHowLongTheRenewalTook() {
        DefaultLockService locks = serviceWhoseRenewalsStall(Duration.ofMillis(900));

        LockHandle handle = locks.keepRenewed(locks.acquire(LockRequest.paths("/late").lease(LEASE).build()));

        await().atMost(Duration.ofSeconds(10)).until(() -> !reasons.isEmpty());
        assertThat(handle.isValid()).isFalse();
        // sent in time unless this machine held the watchdog's tick up past the lease: both say how late
        assertThat(reasons.get(0)).containsAnyOf("ms the lease had left", "after the lease had run out")
                .contains("pool of their own");
    }

    @Test
    void aRenewalSlowerThanTheTimeBetweenRenewalsIsLoggedBeforeALeaseIsLost() {
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        Logger watchdogLog = (Logger) LoggerFactory.getLogger(LeaseRenewer.class);
        watchdogLog.addAppender(appender);
        try {
            // renewed every 666 ms; the stalled renewal answers with more than a second of the lease left
            DefaultLockService locks = serviceWhoseRenewalsStall(Duration.ofMillis(900));
            LockHandle handle = locks.keepRenewed(locks.acquire(LockRequest.paths("/slow").lease(Duration.ofSeconds(2)).build()));

            await().atMost(Duration.ofSeconds(10)).until(() -> !appender.list.isEmpty());
            assertThat(appender.list.get(0).getLevel()).isEqualTo(Level.WARN);
            assertThat(appender.list.get(0).getFormattedMessage()).contains("longer than the 666 ms between renewals")
                    .contains("pool of their own");
            assertThat(handle.isValid()).isTrue();
            assertThat(reasons).isEmpty();
            handle.release();
        }
        finally {
            watchdogLog.detachAppender(appender);
        }
    }

    @Test
    void aLeaseLostToAStoreThatNoLongerHadTheGrantInTimeSaysNothingOfLateness() {
        DefaultLockService locks = serviceWhoseRenewalsStall(Duration.ZERO);
        LockHandle handle = locks.keepRenewed(locks.acquire(LockRequest.paths("/forced").lease(LEASE).build()));

        assertThat(locks.forceRelease(handle.fencingToken())).isTrue();

        await().atMost(Duration.ofSeconds(10)).until(() -> !reasons.isEmpty());
        assertThat(reasons.get(0)).contains("force-released").doesNotContain("renewal took").doesNotContain("pool");
    }

    /** A service whose first renewal waits {@code stall} before it reaches the store. */
    private DefaultLockService serviceWhoseRenewalsStall(Duration stall) {
        AtomicLong firstStall = new AtomicLong(stall.toMillis());
        return h2.service(InterceptedStore.of(h2.store(), (method, args, call) -> {
            if (method.equals("renew")) {
                Thread.sleep(firstStall.getAndSet(0));
            }
            return call.proceed();
        }), H2Store.quietNode("n").listener(new LockListener() {
            @Override
            public void leaseLost(LockHandle handle, String reason) {
                reasons.add(reason);
            }
        }).build());
    }
}
