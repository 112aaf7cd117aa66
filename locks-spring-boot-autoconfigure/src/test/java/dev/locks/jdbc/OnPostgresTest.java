package dev.locks.jdbc;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/** The engine's contract on PostgreSQL. */
@ContractsOn(TestDatabase.POSTGRESQL)
class OnPostgresTest {

    @Nested
    class PathSemantics extends PathSemanticsContract {
    }

    @Nested
    class Leases extends LeaseContract {
    }

    @Nested
    class CallersTransactions extends CallersTransactionContract {
    }

    @Nested
    class Waiting extends WaitingContract {
    }

    @Nested
    class HandOffs extends HandOffContract {
    }

    @Nested
    class Concurrency extends ConcurrencyContract {
    }

    @Nested
    class FairWaiting extends FairWaitingContract {
    }

    @Nested
    class Notifications extends LockServiceContract {

        @org.junit.jupiter.api.Test
        void aNodeWithAPoolOfOneConnectionStillGrantsAndReleases() {
            // the release listener would keep the only connection for itself; it is skipped for tiny pools
            JdbcLockService tiny = node("node-tiny", newPool(1));
            for (int i = 0; i < 5; i++) {
                dev.locks.LockHandle h = tiny.acquire(x("/tiny/" + i).waitAtMost(java.time.Duration.ofSeconds(5)).build());
                org.assertj.core.api.Assertions.assertThat(h.release()).isTrue();
            }
        }

        @org.junit.jupiter.api.Test
        void aReleaseOnOneNodeWakesAWaiterOnAnotherAtOnce() throws Exception {
            // polling alone would look again only after five seconds
            JdbcLockService slowPoller = node("node-slow", newPool(4), dev.locks.LockSettings.builder().nodeId("node-slow")
                    .backoff(java.time.Duration.ofSeconds(5), 1.0, java.time.Duration.ofSeconds(5), java.time.Duration.ZERO)
                    .waiterLease(java.time.Duration.ofMinutes(5))
                    .slowWaitLog(null));
            dev.locks.LockHandle held = tryX("/notify").orElseThrow();
            java.util.concurrent.CompletableFuture<Long> waiter = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try (dev.locks.LockHandle h = slowPoller.acquire(x("/notify").waitAtMost(java.time.Duration.ofSeconds(30)).build())) {
                    return System.nanoTime();
                }
            });
            sleep(java.time.Duration.ofMillis(500));
            long released = System.nanoTime();
            held.release();
            long granted = waiter.get(30, java.util.concurrent.TimeUnit.SECONDS);
            org.assertj.core.api.Assertions.assertThat(java.time.Duration.ofNanos(granted - released))
                    .isLessThan(java.time.Duration.ofSeconds(3));
        }

        @org.junit.jupiter.api.Test
        void aPermitFreedElsewhereThatTheFirstWaitersSmallerMaxCannotTakeGoesToAWaiterWithALargerMax() throws Exception {
            // a minute between looks: only a notice, passed on by the first waiter, wakes the second in time
            JdbcLockService slowPoller = node("node-slow", newPool(4), dev.locks.LockSettings.builder().nodeId("node-slow")
                    .backoff(java.time.Duration.ofMinutes(1), 1.0, java.time.Duration.ofMinutes(1), java.time.Duration.ZERO)
                    .waiterLease(java.time.Duration.ofMinutes(5))
                    .notifiedPollInterval(java.time.Duration.ofMinutes(1)).slowWaitLog(null));
            dev.locks.LockHandle first = locks.acquire(dev.locks.LockRequest.semaphore("reports", 3).tenant(tenant).build());
            dev.locks.LockHandle second = locks.acquire(dev.locks.LockRequest.semaphore("reports", 3).tenant(tenant).build());
            java.util.concurrent.CompletableFuture<dev.locks.LockHandle> smallerMax = waitOn(slowPoller,
                    dev.locks.LockRequest.semaphore("reports", 1).tenant(tenant).waitAtMost(java.time.Duration.ofSeconds(30)).build());
            java.util.concurrent.CompletableFuture<dev.locks.LockHandle> largerMax = waitOn(slowPoller,
                    dev.locks.LockRequest.semaphore("reports", 3).tenant(tenant).waitAtMost(java.time.Duration.ofSeconds(30)).build());

            first.release();

            dev.locks.LockHandle got = largerMax.get(20, java.util.concurrent.TimeUnit.SECONDS);
            org.assertj.core.api.Assertions.assertThat(smallerMax).as("its max of 1 is still full").isNotDone();
            got.release();
            second.release();
            smallerMax.get(90, java.util.concurrent.TimeUnit.SECONDS).release();
        }

        /** Starts {@code request} on {@code node} and returns once it is queued and asleep. */
        private java.util.concurrent.CompletableFuture<dev.locks.LockHandle> waitOn(JdbcLockService node,
                dev.locks.LockRequest request) throws InterruptedException {
            int before = node.waitingCount();
            java.util.concurrent.CompletableFuture<dev.locks.LockHandle> future = java.util.concurrent.CompletableFuture
                    .supplyAsync(() -> node.acquire(request));
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (node.waitingCount() <= before && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            org.assertj.core.api.Assertions.assertThat(future).as("the request waits").isNotDone();
            Thread.sleep(200);
            return future;
        }
    }

    @Nested
    class QueryPlans extends QueryPlanContract {

        @Override
        protected void fill(java.sql.Statement st, String table, int rows) throws Exception {
            PostgresGrownTableTest.fill(st, table, 1, rows);
            st.execute("ANALYZE " + table);
        }

        @Override
        protected void assertIndexed(java.util.List<String> plan) {
            org.assertj.core.api.Assertions.assertThat(String.join("\n", plan)).doesNotContain("Seq Scan")
                    .contains("Index");
        }
    }

    @Nested
    class RowLockWaits extends RowLockWaitContract {
    }
}
