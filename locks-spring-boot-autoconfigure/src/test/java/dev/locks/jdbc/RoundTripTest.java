package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import dev.locks.LockHandle;
import dev.locks.LockKind;
import dev.locks.LockMode;
import dev.locks.LockPath;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.PathNormalizer;
import dev.locks.store.Grant;
import dev.locks.store.GrantRequest;
import dev.locks.testing.CountingDataSource;
import dev.locks.testing.TestDatabase;

/**
 * Pins the statements (each one a round trip to the database; commits count) that an uncontended
 * acquire and a release cost, so that they cannot grow unnoticed. A change that adds a statement
 * must change these numbers on purpose, and BENCHMARKS.md with them.
 *
 * <p>Counted through {@link CountingDataSource}: statements, commits and rollbacks. Not counted, but
 * sent by some drivers: switching auto-commit off and on around the grant transaction (H2 and
 * PostgreSQL's driver send nothing; on MySQL/MariaDB the store does not switch it, since Connector/J
 * would send a {@code SET autocommit} each way).
 */
class RoundTripTest {

    @Nested
    class OnH2 extends Counts {
        OnH2() {
            // H2 has no shared row locks: a path grant locks its tenant's root row alone, so a new path in a
            // tenant used before costs what a known one does
            super(TestDatabase.H2, null,
                    // SELECT ... FOR UPDATE of the root's node row (the clock with it),
                    // INSERT ... SELECT ... WHERE NOT EXISTS (conflicts), COMMIT
                    3,
                    3,
                    // a hand-off: a queued request's grant, which also deletes its waiting row, with the
                    // release's DELETE after the node lock
                    5,
                    // H2's clock stands still in a transaction, so renewals run in auto-commit: SELECT ... FOR
                    // UPDATE of the grants' rows, the clock, the UPDATE
                    3);
        }
    }

    @Nested
    class OnMariaDb extends Counts {
        OnMariaDb() {
            // one anonymous compound statement (BEGIN NOT ATOMIC ... END) opens a READ COMMITTED transaction,
            // creates and locks the node rows, checks for conflicts, inserts and commits
            super(TestDatabase.MYSQL, null, 1, 1,
                    // in a hand-off the block deletes the released grant after the node locks and the waiting
                    // row after the insert
                    1,
                    // a block locks the grants' rows, reads the clock, extends the leases and commits
                    1);
        }
    }

    @Nested
    class OnMySqlProtocol extends Counts {
        OnMySqlProtocol() {
            // MySQL has no compound statements outside stored programs: the same server through the MySQL
            // dialect, as it runs on MySQL
            super(TestDatabase.MYSQL, new MySqlDialect(),
                    // SET TRANSACTION ISOLATION LEVEL READ COMMITTED, START TRANSACTION, one SELECT locking the
                    // ancestors' node rows IN SHARE MODE and the path's FOR UPDATE, conflict query as a
                    // locking read that does not wait (MySqlDialect#lockingReadWithoutWaiting), INSERT,
                    // COMMIT; the connection stays in auto-commit, so Connector/J sends no SET autocommit
                    6,
                    // a path under a folder this store has not seen either: INSERT IGNORE of the folder's node
                    // row (locked shared), INSERT ... ON DUPLICATE KEY UPDATE of the path's (locked exclusive),
                    // then the SELECT; a new path under a known folder needs only the second
                    8,
                    // a hand-off: a queued request's grant, which also deletes its waiting row, with the
                    // release's DELETE after the node locks
                    8,
                    // SET TRANSACTION, START TRANSACTION, SELECT ... FOR UPDATE of the grants' rows, the clock,
                    // the UPDATE, COMMIT
                    6);
        }
    }

    @Nested
    class OnPostgres extends Counts {
        OnPostgres() {
            // advisory locks need no rows, so a path's first use costs nothing extra
            super(TestDatabase.POSTGRESQL, null,
                    // one execution, in auto-commit, of statements that pgjdbc sends together: BEGIN ISOLATION
                    // LEVEL READ COMMITTED, a SELECT taking all advisory locks (shared ancestors, exclusive
                    // path), INSERT ... SELECT ... WHERE NOT EXISTS (conflicts) RETURNING id, COMMIT
                    1,
                    1,
                    // in a hand-off the release's DELETE (with its NOTIFY) joins them after the locks, and a
                    // DELETE of the waiting row follows the insert
                    1,
                    // pipelined: BEGIN, SELECT ... FOR UPDATE of the grants' rows, the UPDATE with the clock
                    // read once the rows are locked, COMMIT
                    1);
        }
    }

    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    abstract static class Counts {

        private final TestDatabase database;

        private final SqlDialect dialect;

        private final int acquireOfAKnownPath;

        private final int acquireOfANewPath;

        private final int handOff;

        private final int renewal;

        private HikariDataSource pool;

        private CountingDataSource counting;

        private JdbcLockService locks;

        private String prefix;

        private String folder;

        Counts(TestDatabase database, SqlDialect dialect, int acquireOfAKnownPath, int acquireOfANewPath,
                int handOff, int renewal) {
            this.database = database;
            this.dialect = dialect;
            this.acquireOfAKnownPath = acquireOfAKnownPath;
            this.acquireOfANewPath = acquireOfANewPath;
            this.handOff = handOff;
            this.renewal = renewal;
        }

        @BeforeAll
        void start() throws InterruptedException {
            prefix = TestDatabase.uniquePrefix();
            pool = database.newPool(4);
            JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true).build().close();
            counting = new CountingDataSource(pool);
            // no purge: nothing but the operation under test may run statements
            JdbcLockService.Builder builder = JdbcLockService.builder(counting.dataSource()).tablePrefix(prefix)
                    .settings(LockSettings.builder().nodeId("round-trips").purgeInterval(null).build());
            locks = (dialect != null ? builder.dialect(dialect) : builder).build();
            // PostgreSQL's release listener runs a LISTEN and a probe of its own on its own connection in
            // the background, and probes again after each silence: not counted as any operation's
            int listen = database == TestDatabase.POSTGRESQL ? 2 : 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (counting.listenerStatements() < listen && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(counting.listenerStatements()).as("the listener's LISTEN and probe").isEqualTo(listen);
            // building the service reads H2's query cache setting with a query (Connector/J's settings are
            // read from the connection object)
            int tuningAdvice = database == TestDatabase.H2 ? 1 : 0;
            // and checks that each lock table can be read (PostgreSQL has no node table)
            int schemaCheck = database == TestDatabase.POSTGRESQL ? 2 : 3;
            assertThat(counting.operationStatements()).as("statements before any lock")
                    .isEqualTo(tuningAdvice + schemaCheck);
            // the tenant in use, as in an application: on H2 its first grant creates the root's node row
            locks.acquire(exclusive("/rt")).release();
            counting.reset();
        }

        @BeforeEach
        void newFolder() {
            folder = "/rt/" + UUID.randomUUID();
        }

        @AfterAll
        void stop() {
            if (locks != null) {
                locks.close();
            }
            if (pool != null) {
                TestDatabase.dropTables(pool, prefix);
                pool.close();
            }
        }

        @Test
        void anUncontendedAcquireOfAPathUsedBeforeTakesAFixedNumberOfStatements() {
            locks.acquire(exclusive(folder + "/file")).release();

            assertThat(statementsOf(() -> locks.acquire(exclusive(folder + "/file")))).isEqualTo(acquireOfAKnownPath);
        }

        @Test
        void theFirstAcquireOfAPathTakesAFixedNumberOfStatements() {
            assertThat(statementsOf(() -> locks.acquire(exclusive(folder + "/file")))).isEqualTo(acquireOfANewPath);
        }

        @Test
        void aDeepPathTakesNoMoreStatementsThanAShallowOne() {
            String deep = folder + "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r";
            locks.acquire(exclusive(deep)).release();

            assertThat(statementsOf(() -> locks.acquire(exclusive(deep)))).isEqualTo(acquireOfAKnownPath);
        }

        @Test
        void aRequestForSeveralPathsTakesNoMoreStatementsThanForOne() {
            LockRequest three = LockRequest.paths(folder + "/x", folder + "/y/z", "/elsewhere/" + folder).exclusive().build();
            locks.acquire(three).release();

            assertThat(statementsOf(() -> locks.acquire(three))).isEqualTo(acquireOfAKnownPath);
        }

        @Test
        void aSharedAcquireTakesAsManyStatementsAsAnExclusiveOne() {
            LockRequest shared = LockRequest.paths(folder + "/file").shared().build();
            locks.acquire(shared).release();

            assertThat(statementsOf(() -> locks.acquire(shared))).isEqualTo(acquireOfAKnownPath);
        }

        @Test
        void aSemaphorePermitTakesAsManyStatementsAsAPathLock() {
            LockRequest permit = LockRequest.semaphore("permits-" + UUID.randomUUID(), 3).build();
            locks.acquire(permit).release();
            LockHandle other = locks.acquire(permit);
            LockHandle[] taken = new LockHandle[1];

            assertThat(statementsOf(() -> taken[0] = locks.acquire(permit))).isEqualTo(acquireOfAKnownPath);
            taken[0].release();
            other.release();
        }

        @Test
        void aReleaseHandsTheLockToAWaiterAsleepInThisJvmInOneTransaction() throws Exception {
            // a backoff of a minute: the waiter asks the database again only when a release wakes it
            JdbcLockService.Builder builder = JdbcLockService.builder(counting.dataSource()).tablePrefix(prefix)
                    .settings(LockSettings.builder().nodeId("round-trips-waiting").purgeInterval(null)
                            .backoff(Duration.ofMinutes(1), 1.0, Duration.ofMinutes(1), Duration.ZERO)
                    .waiterLease(Duration.ofMinutes(5)).build());
            try (JdbcLockService patient = (dialect != null ? builder.dialect(dialect) : builder).build()) {
                LockHandle held = patient.acquire(exclusive(folder + "/file"));
                CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(() -> patient.acquire(
                        LockRequest.paths(folder + "/file").exclusive().waitAtMost(Duration.ofSeconds(30)).build()));
                while (patient.waitingCount() == 0) {
                    Thread.sleep(5);
                }
                // past the queueing and the first look, asleep on its backoff
                Thread.sleep(300);

                int statements = statementsOf(() -> {
                    held.release();
                    waiter.join().release();
                });

                // the release with the waiter's grant (which also removes its queue record), the waiter's release
                assertThat(statements).isEqualTo(handOff + 1);
            }
        }

        @Test
        void aReleaseTakesOneStatement() {
            // one auto-committed DELETE (on PostgreSQL wrapped with its NOTIFY in the same statement)
            LockHandle handle = locks.acquire(exclusive(folder + "/file"));

            assertThat(statementsOf(handle::release)).isEqualTo(1);
        }

        @Test
        void aRenewalOfSeveralGrantsTakesAFixedNumberOfStatements() {
            List<LockHandle> handles = List.of(locks.acquire(exclusive(folder + "/a")),
                    locks.acquire(exclusive(folder + "/b")), locks.acquire(LockRequest.paths(folder + "/c",
                            folder + "/d").exclusive().build()));
            List<Grant> grants = handles.stream().map(LockServiceContract::grantOf).toList();

            assertThat(statementsOf(() -> assertThat(locks.store().renew(grants, Duration.ofMinutes(1))).hasSize(3)))
                    .isEqualTo(renewal);
            handles.forEach(LockHandle::release);
        }

        @Test
        void aWaitersLookForConflictsTakesOneStatement() {
            LockHandle held = locks.acquire(exclusive(folder + "/file"));
            GrantRequest look = lookOf(LockKind.PATH, new PathNormalizer(true, 4000).normalize(folder + "/file"),
                    LockMode.EXCLUSIVE, 0);

            assertThat(statementsOf(() -> assertThat(locks.store().conflicts(look)).hasSize(1))).isEqualTo(1);
            held.release();
        }

        @Test
        void aSemaphoreWaitersLookTakesOneStatement() {
            LockHandle held = locks.acquire(LockRequest.semaphore("exports", 1).build());
            GrantRequest look = lookOf(LockKind.SEMAPHORE, LockPath.flat("exports"), LockMode.SHARED, 1);

            assertThat(statementsOf(() -> assertThat(locks.store().conflicts(look)).hasSize(1))).isEqualTo(1);
            held.release();
        }

        @Test
        void listingTheHoldersOfASemaphoreTakesOneStatement() {
            LockHandle held = locks.acquire(LockRequest.semaphore("exports", 1).build());

            assertThat(statementsOf(() -> assertThat(locks.holders(LockKind.SEMAPHORE, null, "exports")).hasSize(1)))
                    .isEqualTo(1);
            held.release();
        }

        @Test
        void listingTheHoldersOfAPathTakesOneStatement() {
            LockHandle held = locks.acquire(exclusive(folder + "/file"));

            assertThat(statementsOf(() -> assertThat(locks.holders("default", folder)).hasSize(1))).isEqualTo(1);
            held.release();
        }

        private int statementsOf(Runnable operation) {
            counting.reset();
            operation.run();
            return counting.operationStatements();
        }

        /** A request of another owner in the default tenant, not queued, as a waiter's look sends it. */
        private static GrantRequest lookOf(LockKind kind, LockPath path, LockMode mode, int permits) {
            return new GrantRequest(kind, "default", List.of(path), mode, Duration.ofSeconds(30), permits,
                    "b".repeat(32), UUID.randomUUID().toString().replace("-", ""), "round-trips", "thread", 0, false);
        }

        private static LockRequest exclusive(String path) {
            return LockRequest.paths(path).exclusive().build();
        }
    }
}
