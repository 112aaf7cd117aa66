package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import dev.locks.LockHandle;
import dev.locks.LockListener;
import dev.locks.LockLostException;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.store.Grant;

/** Leases in database time, renewal, owner checks. */
abstract class LeaseContract extends LockServiceContract {

    @Test
    void anExpiredLeaseFreesTheLockForAnotherNode() {
        LockHandle first = locks.tryAcquire(x("/lease").lease(Duration.ofMillis(600)).build()).orElseThrow();
        JdbcLockService other = newNode("node-b");
        assertThat(other.tryAcquire(x("/lease").build())).isEmpty();
        sleep(Duration.ofMillis(900));
        assertThat(first.isValid()).isFalse();
        try (LockHandle second = other.tryAcquire(x("/lease").build()).orElseThrow()) {
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        }
    }

    @Test
    void renewAfterExpiryIsRefusedAndTheHandleReportsTheLoss() {
        LockHandle h = locks.tryAcquire(x("/renew").lease(Duration.ofMillis(500)).build()).orElseThrow();
        sleep(Duration.ofMillis(800));
        assertThat(h.renew()).isFalse();
        assertThat(h.isValid()).isFalse();
        assertThatThrownBy(h::checkValid).isInstanceOf(LockLostException.class).hasMessageContaining("/renew");
    }

    @Test
    void renewBeforeExpiryExtendsTheLeaseInDatabaseTime() {
        try (LockHandle h = locks.tryAcquire(x("/renew-ok").lease(Duration.ofSeconds(2)).build()).orElseThrow()) {
            var before = h.expiresAt();
            sleep(Duration.ofMillis(50));
            assertThat(h.renew(Duration.ofSeconds(10))).isTrue();
            assertThat(h.expiresAt()).isAfter(before);
            assertThat(h.isValid()).isTrue();
        }
    }

    @Test
    void aRenewalWithAShorterLeaseLeavesTheLongerOneInPlace() {
        LockHandle h = locks.tryAcquire(x("/kept-longer").lease(Duration.ofSeconds(30)).build()).orElseThrow();
        Instant granted = h.expiresAt();

        assertThat(h.renew(Duration.ofMillis(300))).isTrue();
        sleep(Duration.ofMillis(600));

        assertThat(h.isValid()).isTrue();
        assertThat(h.expiresAt()).isEqualTo(granted);
        assertThat(newNode("node-b").tryAcquire(x("/kept-longer").build())).as("another node's try").isEmpty();
        h.release();
    }

    @Test
    void aBatchRenewalThatFindsALongerLeaseCountsItsGrantAsRenewed() {
        LockHandle longer = locks.tryAcquire(x("/longer/kept").lease(Duration.ofSeconds(30)).build()).orElseThrow();
        LockHandle lapsed = locks.tryAcquire(x("/longer/lapsed").lease(Duration.ofMillis(300)).build()).orElseThrow();
        sleep(Duration.ofMillis(600));

        Map<String, Instant> renewed = locks.store().renew(List.of(grantOf(longer), grantOf(lapsed)),
                Duration.ofSeconds(1));

        assertThat(renewed).containsOnlyKeys(grantOf(longer).grantId());
        longer.release();
    }

    @Test
    void aBatchRenewalRenewsTheGrantsStillHeldAndLeavesOutTheOnesGone() {
        LockHandle first = tryX("/batch/a").orElseThrow();
        LockHandle gone = tryX("/batch/b", "/batch/c").orElseThrow();
        LockHandle last = tryX("/batch/d", "/batch/e").orElseThrow();
        Grant goneGrant = grantOf(gone);
        gone.release();

        Map<String, Instant> renewed = locks.store().renew(List.of(grantOf(first), goneGrant, grantOf(last)),
                Duration.ofSeconds(60));

        assertThat(renewed).containsOnlyKeys(grantOf(first).grantId(), grantOf(last).grantId());
        assertThat(renewed.values()).allMatch(until -> until.isAfter(Instant.now().plusSeconds(50)));
        first.release();
        last.release();
    }

    @Test
    void aBatchRenewalLeavesALapsedGrantLapsed() {
        LockHandle live = tryX("/lapsing/live").orElseThrow();
        LockHandle lapsed = locks.tryAcquire(x("/lapsing/lapsed").lease(Duration.ofMillis(300)).build()).orElseThrow();
        sleep(Duration.ofMillis(600));

        Map<String, Instant> renewed = locks.store().renew(List.of(grantOf(live), grantOf(lapsed)),
                Duration.ofSeconds(60));

        assertThat(renewed).containsOnlyKeys(grantOf(live).grantId());
        assertThat(newNode("node-b").tryAcquire(x("/lapsing/lapsed").build())).as("another node's try")
                .isPresent().get().matches(LockHandle::release);
        live.release();
    }

    @Test
    void aRenewalLeavesNoRowLockedBehind() throws Exception {
        LockHandle h = tryX("/unlocked").orElseThrow();
        locks.store().renew(List.of(grantOf(h)), Duration.ofSeconds(60));

        // a renewal that left its transaction open on a pooled connection would hold the row until the
        // connection's next use: this update, on a connection of its own, would wait and time out
        try (Connection other = newPool(1).getConnection()) {
            other.setAutoCommit(false);
            try (PreparedStatement ps = other.prepareStatement("UPDATE " + prefix + "held SET expires_at = expires_at"
                    + " WHERE grant_id = ?")) {
                ps.setQueryTimeout(3);
                ps.setString(1, grantOf(h).grantId());
                assertThat(ps.executeUpdate()).isEqualTo(1);
            }
            finally {
                other.rollback();
            }
        }
        h.release();
    }

    @Test
    void aBatchRenewalOfThreeGrantsInFourSlotsRenewsEachLiveOneAndNotTheLapsedOne() {
        LockHandle first = tryX("/slots/first").orElseThrow();
        LockHandle lapsed = locks.tryAcquire(x("/slots/lapsed").lease(Duration.ofMillis(300)).build()).orElseThrow();
        LockHandle last = tryX("/slots/last").orElseThrow();
        sleep(Duration.ofMillis(600));

        Map<String, Instant> renewed = locks.store().renew(List.of(grantOf(first), grantOf(lapsed), grantOf(last)),
                Duration.ofSeconds(60));

        assertThat(renewed).containsOnlyKeys(grantOf(first).grantId(), grantOf(last).grantId());
        first.release();
        last.release();
    }

    @Test
    void aBatchRenewalOfMoreGrantsThanOneChunkRenewsEveryOne() {
        List<LockHandle> handles = new ArrayList<>();
        List<Grant> grants = new ArrayList<>();
        for (int i = 0; i <= LeaseRenewal.CHUNK; i++) {
            LockHandle h = tryX("/chunked/" + i).orElseThrow();
            handles.add(h);
            grants.add(grantOf(h));
        }

        Map<String, Instant> renewed = locks.store().renew(grants, Duration.ofSeconds(60));

        assertThat(renewed).hasSize(LeaseRenewal.CHUNK + 1);
        handles.forEach(LockHandle::release);
    }

    @Test
    void aStaleHolderCannotReleaseTheNewHoldersLock() {
        LockHandle stale = locks.tryAcquire(x("/stale").lease(Duration.ofMillis(500)).build()).orElseThrow();
        sleep(Duration.ofMillis(800));
        JdbcLockService other = newNode("node-b");
        try (LockHandle fresh = other.tryAcquire(x("/stale").build()).orElseThrow()) {
            assertThat(stale.release()).isFalse();
            assertThat(locks.tryAcquire(x("/stale").build())).isEmpty();
            assertThat(fresh.isValid()).isTrue();
        }
    }

    @Test
    void aGrantCannotBeReleasedWithAnotherOwnersToken() {
        try (LockHandle h = tryX("/owned").orElseThrow()) {
            var real = ((dev.locks.store.Grant) grantOf(h));
            var forged = new dev.locks.store.Grant(real.grantId(), "0".repeat(32), real.fencingToken(), real.rows(),
                    real.expiresAt());
            assertThat(locks.store().release(forged, Duration.ZERO)).isFalse();
            assertThat(newNode("node-b").tryAcquire(x("/owned").build())).isEmpty();
        }
    }

    @Test
    void theWatchdogKeepsAShortLeaseAliveThroughALongTask() {
        JdbcLockService other = newNode("node-b");
        AtomicBoolean otherGotIn = new AtomicBoolean();
        LockHandle[] inside = new LockHandle[1];
        locks.run(x("/long").lease(Duration.ofMillis(900)).build(), () -> {
            for (int i = 0; i < 10; i++) {
                sleep(Duration.ofMillis(300));
                other.tryAcquire(x("/long").build()).ifPresent(h -> {
                    otherGotIn.set(true);
                    h.release();
                });
            }
            inside[0] = locks.tryEnter(x("/long").build()).orElseThrow();
            assertThat(inside[0].isValid()).isTrue();
            inside[0].release();
        });
        assertThat(otherGotIn).isFalse();
        assertThat(other.tryAcquire(x("/long").build())).isPresent().get().matches(LockHandle::release);
    }

    @Test
    void aForceReleasedLockIsReportedLostByTheWatchdog() {
        List<String> lost = new CopyOnWriteArrayList<>();
        LockListener listener = new LockListener() {
            @Override
            public void leaseLost(LockHandle handle, String reason) {
                lost.add(reason);
            }
        };
        JdbcLockService watched = node("node-w", mainPool(),
                LockSettings.builder().nodeId("node-w").listener(listener).slowWaitLog(null));
        LockHandle h = watched.enter(x("/forced").lease(Duration.ofMillis(600)).build());
        long id = watched.holders(tenant, "/forced").get(0).lockId();
        assertThat(watched.store().forceRelease(id)).hasSize(1);
        sleep(Duration.ofMillis(700));
        assertThat(h.isValid()).isFalse();
        assertThat(lost).hasSize(1);
        assertThatThrownBy(h::checkValid).isInstanceOf(LockLostException.class).hasMessageContaining("force-released");
        h.release();
    }

    @Test
    void aForceReleaseOfAGrantWhoseLeaseEndedReleasesNothing() {
        LockHandle lapsed = locks.tryAcquire(x("/lapsed").lease(Duration.ofMillis(300)).build()).orElseThrow();
        // expired, and still in the table: the next purge is a minute away
        sleep(Duration.ofMillis(600));

        assertThat(locks.forceRelease(lapsed.fencingToken())).isFalse();
    }

    @Test
    void lockAtLeastForKeepsASingletonAfterAnEarlyRelease() {
        LockRequest job = LockRequest.singleton("report").tenant(tenant).lease(Duration.ofSeconds(30))
                .lockAtLeastFor(Duration.ofMillis(800)).build();
        JdbcLockService other = newNode("node-b");
        LockHandle h = locks.tryAcquire(job).orElseThrow();
        assertThat(h.release()).isTrue();
        assertThat(other.tryAcquire(job)).isEmpty();
        sleep(Duration.ofMillis(1000));
        assertThat(other.tryAcquire(job)).isPresent().get().matches(LockHandle::release);
    }

    @Test
    void aRenewalCollectedBeforeASingletonsReleaseDoesNotExtendItsLockAtLeastFor() {
        LockRequest job = LockRequest.singleton("raced").tenant(tenant).lease(Duration.ofSeconds(60))
                .lockAtLeastFor(Duration.ofMillis(800)).build();
        LockHandle h = locks.tryAcquire(job).orElseThrow();
        dev.locks.store.Grant grant = grantOf(h);
        assertThat(h.release()).isTrue();

        // what the watchdog sends when it collected the handle just before the release
        assertThat(locks.store().renew(List.of(grant), Duration.ofSeconds(60))).isEmpty();

        sleep(Duration.ofMillis(1000));
        assertThat(newNode("node-b").tryAcquire(job)).isPresent().get().matches(LockHandle::release);
    }

    @Test
    void lockAtLeastForLongerThanTheDefaultLeaseKeepsTheSingletonThatLong() {
        JdbcLockService shortLeases = node("node-short", mainPool(),
                LockSettings.builder().nodeId("node-short").defaultLease(Duration.ofMillis(600)).slowWaitLog(null));
        LockRequest job = LockRequest.singleton("long-report").tenant(tenant).lockAtLeastFor(Duration.ofMillis(1500))
                .build();
        JdbcLockService other = newNode("node-b");
        assertThat(shortLeases.tryAcquire(job).orElseThrow().release()).isTrue();
        sleep(Duration.ofMillis(900));
        assertThat(other.tryAcquire(job)).as("past the default lease, within lockAtLeastFor").isEmpty();
        sleep(Duration.ofMillis(900));
        assertThat(other.tryAcquire(job)).isPresent().get().matches(LockHandle::release);
    }
}
