package dev.locks.torture;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import dev.locks.LockHandle;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;
import dev.locks.testing.TrappingDataSource;

/**
 * A renewal decides from the database clock whether a lease is still alive. If the renewing node
 * stalls (a GC pause, SIGSTOP, a slow network) past the end of its lease before its update reaches
 * the database, another node may take the lock in between; the late renewal must then fail instead
 * of reviving the old grant next to the new one. Where a renewal is several statements (H2) the
 * stall falls between reading the clock and the update; where it is one round trip (MariaDB,
 * PostgreSQL) it holds the whole trip back. The torture run's SIGSTOP hits this window only by
 * chance; here it is forced.
 */
class DelayedRenewalTest {

    abstract static class Contract {

        abstract TestDatabase database();

        @Test
        void aRenewalThatArrivesAfterTheLeaseEndedFailsAndLeavesTheNewHolderAlone() throws Exception {
            String prefix = TestDatabase.uniquePrefix();
            String tenant = "t-" + UUID.randomUUID();
            try (HikariDataSource poolA = database().newPool(4); HikariDataSource poolB = database().newPool(4)) {
                TrappingDataSource stalling = new TrappingDataSource(poolA,
                        // the renewal's UPDATE, whatever its shape (MySQL's finds its rows through JSON_TABLE)
                        sql -> sql.contains(prefix + "held") && sql.contains("expires_at = GREATEST("));
                try (JdbcLockService a = service(stalling.dataSource(), prefix, "node-a", true);
                        JdbcLockService b = service(poolB, prefix, "node-b", false)) {
                    LockRequest request = LockRequest.paths("/renewal").tenant(tenant).lease(Duration.ofSeconds(1)).build();
                    LockHandle first = a.acquire(request);
                    stalling.stallNext(Duration.ofMillis(2500));
                    CompletableFuture<Boolean> renewal = CompletableFuture.supplyAsync(first::renew);
                    Thread.sleep(1600);
                    // node-a's lease ran out in database time while its renewal was stalled
                    LockHandle second = b.tryAcquire(LockRequest.paths("/renewal").tenant(tenant).lease(Duration.ofSeconds(30))
                            .build()).orElseThrow();
                    boolean renewed = renewal.get(30, TimeUnit.SECONDS);

                    assertThat(renewed).as("late renewal").isFalse();
                    assertThat(first.isValid()).isFalse();
                    assertThat(b.holders(tenant, "/renewal")).as("holders after the late renewal").hasSize(1)
                            .allSatisfy(h -> assertThat(h.node()).isEqualTo("node-b"));
                    assertThat(second.isValid()).isTrue();
                    second.release();
                }
                finally {
                    TestDatabase.dropTables(poolA, prefix);
                }
            }
        }

        private static JdbcLockService service(javax.sql.DataSource ds, String prefix, String node, boolean create) {
            return JdbcLockService.builder(ds).tablePrefix(prefix).createSchema(create)
                    .settings(LockSettings.builder().nodeId(node).slowWaitLog(null).purgeInterval(null).build()).build();
        }
    }

    @Nested
    class OnH2 extends Contract {
        @Override
        TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class OnMariaDb extends Contract {
        @Override
        TestDatabase database() {
            return TestDatabase.MYSQL;
        }
    }

    @Nested
    class OnPostgres extends Contract {
        @Override
        TestDatabase database() {
            return TestDatabase.POSTGRESQL;
        }
    }
}
