package dev.locks.autoconfigure.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import dev.locks.LockRequest;
import dev.locks.actuate.UserLockService;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.metrics.LockMetrics;
import dev.locks.testing.TestDatabase;

/** When the lock meters are set up, and when they back off. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LocksMetricsAutoConfigurationTest {

    private final String prefix = TestDatabase.uniquePrefix();

    private HikariDataSource pool;

    @BeforeAll
    void createSchema() {
        pool = TestDatabase.H2.newPool(4);
        JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true).build().close();
    }

    @AfterAll
    void dropSchema() {
        TestDatabase.dropTables(pool, prefix);
        pool.close();
    }

    /** An application with its own lock service bean and the lock meters' auto-configuration. */
    private ApplicationContextRunner application() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LocksMetricsAutoConfiguration.class))
                .withBean(DataSource.class, () -> new DelegatingDataSource(pool))
                .withUserConfiguration(UserLockService.class)
                .withPropertyValues("test.locks.prefix=" + prefix);
    }

    @Test
    void publishesTheLockMetersToTheApplicationsRegistry() {
        application().withBean(SimpleMeterRegistry.class).run(context -> {
            assertThat(context).hasSingleBean(LockMetrics.class);
            context.getBean(JdbcLockService.class).acquire(LockRequest.paths("/a").build()).release();
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.get("locks.acquire").tags("kind", "path", "outcome", "acquired").timer().count())
                    .isEqualTo(1);
            assertThat(registry.get("locks.released").counter().count()).isEqualTo(1);
            assertThat(registry.get("locks.held").gauge().value()).isZero();
            assertThat(registry.get("locks.acquire").timer().getId().getTag("tenant")).isNull();
        });
    }

    @Test
    void runsAfterBootsOwnMeterRegistriesAreConfigured() {
        // listed first on purpose: the auto-configuration order, not the listing order, must put it last
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LocksMetricsAutoConfiguration.class,
                        SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
                        MetricsAutoConfiguration.class))
                .withBean(DataSource.class, () -> new DelegatingDataSource(pool))
                .withUserConfiguration(UserLockService.class)
                .withPropertyValues("test.locks.prefix=" + prefix)
                .run(context -> {
                    assertThat(context).hasSingleBean(LockMetrics.class);
                    context.getBean(JdbcLockService.class).acquire(LockRequest.paths("/b").build()).release();
                    assertThat(context.getBean(MeterRegistry.class).get("locks.acquire").timer().count()).isEqualTo(1);
                });
    }

    @Test
    void tagsTheTenantWhenThePropertySaysSo() {
        application().withBean(SimpleMeterRegistry.class).withPropertyValues("locks.metrics.tenant-tag=true")
                .run(context -> {
                    context.getBean(JdbcLockService.class)
                            .acquire(LockRequest.paths("/c").tenant("acme").build()).release();
                    assertThat(context.getBean(MeterRegistry.class).get("locks.acquire").tags("tenant", "acme")
                            .timer().count()).isEqualTo(1);
                });
    }

    @Test
    void backsOffWithoutAMeterRegistry() {
        application().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(LockMetrics.class);
        });
    }

    @Test
    void backsOffWithoutMicrometerOnTheClasspath() {
        application().withClassLoader(new FilteredClassLoader("io.micrometer.core")).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(LockMetrics.class);
        });
    }

    @Test
    void backsOffWithoutALockService() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LocksMetricsAutoConfiguration.class))
                .withBean(SimpleMeterRegistry.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(LockMetrics.class);
                });
    }
}
