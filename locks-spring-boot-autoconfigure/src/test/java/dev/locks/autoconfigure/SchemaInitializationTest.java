package dev.locks.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import dev.locks.LockRequest;
import dev.locks.LockService;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;

/** {@code locks.jdbc.initialize-schema}: embedded (the default), always, never; on each database. */
class SchemaInitializationTest {

    private final String prefix = TestDatabase.uniquePrefix();

    private HikariDataSource pool;

    @AfterEach
    void dropTables() {
        if (pool != null) {
            TestDatabase.dropTables(pool, prefix);
            pool.close();
        }
    }

    private ApplicationContextRunner runner(TestDatabase database, String mode) {
        pool = database.newPool(4);
        DataSource dataSource = new DelegatingDataSource(pool);
        ApplicationContextRunner runner = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LocksAutoConfiguration.class))
                .withBean("dataSource", DataSource.class, () -> dataSource)
                .withPropertyValues("locks.jdbc.table-prefix=" + prefix);
        return mode == null ? runner : runner.withPropertyValues("locks.jdbc.initialize-schema=" + mode);
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void byDefaultOnlyAnEmbeddedDatabaseGetsTheTablesAndAServerOneWithoutThemFailsTheStartSayingHow(
            TestDatabase database) {
        runner(database, null).run(context -> {
            if (database == TestDatabase.H2) {
                assertThat(LocksAutoConfigurationTest.tableExists(context.getBean(DataSource.class), prefix + "held"))
                        .isTrue();
            }
            else {
                assertFailsNamingTheTables(context);
            }
        });
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void alwaysCreatesTheTablesOnEveryDatabase(TestDatabase database) {
        runner(database, "always").run(context -> {
            assertThat(LocksAutoConfigurationTest.tableExists(context.getBean(DataSource.class), prefix + "held"))
                    .isTrue();
            context.getBean(LockService.class).acquire(LockRequest.paths("/created").build()).release();
        });
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void neverLeavesTheTablesToTheApplicationAndFailsTheStartWithoutThem(TestDatabase database) {
        runner(database, "never").run(context -> {
            assertFailsNamingTheTables(context);
            assertThat(LocksAutoConfigurationTest.tableExists(pool, prefix + "held")).isFalse();
        });
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void neverUsesTheTablesTheApplicationCreated(TestDatabase database) {
        ApplicationContextRunner runner = runner(database, "never");
        JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true).build().close();

        runner.run(context -> context.getBean(LockService.class).acquire(LockRequest.paths("/created").build())
                .release());
    }

    private void assertFailsNamingTheTables(AssertableApplicationContext context) {
        assertThat(context).hasFailed();
        assertThat(context.getStartupFailure()).rootCause().isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("The lock tables [" + prefix + "held, " + prefix + "wait")
                .hasMessageContaining("locks.jdbc.initialize-schema=always");
    }
}
