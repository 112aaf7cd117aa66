package dev.locks.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import dev.locks.LockHandle;
import dev.locks.LockKind;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.jdbc.SqlDialect;
import dev.locks.testing.TestDatabase;
import dev.locks.testing.TrappingDataSource;

/** The {@code locks} health on one database: up with the clock difference, down when the store fails. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LocksHealthContract {

    private static final Duration FIVE_SECONDS = Duration.ofSeconds(5);

    private final String prefix = TestDatabase.uniquePrefix();

    private HikariDataSource pool;

    private final List<AutoCloseable> toClose = new ArrayList<>();

    protected abstract TestDatabase database();

    /** @return this database's dialect, for a service that cannot reach the database to detect it */
    protected abstract SqlDialect dialect();

    /** @return a JDBC URL of this database's driver pointing at a port nobody listens on */
    protected abstract String urlOnClosedPort(int port);

    @BeforeAll
    void createSchema() {
        pool = database().newPool(4);
        JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true).build().close();
    }

    @AfterEach
    void closeServices() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
        toClose.clear();
    }

    @AfterAll
    void dropSchema() {
        if (pool != null) {
            TestDatabase.dropTables(pool, prefix);
            pool.close();
        }
    }

    private JdbcLockService service(javax.sql.DataSource ds, String tablePrefix) {
        JdbcLockService service = JdbcLockService.builder(ds).dialect(dialect()).tablePrefix(tablePrefix)
                .settings(LockSettings.builder().nodeId("node-h").purgeInterval(null).build()).build();
        toClose.add(service);
        return service;
    }

    @Test
    void isUpWithTheDatabaseTimeAndTheClockDifferenceWhenTheStoreAnswers() {
        JdbcLockService locks = service(pool, prefix);
        Instant before = Instant.now();
        Health health = new LocksHealthIndicator(locks, FIVE_SECONDS).health();
        Instant after = Instant.now();

        assertThat(health.getStatus()).isEqualTo(Status.UP);
        assertThat(health.getDetails()).containsEntry("store", "reachable").containsEntry("schema", "present")
                .containsEntry("node", "node-h").containsEntry("heldByThisNode", 0).containsEntry("waitingOnThisNode", 0)
                .containsEntry("lockProbe", "granted and released")
                .containsKeys("databaseTime", "jvmTime", "clockSkewMillis", "lockProbeMillis").doesNotContainKey("warning");
        // the database runs on this machine: its clock is this JVM's
        Instant databaseTime = Instant.parse((String) health.getDetails().get("databaseTime"));
        assertThat(databaseTime).isBetween(before.minusSeconds(2), after.plusSeconds(2));
        assertThat((Long) health.getDetails().get("clockSkewMillis"))
                .isEqualTo(Duration.between(Instant.parse((String) health.getDetails().get("jvmTime")), databaseTime).toMillis());
    }

    @Test
    void warnsButStaysUpWhenTheClocksDifferByMoreThanTheThreshold() {
        JdbcLockService locks = service(pool, prefix);
        Clock jvmTenSecondsBehind = Clock.offset(Clock.systemUTC(), Duration.ofSeconds(-10));
        Health health = new LocksHealthIndicator(locks, FIVE_SECONDS, jvmTenSecondsBehind, true).health();

        assertThat(health.getStatus()).isEqualTo(Status.UP);
        assertThat((Long) health.getDetails().get("clockSkewMillis")).isBetween(8_000L, 12_000L);
        assertThat((String) health.getDetails().get("warning")).contains("ahead of this JVM's").contains("PT5S");
    }

    @Test
    void reportsAClockBehindTheJvmAsBehind() {
        JdbcLockService locks = service(pool, prefix);
        Clock jvmTenSecondsAhead = Clock.offset(Clock.systemUTC(), Duration.ofSeconds(10));
        Health health = new LocksHealthIndicator(locks, FIVE_SECONDS, jvmTenSecondsAhead, true).health();

        assertThat((Long) health.getDetails().get("clockSkewMillis")).isBetween(-12_000L, -8_000L);
        assertThat((String) health.getDetails().get("warning")).contains("behind this JVM's");
    }

    @Test
    void isDownWhenTheLockTablesAreMissing() throws SQLException {
        Health health = healthAfterDropping("held", "wait");

        assertThat(health.getStatus()).isEqualTo(Status.DOWN);
        assertThat(health.getDetails()).containsEntry("store", "reachable").containsEntry("schema", "missing or unreadable")
                .containsKey("error");
    }

    @Test
    void isDownWhenTheWaitingTableIsMissing() throws SQLException {
        Health health = healthAfterDropping("wait");

        assertThat(health.getStatus()).isEqualTo(Status.DOWN);
        assertThat(health.getDetails()).containsEntry("schema", "missing or unreadable");
    }

    @Test
    void theLockProbeLeavesNoLockBehind() {
        JdbcLockService locks = service(pool, prefix);
        Health health = new LocksHealthIndicator(locks, FIVE_SECONDS).health();

        assertThat(health.getDetails()).containsEntry("lockProbe", "granted and released");
        assertThat(locks.holders(LockKind.SINGLETON, null, LocksHealthIndicator.PROBE_PREFIX + "node-h")).isEmpty();
        assertThat(locks.heldCount()).isZero();
    }

    /** Where grants use a table that the health's reads do not (H2 and MySQL: {@code node}). */
    protected void assertDownWhenTheTableOnlyGrantsUseIsMissing() throws SQLException {
        Health health = healthAfterDropping("node");

        assertThat(health.getStatus()).isEqualTo(Status.DOWN);
        assertThat(health.getDetails()).containsEntry("store", "reachable").containsEntry("lockProbe", "failed")
                .containsKey("error");
    }

    /**
     * The health of a service whose tables went away after it started (a service does not start
     * without them).
     *
     * @param tables the tables to drop, by name without the prefix
     */
    private Health healthAfterDropping(String... tables) throws SQLException {
        String partial = TestDatabase.uniquePrefix();
        JdbcLockService.builder(pool).tablePrefix(partial).createSchema(true).build().close();
        try {
            JdbcLockService locks = service(pool, partial);
            try (var connection = pool.getConnection(); var statement = connection.createStatement()) {
                for (String table : tables) {
                    statement.execute("DROP TABLE " + partial + table);
                }
            }
            return new LocksHealthIndicator(locks, FIVE_SECONDS).health();
        }
        finally {
            TestDatabase.dropTables(pool, partial);
        }
    }

    @Test
    void isDownWhileItsOwnProbeWhoseReleaseFailedMayStillHoldTheLock() {
        TrappingDataSource trapping = new TrappingDataSource(pool, TrappingDataSource.releasesIn(prefix));
        JdbcLockService locks = service(trapping.dataSource(), prefix);
        // the database goes away between the probe's grant and its release
        trapping.failNext("connection reset", 1);
        LocksHealthIndicator indicator = new LocksHealthIndicator(locks, FIVE_SECONDS);

        Health failed = indicator.health();
        // the background retry of the release comes a second later
        Health next = indicator.health();

        assertThat(failed.getStatus()).isEqualTo(Status.DOWN);
        assertThat(failed.getDetails()).containsEntry("lockProbe", "failed");
        assertThat(next.getStatus()).isEqualTo(Status.DOWN);
        assertThat((String) next.getDetails().get("lockProbe")).contains("still held by this node's earlier probe");
    }

    @Test
    void staysUpSayingBusyWhenAnotherNodeWithItsIdHoldsTheProbe() {
        JdbcLockService locks = service(pool, prefix);
        try (LockHandle held = service(pool, prefix).acquire(
                LockRequest.singleton(LocksHealthIndicator.PROBE_PREFIX + "node-h").build())) {
            Health health = new LocksHealthIndicator(locks, FIVE_SECONDS).health();

            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat((String) health.getDetails().get("lockProbe")).startsWith("busy: locks-health:node-h is held");
        }
    }

    /**
     * A database that reads but refuses writes, as a fail-over to a replica can leave it.
     *
     * @param readOnlySession the statement that makes a session of this database read-only
     */
    protected void assertDownWhenTheDatabaseIsReadOnly(String readOnlySession) {
        Health health = healthOnReadOnlySessions(readOnlySession, true);

        assertThat(health.getStatus()).isEqualTo(Status.DOWN);
        assertThat(health.getDetails()).containsEntry("store", "reachable").containsEntry("lockProbe", "failed");
        assertThat((String) health.getDetails().get("error")).containsPattern("(?i)read[ -]only");
    }

    /** Without the lock probe only reads are checked, and a read-only database passes them. */
    protected void assertUpWithoutTheLockProbeWhenTheDatabaseIsReadOnly(String readOnlySession) {
        Health health = healthOnReadOnlySessions(readOnlySession, false);

        assertThat(health.getStatus()).isEqualTo(Status.UP);
        assertThat(health.getDetails()).doesNotContainKey("lockProbe");
    }

    private Health healthOnReadOnlySessions(String readOnlySession, boolean lockProbe) {
        // a pool of its own: the session setting stays with the connection
        try (HikariDataSource ownPool = database().newPool(2)) {
            DataSource readOnly = new DelegatingDataSource(ownPool) {
                @Override
                public Connection getConnection() throws SQLException {
                    Connection connection = super.getConnection();
                    try (var statement = connection.createStatement()) {
                        statement.execute(readOnlySession);
                    }
                    return connection;
                }
            };
            try (JdbcLockService locks = JdbcLockService.builder(readOnly).dialect(dialect()).tablePrefix(prefix)
                    .settings(LockSettings.builder().nodeId("node-h").purgeInterval(null).build()).build()) {
                return new LocksHealthIndicator(locks, FIVE_SECONDS, Clock.systemUTC(), lockProbe).health();
            }
        }
    }

    @Test
    @Timeout(20)
    void isDownWithinItsTimeoutWhenNoConnectionComes() {
        Withheld withheld = connectionsWithheld();
        try {
            Health health = withheld.indicator().health();

            assertThat(health.getStatus()).isEqualTo(Status.DOWN);
            assertThat(health.getDetails()).containsEntry("store", "no answer").containsEntry("node", "node-h");
            assertThat((String) health.getDetails().get("error")).contains("has not answered")
                    .contains("timeout PT0.3S");
        }
        finally {
            withheld.giveBack();
        }
    }

    @Test
    @Timeout(20)
    void callsWhileACheckHangsShareItRatherThanStartAnother() {
        Withheld withheld = connectionsWithheld();
        try {
            withheld.indicator().health();
            Health second = withheld.indicator().health();

            assertThat(second.getStatus()).isEqualTo(Status.DOWN);
            assertThat(second.getDetails()).containsEntry("store", "no answer");
            assertThat(withheld.gated().callersHeld()).isEqualTo(1);
        }
        finally {
            withheld.giveBack();
        }
    }

    @Test
    @Timeout(20)
    void isUpAgainOnceTheHungCheckHasReturned() {
        Withheld withheld = connectionsWithheld();
        assertThat(withheld.indicator().health().getStatus()).isEqualTo(Status.DOWN);

        Health health = withheld.giveBack();
        assertThat(health.getStatus()).isEqualTo(Status.UP);
        assertThat(health.getDetails()).containsEntry("lockProbe", "granted and released");
    }

    /** An indicator with a 300 ms timeout over a DataSource that gives no connection until given back. */
    private Withheld connectionsWithheld() {
        GatedDataSource gated = new GatedDataSource(pool);
        LocksHealthIndicator indicator = new LocksHealthIndicator(service(gated, prefix), FIVE_SECONDS,
                Clock.systemUTC(), true, Duration.ofMillis(300));
        gated.shut();
        return new Withheld(gated, indicator);
    }

    private record Withheld(GatedDataSource gated, LocksHealthIndicator indicator) {

        /**
         * Gives the connections back.
         *
         * @return the first answer that is not the hung check's timeout: once that check returned, a
         *         new one runs, and until it has, its probe may still hold the lock the next test probes
         */
        Health giveBack() {
            gated.open();
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            Health health = indicator.health();
            while ("no answer".equals(health.getDetails().get("store")) && System.nanoTime() < deadline) {
                health = indicator.health();
            }
            return health;
        }
    }

    @Test
    void isDownWhenTheDatabaseCannotBeReached() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        JdbcLockService locks = service(new DriverManagerDataSource(urlOnClosedPort(closedPort), "nobody", "none"), prefix);
        Health health = new LocksHealthIndicator(locks, FIVE_SECONDS).health();

        assertThat(health.getStatus()).isEqualTo(Status.DOWN);
        assertThat(health.getDetails()).containsEntry("store", "unreachable").containsEntry("node", "node-h");
        assertThat((String) health.getDetails().get("error")).isNotBlank();
    }

    /**
     * A DataSource that, while shut, holds every caller until it opens: a pool without a free
     * connection. It counts the health checks it holds.
     */
    private static final class GatedDataSource extends DelegatingDataSource {

        private volatile CountDownLatch gate = new CountDownLatch(0);

        private final AtomicInteger callersHeld = new AtomicInteger();

        GatedDataSource(DataSource target) {
            super(target);
        }

        void shut() {
            gate = new CountDownLatch(1);
        }

        void open() {
            gate.countDown();
        }

        int callersHeld() {
            return callersHeld.get();
        }

        @Override
        public Connection getConnection() throws SQLException {
            CountDownLatch current = gate;
            if (current.getCount() > 0) {
                // only the checks' own threads: PostgreSQL's release listener may connect meanwhile
                if (Thread.currentThread().getName().startsWith("locks-health-check")) {
                    callersHeld.incrementAndGet();
                }
                try {
                    current.await();
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    throw new SQLException("interrupted waiting for a connection", ex);
                }
            }
            return super.getConnection();
        }
    }
}
