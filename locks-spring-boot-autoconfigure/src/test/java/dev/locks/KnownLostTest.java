package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.locks.testing.H2Store;

/**
 * What the engine knows of a lock without a round trip ({@link LockHandles#knownLost}), which a
 * commit guarded by lock annotations reads: a lock lost is named with its reason; a lock held, or
 * released already (its release may wait for the caller's commit), is not judged lost.
 */
class KnownLostTest {

    private final H2Store h2 = new H2Store();

    private final DefaultLockService locks = h2.service(h2.store(), H2Store.quietNode("n").build());

    @AfterEach
    void stop() {
        h2.close();
    }

    @Test
    void aHeldLockIsNotKnownLost() {
        LockHandle handle = locks.acquire(LockRequest.paths("/held").build());

        assertThat(LockHandles.knownLost(handle)).isNull();
        handle.release();
    }

    @Test
    void aReleasedLockIsNotKnownLost() {
        LockHandle handle = locks.acquire(LockRequest.paths("/released").build());
        handle.release();

        assertThat(handle.isValid()).isFalse();
        assertThat(LockHandles.knownLost(handle)).isNull();
    }

    @Test
    void aForceReleasedLockIsKnownLostOnceARenewalFoundItGone() {
        LockHandle handle = locks.acquire(LockRequest.paths("/forced").build());
        assertThat(locks.forceRelease(handle.fencingToken())).isTrue();
        assertThat(LockHandles.knownLost(handle)).as("not known before a renewal").isNull();

        assertThat(handle.renew()).isFalse();

        assertThat(LockHandles.knownLost(handle)).contains("/forced").contains("force-released");
    }

    @Test
    void aLockWhoseReleaseFoundItsGrantGoneIsKnownLost() {
        LockHandle handle = locks.acquire(LockRequest.paths("/gone").build());
        assertThat(locks.forceRelease(handle.fencingToken())).isTrue();

        assertThat(handle.release()).isFalse();

        assertThat(LockHandles.knownLost(handle)).contains("/gone").contains("at its release");
    }

    @Test
    void aLockKnownLostStaysKnownLostOnceReleased() {
        LockHandle handle = locks.acquire(LockRequest.paths("/lost-then-released").build());
        assertThat(locks.forceRelease(handle.fencingToken())).isTrue();
        assertThat(handle.renew()).isFalse();

        assertThat(handle.release()).isFalse();

        // with the reason the renewal found, not the release's
        assertThat(LockHandles.knownLost(handle)).contains("/lost-then-released").contains("no longer has the grant")
                .doesNotContain("at its release");
    }

    @Test
    void aLockWhoseReleaseFoundItsGrantGoneIsReportedToTheListeners() {
        List<String> lost = new CopyOnWriteArrayList<>();
        DefaultLockService listened = serviceTelling(lost);
        LockHandle handle = listened.acquire(LockRequest.paths("/unnoticed").build());
        assertThat(listened.forceRelease(handle.fencingToken())).isTrue();

        handle.release();

        assertThat(lost).singleElement().asString().contains("/unnoticed").contains("force-released");
    }

    @Test
    void aReleaseOfALockKnownLostAlreadyDoesNotReportItAgain() {
        List<String> lost = new CopyOnWriteArrayList<>();
        DefaultLockService listened = serviceTelling(lost);
        LockHandle handle = listened.acquire(LockRequest.paths("/noticed").build());
        assertThat(listened.forceRelease(handle.fencingToken())).isTrue();
        assertThat(handle.renew()).isFalse();

        handle.release();

        assertThat(lost).hasSize(1);
    }

    @Test
    void aLockWhoseLeaseRanOutUnrenewedIsKnownLost() throws InterruptedException {
        LockHandle handle = locks.acquire(LockRequest.paths("/lapsed").lease(Duration.ofMillis(50)).build());
        Thread.sleep(100);

        assertThat(LockHandles.knownLost(handle)).contains("/lapsed").contains("ran out");
    }

    @Test
    void aNestedLockIsKnownLostWhenTheLockItReliesOnIs() {
        LockHandle outer = locks.enter(LockRequest.paths("/nested").build());
        LockHandle inner = locks.enter(LockRequest.paths("/nested/child").build());
        try {
            assertThat(locks.forceRelease(outer.fencingToken())).isTrue();
            assertThat(outer.renew()).isFalse();

            assertThat(LockHandles.knownLost(inner)).contains("/nested").contains("force-released");
        }
        finally {
            inner.release();
            outer.release();
        }
    }

    /** A service whose listener adds each lost lock's paths and reason to {@code lost}. */
    private DefaultLockService serviceTelling(List<String> lost) {
        return h2.service(h2.store(), H2Store.quietNode("m").listener(new LockListener() {
            @Override
            public void leaseLost(LockHandle handle, String reason) {
                lost.add(handle.request().keys() + ": " + reason);
            }
        }).build());
    }
}
