package dev.locks.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import dev.locks.LockHandle;
import dev.locks.LockRequest;
import dev.locks.jdbc.H2Dialect;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.jdbc.MySqlDialect;
import dev.locks.testing.TestDatabase;

/** {@code locks.jdbc.dialect}: the store's SQL chosen instead of detected, and refused for another database. */
class DialectPropertyTest {

    private final String prefix = TestDatabase.uniquePrefix();

    private HikariDataSource pool;

    @AfterEach
    void dropTables() {
        if (pool != null) {
            TestDatabase.dropTables(pool, prefix);
            pool.close();
        }
    }

    private ApplicationContextRunner runner(TestDatabase database, String dialect) {
        pool = database.newPool(4);
        DataSource dataSource = new DelegatingDataSource(pool);
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LocksAutoConfiguration.class))
                .withBean("dataSource", DataSource.class, () -> dataSource)
                .withPropertyValues("locks.jdbc.table-prefix=" + prefix, "locks.jdbc.initialize-schema=always",
                        "locks.jdbc.dialect=" + dialect);
    }

    @Test
    void mysqlRunsTheGrantsOfAMariaDbServerAsPlainStatements() {
        runner(TestDatabase.MYSQL, "mysql").run(context -> {
            JdbcLockService locks = context.getBean(JdbcLockService.class);
            assertThat(locks.store().dialect().getClass()).isEqualTo(MySqlDialect.class);
            try (LockHandle parent = locks.acquire(LockRequest.paths("/dialect").build())) {
                Optional<LockHandle> child = locks.tryAcquire(LockRequest.paths("/dialect/child").build());
                assertThat(child).as("a child of a held path").isEmpty();
            }
        });
    }

    @Test
    void theDialectOfAnotherDatabaseFailsTheStartNamingTheDatabase() {
        runner(TestDatabase.MYSQL, "postgresql").run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause().isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("PostgresDialect").hasMessageContaining("its database reports 'MySQL"));
    }

    @Test
    void theMySqlDialectOnH2FailsTheStart() {
        runner(TestDatabase.H2, "mysql").run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause().hasMessageContaining("MySqlDialect").hasMessageContaining("'H2"));
    }

    @Test
    void theH2DialectOnH2Starts() {
        runner(TestDatabase.H2, "h2").run(context -> assertThat(context.getBean(JdbcLockService.class)
                .store().dialect()).isInstanceOf(H2Dialect.class));
    }

    @Test
    void anUnknownDialectFailsTheStartNamingTheProperty() {
        runner(TestDatabase.H2, "oracle").run(context -> assertThat(context).hasFailed()
                .getFailure().hasStackTraceContaining("locks.jdbc.dialect"));
    }
}
