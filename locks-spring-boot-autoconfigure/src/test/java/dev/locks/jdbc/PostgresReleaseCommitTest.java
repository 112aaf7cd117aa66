package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import dev.locks.LockHandle;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.testing.TestDatabase;

/**
 * How PostgreSQL commits what the store writes: a release on its own without waiting for the WAL
 * flush, everything else durably. A deferred trigger on the lock table records
 * {@code synchronous_commit} as each transaction commits, which is when PostgreSQL reads it.
 */
class PostgresReleaseCommitTest extends LockServiceContract {

    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    private JdbcTemplate jdbc;

    @BeforeEach
    void recordCommitModes() {
        jdbc = new JdbcTemplate(mainPool());
        jdbc.execute("CREATE TABLE IF NOT EXISTS " + prefix + "commit_mode (id BIGSERIAL, op TEXT, path TEXT, mode TEXT)");
        jdbc.execute("CREATE OR REPLACE FUNCTION " + prefix + "record_commit_mode() RETURNS trigger LANGUAGE plpgsql AS $$"
                + " BEGIN INSERT INTO " + prefix + "commit_mode (op, path, mode) VALUES (TG_OP,"
                + " CASE WHEN TG_OP = 'DELETE' THEN OLD.path ELSE NEW.path END, current_setting('synchronous_commit'));"
                + " RETURN NULL; END $$");
        jdbc.execute("DROP TRIGGER IF EXISTS " + prefix + "commit_mode ON " + prefix + "held");
        jdbc.execute("CREATE CONSTRAINT TRIGGER " + prefix + "commit_mode AFTER INSERT OR UPDATE OR DELETE ON " + prefix + "held"
                + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION " + prefix + "record_commit_mode()");
        jdbc.execute("TRUNCATE " + prefix + "commit_mode");
    }

    @AfterAll
    void dropRecording() {
        new JdbcTemplate(mainPool()).execute("DROP TABLE IF EXISTS " + prefix + "commit_mode; DROP TRIGGER IF EXISTS "
                + prefix + "commit_mode ON " + prefix + "held; DROP FUNCTION IF EXISTS " + prefix + "record_commit_mode()");
    }

    /** {@code synchronous_commit} at the commit of each insert or delete of {@code path}'s rows, in order. */
    private List<String> modes(String op, String path) {
        return jdbc.queryForList("SELECT mode FROM " + prefix + "commit_mode WHERE op = ? AND path = ? ORDER BY id",
                String.class, op, path);
    }

    @Test
    void aReleaseOnItsOwnCommitsWithoutWaitingForTheFlush() {
        tryX("/lazy").orElseThrow().release();

        assertThat(modes("DELETE", "/lazy")).containsExactly("off");
    }

    @Test
    void aReleaseThatFollowsTheCallersTransactionCommitsWithoutWaitingForTheFlush() {
        TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(mainPool()));
        // its snapshot may not see the grant: the release follows the commit, on a connection of its own
        transaction.setIsolationLevel(TransactionDefinition.ISOLATION_REPEATABLE_READ);
        LockHandle handle = tryX("/after").orElseThrow();

        transaction.executeWithoutResult(status -> handle.release());

        assertThat(modes("DELETE", "/after")).containsExactly("off");
    }

    @Test
    void aReleaseThatKeepsASingletonForItsMinimumCommitsWithoutWaitingForTheFlush() {
        LockRequest job = LockRequest.singleton("nightly").tenant(tenant)
                .lockAtLeastFor(Duration.ofSeconds(5)).build();
        locks.tryAcquire(job).orElseThrow().release();

        assertThat(modes("UPDATE", "nightly")).containsExactly("off");
    }

    @Test
    void aReleaseOnAPoolOutsideAutoCommitWaitsForTheFlush() {
        HikariDataSource pool = newPool(2);
        DelegatingDataSource transactional = new DelegatingDataSource(pool) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection connection = super.getConnection();
                connection.setAutoCommit(false);
                return connection;
            }
        };
        JdbcLockService node = node("node-tx", transactional);
        node.tryAcquire(x("/pool-tx").build()).orElseThrow().release();

        assertThat(modes("DELETE", "/pool-tx")).containsExactly("on");
    }

    @Test
    void aGrantCommitsDurably() {
        tryX("/durable").orElseThrow().release();

        assertThat(modes("INSERT", "/durable")).containsExactly("on");
    }

    @Test
    void theNextTransactionOnTheSameConnectionCommitsDurably() {
        JdbcLockService oneConnection = node("node-one", newPool(1));
        oneConnection.tryAcquire(x("/same").build()).orElseThrow().release();
        oneConnection.tryAcquire(x("/same").build()).orElseThrow().release();

        assertThat(modes("INSERT", "/same")).containsExactly("on", "on");
        assertThat(modes("DELETE", "/same")).containsExactly("off", "off");
    }

    @Test
    void aReleaseWaitsForTheFlushWhenDurableReleasesAreAsked() throws Exception {
        try (JdbcLockService durable = JdbcLockService.builder(mainPool()).tablePrefix(prefix).durableReleases(true)
                .settings(LockSettings.builder().nodeId("node-durable").slowWaitLog(null).build()).build()) {
            durable.tryAcquire(x("/asked").build()).orElseThrow().release();
        }

        assertThat(modes("DELETE", "/asked")).containsExactly("on");
    }

    @Test
    void aHandOffCommitsTheReleaseAndTheGrantDurably() throws Exception {
        JdbcLockService patient = node("node-patient", mainPool(), LockSettings.builder().nodeId("node-patient")
                .slowWaitLog(null).backoff(Duration.ofMinutes(1), 1.0, Duration.ofMinutes(1), Duration.ZERO)
                    .waiterLease(Duration.ofMinutes(5)));
        LockHandle held = patient.acquire(x("/handed").build());
        CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(
                () -> patient.acquire(x("/handed").waitAtMost(Duration.ofSeconds(30)).build()));
        sleep(Duration.ofMillis(300));

        held.release();
        waiter.get(20, TimeUnit.SECONDS).release();

        assertThat(patient.handOffCount()).isEqualTo(1);
        assertThat(modes("INSERT", "/handed")).containsExactly("on", "on");
        assertThat(modes("DELETE", "/handed")).as("the hand-off, then the last release").containsExactly("on", "off");
    }

    @Test
    void aReleaseInsideTheCallersTransactionLeavesThatTransactionDurable() {
        LockHandle held = tryX("/joined").orElseThrow();
        TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(mainPool()));

        transactions.executeWithoutResult(status -> held.release());

        assertThat(modes("DELETE", "/joined")).containsExactly("on");
    }
}
