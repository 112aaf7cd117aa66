package dev.locks.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import java.time.Duration;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;

import dev.locks.actuate.ActuatorContexts;
import dev.locks.actuate.LocksEndpoint;
import dev.locks.actuate.LocksHealthIndicator;
import dev.locks.actuate.UserLockService;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;

/** When the locks endpoint and health indicator are set up, and when they back off. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LocksActuatorAutoConfigurationTest {

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

    private ApplicationContextRunner application() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LocksEndpointAutoConfiguration.class,
                        LocksHealthAutoConfiguration.class))
                .withBean(DataSource.class, () -> new DelegatingDataSource(pool))
                .withUserConfiguration(UserLockService.class)
                .withPropertyValues("test.locks.prefix=" + prefix);
    }

    private WebApplicationContextRunner webApplication() {
        return ActuatorContexts.webApplication()
                .withBean(DataSource.class, () -> new DelegatingDataSource(pool))
                .withUserConfiguration(UserLockService.class)
                .withPropertyValues("test.locks.prefix=" + prefix);
    }

    @Test
    void createsNoEndpointUnlessTheApplicationExposesIt() {
        application().run(context -> assertThat(context).doesNotHaveBean(LocksEndpoint.class));
    }

    @Test
    void createsTheEndpointWhenExposed() {
        application().withPropertyValues("management.endpoints.web.exposure.include=locks")
                .run(context -> assertThat(context).hasSingleBean(LocksEndpoint.class));
    }

    @Test
    void createsNoEndpointWhenItsAccessIsNone() {
        application().withPropertyValues("management.endpoints.web.exposure.include=*",
                "management.endpoint.locks.access=NONE")
                .run(context -> assertThat(context).doesNotHaveBean(LocksEndpoint.class));
    }

    @Test
    void answersNotFoundOverHttpUntilExposed() {
        webApplication().run(context -> {
            MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
            mvc.perform(get("/actuator/locks")).andExpect(status().isNotFound());
        });
    }

    @Test
    void createsTheHealthIndicatorNamedLocks() {
        webApplication().withPropertyValues("management.endpoint.health.show-details=always").run(context -> {
            assertThat(context).hasSingleBean(LocksHealthIndicator.class);
            MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
            mvc.perform(get("/actuator/health/locks"))
                    .andExpect(status().isOk())
                    .andExpect(jsonPath("$.status").value("UP"))
                    .andExpect(jsonPath("$.details.schema").value("present"))
                    .andExpect(jsonPath("$.details.node").value("node-a"))
                    .andExpect(jsonPath("$.details.clockSkewMillis").isNumber());
        });
    }

    @Test
    void bindsTheClockSkewWarningThreshold() {
        application().withPropertyValues("locks.health.clock-skew-warning=250ms")
                .run(context -> assertThat(context.getBean(LocksHealthProperties.class).getClockSkewWarning())
                        .isEqualTo(Duration.ofMillis(250)));
    }

    @Test
    void bindsTheHealthCheckTimeout() {
        application().withPropertyValues("locks.health.timeout=2s")
                .run(context -> assertThat(context.getBean(LocksHealthProperties.class).getTimeout())
                        .isEqualTo(Duration.ofSeconds(2)));
    }

    @Test
    void refusesToStartWithAHealthCheckTimeoutOfZero() {
        application().withPropertyValues("locks.health.timeout=0s")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("locks.health.timeout").hasMessageContaining("positive timeout"));
    }

    @Test
    void theHealthTakesAProbeLockUnlessTurnedOff() {
        application().run(context -> assertThat(context.getBean(LocksHealthIndicator.class).health().getDetails())
                .containsEntry("lockProbe", "granted and released"));
        application().withPropertyValues("locks.health.lock-probe=false")
                .run(context -> assertThat(context.getBean(LocksHealthIndicator.class).health().getDetails())
                        .containsEntry("schema", "present").doesNotContainKey("lockProbe"));
    }

    @Test
    void createsNoHealthIndicatorWhenDisabled() {
        application().withPropertyValues("management.health.locks.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(LocksHealthIndicator.class));
    }

    @Test
    void backsOffWithoutActuatorOnTheClasspath() {
        application().withPropertyValues("management.endpoints.web.exposure.include=locks")
                .withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(LocksEndpoint.class);
                    assertThat(context).hasSingleBean(LocksHealthIndicator.class);
                });
    }

    @Test
    void backsOffWithoutBootHealthOnTheClasspath() {
        application().withClassLoader(new FilteredClassLoader("org.springframework.boot.health"))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(LocksHealthIndicator.class);
                });
    }

    @Test
    void backsOffWithoutALockService() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LocksEndpointAutoConfiguration.class,
                        LocksHealthAutoConfiguration.class))
                .withPropertyValues("management.endpoints.web.exposure.include=locks")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(LocksEndpoint.class).doesNotHaveBean(LocksHealthIndicator.class);
                });
    }
}
