package dev.locks.autoconfigure.quartz;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.quartz.Job;
import org.quartz.JobBuilder;
import org.quartz.JobDetail;
import org.quartz.JobExecutionContext;
import org.quartz.Scheduler;
import org.quartz.Trigger;
import org.quartz.TriggerBuilder;
import org.quartz.listeners.TriggerListenerSupport;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.quartz.autoconfigure.QuartzAutoConfiguration;
import org.springframework.boot.quartz.autoconfigure.SchedulerFactoryBeanCustomizer;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.quartz.SchedulerFactoryBean;

import dev.locks.LockHolder;
import dev.locks.LockKind;
import dev.locks.annotation.ClusterSingleton;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.quartz.ClusterSingletonTriggerListener;
import dev.locks.testing.TestDatabase;

/**
 * The auto-configuration puts the cluster-singleton listener on the scheduler Spring Boot builds (and on
 * any other scheduler of the context), from a {@code JdbcLockService} bean the application defines.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LocksQuartzAutoConfigurationTest {

    private static final String PREFIX = TestDatabase.uniquePrefix();

    private static HikariDataSource pool;

    private final ApplicationContextRunner contexts = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(QuartzAutoConfiguration.class, LocksQuartzAutoConfiguration.class));

    @BeforeEach
    void openPool() {
        if (pool == null) {
            pool = TestDatabase.H2.newPool(4);
        }
        ReportJob.FIRES.clear();
    }

    @AfterAll
    void dropTables() {
        if (pool != null) {
            TestDatabase.dropTables(pool, PREFIX);
            pool.close();
        }
    }

    @Test
    void addsTheListenerToTheSchedulerSpringBootBuilds() {
        contexts.withUserConfiguration(LockServiceConfig.class).run(context -> {
            Scheduler scheduler = context.getBean(Scheduler.class);
            ClusterSingletonTriggerListener listener = context.getBean(ClusterSingletonTriggerListener.class);

            assertThat(scheduler.getListenerManager().getTriggerListener(ClusterSingletonTriggerListener.NAME))
                    .isSameAs(listener);
            assertThat(scheduler.getListenerManager().getJobListener(ClusterSingletonTriggerListener.NAME))
                    .isSameAs(listener);
            assertThat(scheduler.getListenerManager().getSchedulerListeners())
                    .as("the listener that frees the locks of fires Quartz abandons")
                    .filteredOn(l -> l.getClass().getSimpleName().equals("GuardSchedulerListener")).hasSize(1);
        });
    }

    @Test
    void theBootSchedulerRunsAnAnnotatedJobUnderItsFireMarkerKeptForTheConfiguredRetention() {
        contexts.withUserConfiguration(LockServiceConfig.class, ReportJobConfig.class)
                .withPropertyValues("locks.quartz.fire-marker-retention=90s")
                .run(context -> {
                    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> !ReportJob.FIRES.isEmpty());
                    JdbcLockService locks = context.getBean(JdbcLockService.class);
                    List<LockHolder> marker = locks.holders(LockKind.SINGLETON, null,
                            "job:reports.daily@" + ReportJob.FIRES.peek());

                    assertThat(marker).singleElement().satisfies(
                            h -> assertThat(Duration.between(h.since(), h.expiresAt())).isEqualTo(Duration.ofSeconds(90)));
                });
    }

    @Test
    void keepsTheGlobalListenersAnApplicationCustomizerSets() {
        contexts.withUserConfiguration(LockServiceConfig.class, AuditListenerConfig.class).run(context -> {
            var listeners = context.getBean(Scheduler.class).getListenerManager();

            assertThat(listeners.getTriggerListener("audit")).isNotNull();
            assertThat(listeners.getTriggerListener(ClusterSingletonTriggerListener.NAME))
                    .isSameAs(context.getBean(ClusterSingletonTriggerListener.class));
        });
    }

    @Test
    void addsTheListenerToASchedulerTheApplicationBuildsItself() {
        contexts.withUserConfiguration(LockServiceConfig.class, OwnSchedulerConfig.class).run(context -> {
            Scheduler scheduler = context.getBean(Scheduler.class);

            assertThat(scheduler.getSchedulerName()).isEqualTo("own");
            assertThat(scheduler.getListenerManager().getTriggerListener(ClusterSingletonTriggerListener.NAME))
                    .isSameAs(context.getBean(ClusterSingletonTriggerListener.class));
        });
    }

    @Test
    void guardsASchedulerTheApplicationBuildsWithoutSpringBootsQuartzModule() {
        new ApplicationContextRunner().withClassLoader(new FilteredClassLoader(SchedulerFactoryBeanCustomizer.class))
                .withConfiguration(AutoConfigurations.of(LocksQuartzAutoConfiguration.class))
                .withUserConfiguration(LockServiceConfig.class, OwnSchedulerConfig.class)
                .run(context -> {
                    Scheduler scheduler = context.getBean(Scheduler.class);

                    assertThat(scheduler.getListenerManager().getTriggerListener(ClusterSingletonTriggerListener.NAME))
                            .isSameAs(context.getBean(ClusterSingletonTriggerListener.class));
                });
    }

    @Test
    void leavesASchedulerWithAClusteredJobStoreToQuartz() {
        contexts.withUserConfiguration(LockServiceConfig.class)
                .withPropertyValues("spring.quartz.job-store-type=jdbc", "spring.quartz.jdbc.initialize-schema=always",
                        "spring.quartz.properties.org.quartz.jobStore.isClustered=true")
                .run(context -> {
                    Scheduler scheduler = context.getBean(Scheduler.class);

                    assertThat(scheduler.getMetaData().isJobStoreClustered()).isTrue();
                    assertThat(scheduler.getListenerManager().getTriggerListener(ClusterSingletonTriggerListener.NAME))
                            .isNull();
                    assertThat(scheduler.getListenerManager().getJobListener(ClusterSingletonTriggerListener.NAME))
                            .isNull();
                });
    }

    @Test
    void guardsTheJobKeysListedInTheProperties() {
        contexts.withUserConfiguration(LockServiceConfig.class)
                .withPropertyValues("locks.quartz.jobs=reports.nightly,cleanup")
                .run(context -> {
                    ClusterSingletonTriggerListener listener = context.getBean(ClusterSingletonTriggerListener.class);

                    assertThat(listener.isGuarded(plainJob("nightly", "reports"))).isTrue();
                    assertThat(listener.isGuarded(plainJob("cleanup", "DEFAULT"))).isTrue();
                    assertThat(listener.isGuarded(plainJob("weekly", "reports"))).isFalse();
                });
    }

    @Test
    void backsOffWithoutALockService() {
        contexts.run(context -> {
            assertThat(context).hasSingleBean(Scheduler.class);
            assertThat(context).doesNotHaveBean(ClusterSingletonTriggerListener.class);
        });
    }

    @Test
    void aGuardedJobWithoutALockServiceFailsTheStartNamingTheJob() {
        contexts.withUserConfiguration(ReportJobConfig.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessageContaining("reports.daily")
                    .hasMessageContaining("no LockService");
        });
    }

    @Test
    void aGuardedJobWithoutALockServiceStartsUnguardedWhenTheLocksAreSwitchedOff() {
        contexts.withUserConfiguration(ReportJobConfig.class).withPropertyValues("locks.enabled=false")
                .run(context -> assertThat(context).hasNotFailed());
        contexts.withUserConfiguration(ReportJobConfig.class).withPropertyValues("locks.quartz.enabled=false")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void theGuardOverTheApplicationsOwnLockServiceGoesOffWithTheLocks() {
        contexts.withUserConfiguration(LockServiceConfig.class).withPropertyValues("locks.enabled=false")
                .run(context -> assertThat(context).hasNotFailed()
                        .doesNotHaveBean(ClusterSingletonTriggerListener.class));
    }

    @Test
    void canBeSwitchedOff() {
        contexts.withUserConfiguration(LockServiceConfig.class).withPropertyValues("locks.quartz.enabled=false")
                .run(context -> {
                    assertThat(context).doesNotHaveBean(ClusterSingletonTriggerListener.class);
                    assertThat(context.getBean(Scheduler.class).getListenerManager()
                            .getTriggerListener(ClusterSingletonTriggerListener.NAME)).isNull();
                });
    }

    @Test
    void failsAtStartUpNamingAJobWhoseAnnotationCannotBeUnderstood() {
        contexts.withUserConfiguration(LockServiceConfig.class, BadJobConfig.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessageContaining("DEFAULT.bad")
                    .hasMessageContaining("lockAtMostFor");
        });
    }

    private static JobDetail plainJob(String name, String group) {
        return JobBuilder.newJob(PlainJob.class).withIdentity(name, group).build();
    }

    @Configuration(proxyBeanMethods = false)
    static class LockServiceConfig {

        // the pool outlives each context
        @Bean(destroyMethod = "")
        DataSource dataSource() {
            return pool;
        }

        @Bean
        JdbcLockService lockService(DataSource dataSource) {
            return JdbcLockService.builder(dataSource).tablePrefix(PREFIX).createSchema(true).build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class ReportJobConfig {

        @Bean
        JobDetail dailyReport() {
            return JobBuilder.newJob(ReportJob.class).withIdentity("daily", "reports").storeDurably().build();
        }

        @Bean
        Trigger dailyReportNow(JobDetail dailyReport) {
            return TriggerBuilder.newTrigger().forJob(dailyReport).startNow().build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class AuditListenerConfig {

        @Bean
        SchedulerFactoryBeanCustomizer auditListener() {
            return factory -> factory.setGlobalTriggerListeners(new TriggerListenerSupport() {
                @Override
                public String getName() {
                    return "audit";
                }
            });
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnSchedulerConfig {

        @Bean
        SchedulerFactoryBean ownScheduler() {
            SchedulerFactoryBean factory = new SchedulerFactoryBean();
            factory.setSchedulerName("own");
            return factory;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BadJobConfig {

        @Bean
        JobDetail bad() {
            return JobBuilder.newJob(BadJob.class).withIdentity("bad").storeDurably().build();
        }
    }

    /** Guarded by its annotation; records the trigger and scheduled fire time of each run, as in its marker. */
    @ClusterSingleton
    public static class ReportJob implements Job {

        static final Queue<String> FIRES = new ConcurrentLinkedQueue<>();

        @Override
        public void execute(JobExecutionContext context) {
            // the trigger has no name of its own: its fires are marked by its group
            FIRES.add(context.getTrigger().getKey().getGroup() + ".*@" + context.getScheduledFireTime().getTime());
        }
    }

    /** Not guarded unless configured. */
    public static class PlainJob implements Job {

        @Override
        public void execute(JobExecutionContext context) {
        }
    }

    /** An annotation that cannot be understood. */
    @ClusterSingleton(lockAtMostFor = "soon")
    public static class BadJob implements Job {

        @Override
        public void execute(JobExecutionContext context) {
        }
    }
}
