package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.locks.LockHandle;

/**
 * Statements that wait for a row lock judge liveness by the clock after the wait. Without care every
 * supported database would revive a lease that ran out while a renewal waited, after another node
 * may have been granted the lock: MariaDB's statement clock stands at the statement's start, H2's at
 * the transaction's, and PostgreSQL re-checks a waited-for row only if it was changed meanwhile.
 */
abstract class RowLockWaitContract extends LockServiceContract {

    @Test
    void aRenewalThatWaitedForARowLockPastTheLeaseDoesNotReviveIt() throws Exception {
        LockHandle h = locks.tryAcquire(x("/waited").lease(Duration.ofMillis(800)).build()).orElseThrow();
        CompletableFuture<Boolean> renewed;
        try (Connection blocker = mainPool().getConnection()) {
            blocker.setAutoCommit(false);
            try (PreparedStatement ps = blocker.prepareStatement(
                    "SELECT id FROM " + prefix + "held WHERE grant_id = ? FOR UPDATE")) {
                ps.setString(1, grantOf(h).grantId());
                try (ResultSet rs = ps.executeQuery()) {
                    assertThat(rs.next()).as("the grant's row").isTrue();
                }
            }
            renewed = CompletableFuture.supplyAsync(() -> h.renew(Duration.ofSeconds(30)));
            sleep(Duration.ofMillis(1300));
            assertThat(renewed).as("the renewal waits for the row lock").isNotDone();
            blocker.commit();
        }
        assertThat(renewed.get(10, TimeUnit.SECONDS)).as("renewed after the lease ran out").isFalse();
        assertThat(h.isValid()).isFalse();
        try (LockHandle next = newNode("node-b").tryAcquire(x("/waited").build()).orElseThrow()) {
            assertThat(next.fencingToken()).isGreaterThan(h.fencingToken());
        }
    }

    @Test
    void aPurgeThatWaitedForARenewalDoesNotDeleteTheRenewedGrant() throws Exception {
        // the renewal below stands for one that locked the rows just before the lease ran out and
        // commits just after: the purge sees the lapsed lease, then waits for the renewal's row lock
        LockHandle h = locks.tryAcquire(x("/renewed-late").lease(Duration.ofMillis(500)).build()).orElseThrow();
        sleep(Duration.ofMillis(800));
        CompletableFuture<Integer> purged;
        try (Connection renewal = mainPool().getConnection()) {
            renewal.setAutoCommit(false);
            try (PreparedStatement ps = renewal.prepareStatement("UPDATE " + prefix + "held SET expires_at = ?"
                    + " WHERE grant_id = ?")) {
                ps.setObject(1, java.time.LocalDateTime.now(java.time.ZoneOffset.UTC).plusMinutes(10));
                ps.setString(2, grantOf(h).grantId());
                assertThat(ps.executeUpdate()).as("the grant's row").isEqualTo(1);
            }
            purged = CompletableFuture.supplyAsync(() -> locks.store().purgeExpired());
            sleep(Duration.ofMillis(1000));
            renewal.commit();
        }
        purged.get(30, TimeUnit.SECONDS);

        assertThat(locks.holders(tenant, "/renewed-late")).as("the renewed grant's row").hasSize(1);
        assertThat(newNode("node-b").tryAcquire(x("/renewed-late").build())).as("another node's try").isEmpty();
    }
}
