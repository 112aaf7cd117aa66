package dev.locks.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import dev.locks.LockSettings;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.jdbc.SqlDialect;
import dev.locks.testing.TestDatabase;

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
                .containsKeys("databaseTime", "jvmTime", "clockSkewMillis").doesNotContainKey("warning");
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
        Health health = new LocksHealthIndicator(locks, FIVE_SECONDS, jvmTenSecondsBehind).health();

        assertThat(health.getStatus()).isEqualTo(Status.UP);
        assertThat((Long) health.getDetails().get("clockSkewMillis")).isBetween(8_000L, 12_000L);
        assertThat((String) health.getDetails().get("warning")).contains("ahead of this JVM's").contains("PT5S");
    }

    @Test
    void reportsAClockBehindTheJvmAsBehind() {
        JdbcLockService locks = service(pool, prefix);
        Clock jvmTenSecondsAhead = Clock.offset(Clock.systemUTC(), Duration.ofSeconds(10));
        Health health = new LocksHealthIndicator(locks, FIVE_SECONDS, jvmTenSecondsAhead).health();

        assertThat((Long) health.getDetails().get("clockSkewMillis")).isBetween(-12_000L, -8_000L);
        assertThat((String) health.getDetails().get("warning")).contains("behind this JVM's");
    }

    @Test
    void isDownWhenTheLockTablesAreMissing() {
        JdbcLockService locks = service(pool, TestDatabase.uniquePrefix());
        Health health = new LocksHealthIndicator(locks, FIVE_SECONDS).health();

        assertThat(health.getStatus()).isEqualTo(Status.DOWN);
        assertThat(health.getDetails()).containsEntry("store", "reachable").containsEntry("schema", "missing or unreadable")
                .containsKey("error");
    }

    @Test
    void isDownWhenTheWaitingTableIsMissing() throws Exception {
        String partial = TestDatabase.uniquePrefix();
        JdbcLockService.builder(pool).tablePrefix(partial).createSchema(true).build().close();
        try {
            try (var connection = pool.getConnection(); var statement = connection.createStatement()) {
                statement.execute("DROP TABLE " + partial + "wait");
            }
            Health health = new LocksHealthIndicator(service(pool, partial), FIVE_SECONDS).health();

            assertThat(health.getStatus()).isEqualTo(Status.DOWN);
            assertThat(health.getDetails()).containsEntry("schema", "missing or unreadable");
        }
        finally {
            TestDatabase.dropTables(pool, partial);
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
}
