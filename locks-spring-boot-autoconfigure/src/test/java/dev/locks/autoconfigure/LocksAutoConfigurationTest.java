package dev.locks.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceInitializationAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionManagerCustomizationAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.Ordered;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.transaction.interceptor.BeanFactoryTransactionAttributeSourceAdvisor;

import dev.locks.InvalidLockSettingException;
import dev.locks.LockHandle;
import dev.locks.LockListener;
import dev.locks.LockRequest;
import dev.locks.LockService;
import dev.locks.LockSettings;
import dev.locks.aop.AnnotationLockOperationSource;
import dev.locks.aop.BeanFactoryLockOperationSourceAdvisor;
import dev.locks.aop.LockExpressionEvaluator;
import dev.locks.aop.LockInterceptor;
import dev.locks.aop.LockedTransactionListener;
import dev.locks.annotation.PathLocked;
import dev.locks.jdbc.JdbcLockService;

/** What the auto-configuration provides, when it backs off, and how properties bind. */
class LocksAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
                    LocksAutoConfiguration.class))
            .withPropertyValues("spring.datasource.generate-unique-name=true");

    @Test
    void anApplicationWithADataSourceGetsTheLockServiceAndTheAnnotations() {
        runner.withUserConfiguration(Annotated.class).run(context -> {
            assertThat(context).hasSingleBean(JdbcLockService.class)
                    .hasSingleBean(LocksProperties.class)
                    .hasSingleBean(LockExpressionEvaluator.class)
                    .hasSingleBean(AnnotationLockOperationSource.class)
                    .hasSingleBean(LockInterceptor.class)
                    .hasSingleBean(BeanFactoryLockOperationSourceAdvisor.class);
            Reports reports = context.getBean(Reports.class);
            assertThat(AopUtils.isAopProxy(reports)).isTrue();
            LockService locks = context.getBean(LockService.class);
            assertThat(reports.run(() -> locks.tryAcquire(LockRequest.paths("/reports").build())
                    .map(h -> { h.release(); return true; }).orElse(false))).isFalse();
        });
    }

    @Test
    void aTransactionManagerTheApplicationDeclaresChecksItsLocksAtTheCommitToo() {
        runner.withBean("transactionManager", PlatformTransactionManager.class,
                () -> new DataSourceTransactionManager(new SimpleDriverDataSource())).run(context -> {
                    DataSourceTransactionManager manager = context.getBean(DataSourceTransactionManager.class);
                    assertThat(manager.getTransactionExecutionListeners())
                            .containsExactly(context.getBean(LockedTransactionListener.class));
                });
    }

    @Test
    void bootsOwnTransactionManagerGetsTheCommitCheckOnce() {
        runner.withConfiguration(AutoConfigurations.of(TransactionManagerCustomizationAutoConfiguration.class))
                .run(context -> assertThat(context.getBean(DataSourceTransactionManager.class)
                        .getTransactionExecutionListeners()).containsExactly(context.getBean(LockedTransactionListener.class)));
    }

    @Test
    void anEmbeddedDatabaseGetsTheLockTablesByDefault() {
        runner.run(context -> {
            LockService locks = context.getBean(LockService.class);
            try (LockHandle handle = locks.acquire(LockRequest.paths("/embedded").build())) {
                assertThat(handle.isValid()).isTrue();
            }
        });
    }

    @Test
    void withoutADataSourceAnApplicationWithoutLockAnnotationsGetsNothing() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LocksAutoConfiguration.class))
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(LockService.class)
                            .doesNotHaveBean(BeanFactoryLockOperationSourceAdvisor.class);
                });
    }

    @Test
    void withoutADataSourceOrLockServiceAnAnnotatedBeanFailsTheStartNamingItsMethod() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LocksAutoConfiguration.class))
                .withUserConfiguration(Annotated.class)
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasMessageContaining("@PathLocked on Reports.run(BooleanSupplier) (bean 'reports') needs a"
                                + " LockService, but the application has none")
                        .hasMessageContaining("a DataSource bean").hasMessageContaining("a LockService bean")
                        .hasMessageContaining("locks.enabled=false"));
    }

    @Test
    void aDataSourceRegisteredAfterTheAutoConfigurationFailsTheStartOfAnAnnotatedApplicationNamingIt() {
        // as a third-party auto-configuration ordered after ours would register it
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LocksAutoConfiguration.class, LateDataSource.class))
                .withUserConfiguration(Annotated.class)
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasMessageContaining("@PathLocked on Reports.run(BooleanSupplier) (bean 'reports')")
                        .hasMessageContaining("DataSource bean 'lateDataSource' was registered after the locks"
                                + " auto-configuration looked for one"));
    }

    @Test
    void locksEnabledFalseLetsAnnotatedBeansStartWithoutADataSource() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LocksAutoConfiguration.class))
                .withUserConfiguration(Annotated.class)
                .withPropertyValues("locks.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockService.class));
    }

    @Test
    void theLockServiceStartsAfterTheApplicationsDatabaseInitialisation() {
        // the script fails on existing tables: had the lock service created them first, the start would fail
        runner.withConfiguration(AutoConfigurations.of(DataSourceInitializationAutoConfiguration.class))
                .withPropertyValues("spring.sql.init.schema-locations=classpath:dev/locks/autoconfigure/strict-lock-tables.sql")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    context.getBean(LockService.class).acquire(LockRequest.paths("/after-init").build()).release();
                });
    }

    @Test
    void aTransactionAwareProxyDataSourceDoesNotLetTheLockStoreCommitTheCallersWork() {
        DataSource proxy = new TransactionAwareDataSourceProxy(h2("tx-aware-" + System.nanoTime()));
        runner.withBean("dataSource", DataSource.class, () -> proxy).run(context -> {
            JdbcTemplate jdbc = new JdbcTemplate(proxy);
            jdbc.execute("CREATE TABLE app_rows (id INT)");
            LockService locks = context.getBean(LockService.class);
            new TransactionTemplate(context.getBean(PlatformTransactionManager.class)).executeWithoutResult(tx -> {
                jdbc.update("INSERT INTO app_rows (id) VALUES (1)");
                locks.tryAcquire(LockRequest.paths("/tx-aware").build()).orElseThrow().release();
                tx.setRollbackOnly();
            });
            assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM app_rows", Integer.class)).isZero();
        });
    }

    @Test
    void locksEnabledFalseTurnsEverythingOff() {
        runner.withUserConfiguration(Annotated.class).withPropertyValues("locks.enabled=false").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(LockService.class)
                    .doesNotHaveBean(LocksProperties.class)
                    .doesNotHaveBean(LockInterceptor.class)
                    .doesNotHaveBean(BeanFactoryLockOperationSourceAdvisor.class);
            assertThat(AopUtils.isAopProxy(context.getBean(Reports.class))).isFalse();
        });
    }

    @Test
    void anApplicationLockServiceReplacesOursAndServesTheAnnotations() {
        runner.withUserConfiguration(Annotated.class, OwnLockService.class).run(context -> {
            assertThat(context).hasSingleBean(LockService.class).doesNotHaveBean(JdbcLockService.class);
            RecordingLockService own = context.getBean(RecordingLockService.class);
            context.getBean(Reports.class).run(() -> true);
            assertThat(own.entered).containsExactly("EXCLUSIVE /reports");
        });
    }

    @Test
    void anApplicationLockServiceOverAPoolThatIsNoBeanServesTheAnnotations() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LocksAutoConfiguration.class))
                .withUserConfiguration(Annotated.class, OwnLockServiceWithoutDataSourceBean.class)
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(DataSource.class);
                    RecordingLockService own = context.getBean(RecordingLockService.class);
                    context.getBean(Reports.class).run(() -> true);
                    assertThat(own.entered).containsExactly("EXCLUSIVE /reports");
                });
    }

    @Test
    void anApplicationAdvisorReplacesOurs() {
        runner.withUserConfiguration(OwnAdvisor.class).run(context -> {
            assertThat(context).hasSingleBean(BeanFactoryLockOperationSourceAdvisor.class);
            assertThat(context.getBean(BeanFactoryLockOperationSourceAdvisor.class).getOrder()).isEqualTo(42);
        });
    }

    @Test
    void theAdvisorIsOrderedOutsideTransactionsByDefault() {
        runner.run(context -> {
            int locks = context.getBean(BeanFactoryLockOperationSourceAdvisor.class).getOrder();
            int transactions = context.getBean(BeanFactoryTransactionAttributeSourceAdvisor.class).getOrder();
            assertThat(locks).isLessThan(transactions);
            assertThat(locks).isEqualTo(Ordered.LOWEST_PRECEDENCE - 1000);
        });
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void theAdvisorDoesNotPullThePropertiesInWhileBeanPostProcessorsAreCreated(CapturedOutput output) {
        // as Micrometer's meterRegistryPostProcessor does: the auto-proxy creator looks up the advisors for it
        runner.withUserConfiguration(WithPostProcessor.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(output).doesNotContain("is not eligible for getting processed by all BeanPostProcessors");
        });
    }

    @Test
    void locksAopOrderSetsTheAdvisorOrder() {
        runner.withPropertyValues("locks.aop.order=7").run(context ->
                assertThat(context.getBean(BeanFactoryLockOperationSourceAdvisor.class).getOrder()).isEqualTo(7));
    }

    @Test
    void theAnnotationsWorkEvenWhenBootsAopAutoConfigurationIsOff() {
        runner.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class))
                .withPropertyValues("spring.aop.auto=false")
                .withUserConfiguration(Annotated.class)
                .run(context -> assertThat(AopUtils.isCglibProxy(context.getBean(Reports.class))).isTrue());
    }

    @Test
    void propertiesAreBoundIntoTheEngineSettings() {
        runner.withPropertyValues("locks.node-id=web-7", "locks.default-tenant=acme", "locks.default-lease=45s",
                "locks.default-wait=3s", "locks.renew-interval=2s", "locks.backoff.initial=7ms",
                "locks.backoff.multiplier=2.5", "locks.backoff.max=1s", "locks.backoff.jitter=9ms",
                "locks.paths.case-sensitive=false", "locks.paths.max-length=200", "locks.purge-interval=5m",
                "locks.shutdown-wait=25s", "locks.log.slow-wait=20s", "locks.jdbc.table-prefix=app_locks_").run(context -> {
                    LockSettings settings = context.getBean(JdbcLockService.class).settings();
                    assertThat(settings.nodeId()).isEqualTo("web-7");
                    assertThat(settings.defaultTenant()).isEqualTo("acme");
                    assertThat(settings.defaultLease()).isEqualTo(Duration.ofSeconds(45));
                    assertThat(settings.defaultWait()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(settings.renewIntervalFor(Duration.ofMinutes(1))).isEqualTo(Duration.ofSeconds(2));
                    assertThat(settings.backoffInitial()).isEqualTo(Duration.ofMillis(7));
                    assertThat(settings.backoffMultiplier()).isEqualTo(2.5);
                    assertThat(settings.backoffMax()).isEqualTo(Duration.ofSeconds(1));
                    assertThat(settings.backoffJitter()).isEqualTo(Duration.ofMillis(9));
                    assertThat(settings.pathNormalizer().isCaseSensitive()).isFalse();
                    assertThat(settings.pathNormalizer().getMaxLength()).isEqualTo(200);
                    assertThat(settings.purgeInterval()).isEqualTo(Duration.ofMinutes(5));
                    assertThat(settings.shutdownWait()).isEqualTo(Duration.ofSeconds(25));
                    assertThat(settings.slowWaitLog()).isEqualTo(Duration.ofSeconds(20));
                    assertThat(tableExists(context.getBean(DataSource.class), "app_locks_held")).isTrue();
                });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({
            "locks.default-lease, 200ms, three of the watchdog's",
            "locks.renew-interval, 0s, at least the watchdog's tick",
            "locks.purge-interval, -1m, must not be negative",
            "locks.shutdown-wait, -1s, must not be negative",
            "locks.default-wait, -1s, must not be negative",
            "locks.log.slow-wait, -5s, must not be negative",
            "locks.paths.max-length, 6000, between 1 and 5000",
            "locks.backoff.max, 2s, a quarter of the queue lease",
            "locks.backoff.jitter, -1ms, must not be negative" })
    void aValueTheEngineCannotHonourFailsStartUpNamingTheProperty(String property, String value, String reason) {
        assertStartUpFailsNaming(property, value, reason);
    }

    @ParameterizedTest
    @ValueSource(strings = { "locks.node-id", "locks.default-tenant" })
    void aNameLongerThanTheSchemaHoldsFailsStartUpNamingTheProperty(String property) {
        assertStartUpFailsNaming(property, "n".repeat(191), "longer than 190 characters");
    }

    private void assertStartUpFailsNaming(String property, String value, String reason) {
        runner.withPropertyValues(property + "=" + value).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining(reason);
            InvalidConfigurationPropertyValueException named = findCause(context.getStartupFailure(),
                    InvalidConfigurationPropertyValueException.class);
            assertThat(named).as("a failure naming the property").isNotNull();
            assertThat(named.getName()).isEqualTo(property);
            assertThat(named.getCause()).as("the engine's refusal").isInstanceOf(InvalidLockSettingException.class);
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidLockSettingException.class);
        });
    }

    @Test
    void aSlowWaitOfZeroTurnsTheSlowWaitLogOff() {
        runner.withPropertyValues("locks.log.slow-wait=0").run(context ->
                assertThat(context.getBean(JdbcLockService.class).settings().slowWaitLog()).isNull());
    }

    private static <T extends Throwable> T findCause(Throwable failure, Class<T> type) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    @Test
    void thePropertyDefaultsAreTheEngineDefaults() {
        LocksProperties properties = new LocksProperties();
        LockSettings fromProperties = LocksAutoConfiguration.settings(properties);
        LockSettings engine = LockSettings.builder().build();
        assertThat(fromProperties.defaultTenant()).isEqualTo(engine.defaultTenant());
        assertThat(fromProperties.defaultLease()).isEqualTo(engine.defaultLease());
        assertThat(fromProperties.defaultWait()).isEqualTo(engine.defaultWait());
        assertThat(fromProperties.backoffInitial()).isEqualTo(engine.backoffInitial());
        assertThat(fromProperties.backoffMax()).isEqualTo(engine.backoffMax());
        assertThat(fromProperties.backoffJitter()).isEqualTo(engine.backoffJitter());
        assertThat(fromProperties.waiterLease()).isEqualTo(engine.waiterLease());
        assertThat(fromProperties.maxPollsPerSecond()).isEqualTo(engine.maxPollsPerSecond());
        assertThat(fromProperties.deadlockCheckInterval()).isEqualTo(engine.deadlockCheckInterval());
        assertThat(fromProperties.renewIntervalFor(Duration.ofSeconds(30)))
                .isEqualTo(engine.renewIntervalFor(Duration.ofSeconds(30)));
        assertThat(fromProperties.backoffInitial()).isEqualTo(engine.backoffInitial());
        assertThat(fromProperties.backoffMultiplier()).isEqualTo(engine.backoffMultiplier());
        assertThat(fromProperties.backoffMax()).isEqualTo(engine.backoffMax());
        assertThat(fromProperties.backoffJitter()).isEqualTo(engine.backoffJitter());
        assertThat(fromProperties.pathNormalizer().isCaseSensitive()).isEqualTo(engine.pathNormalizer().isCaseSensitive());
        assertThat(fromProperties.pathNormalizer().getMaxLength()).isEqualTo(engine.pathNormalizer().getMaxLength());
        assertThat(fromProperties.purgeInterval()).isEqualTo(engine.purgeInterval());
        assertThat(fromProperties.shutdownWait()).isEqualTo(engine.shutdownWait());
        assertThat(fromProperties.slowWaitLog()).isEqualTo(engine.slowWaitLog());
        assertThat(properties.getAop().getOrder()).isEqualTo(BeanFactoryLockOperationSourceAdvisor.DEFAULT_ORDER);
    }

    @Test
    void aNamedDataSourceHoldsTheLockTables() {
        runner.withUserConfiguration(SecondDataSource.class)
                .withPropertyValues("locks.jdbc.data-source-bean=lockDataSource")
                .run(context -> {
                    DataSource lockDataSource = context.getBean("lockDataSource", DataSource.class);
                    assertThat(context.getBean(JdbcLockService.class).store().dataSource()).isSameAs(lockDataSource);
                    assertThat(tableExists(lockDataSource, "locks_held")).isTrue();
                    assertThat(tableExists(context.getBean("dataSource", DataSource.class), "locks_held")).isFalse();
                });
    }

    @Test
    void anUnknownDataSourceBeanFailsTheStartNamingIt() {
        runner.withPropertyValues("locks.jdbc.data-source-bean=nope").run(context ->
                assertThat(context).hasFailed().getFailure()
                        .rootCause().hasMessageContaining("No bean named 'nope'"));
        runner.withPropertyValues("locks.jdbc.data-source-bean=nope").run(context ->
                assertThat(context.getStartupFailure()).hasStackTraceContaining(
                        "locks.jdbc.data-source-bean names 'nope', but there is no DataSource bean of that name"));
    }

    @Test
    void twoDataSourcesWithoutAPrimaryFailTheStartAskingForTheBeanName() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LocksAutoConfiguration.class))
                .withUserConfiguration(TwoDataSources.class)
                .run(context -> assertThat(context.getStartupFailure())
                        .hasStackTraceContaining("2 DataSource beans and none is primary")
                        .hasStackTraceContaining("locks.jdbc.data-source-bean"));
    }

    @Test
    void closingTheApplicationReleasesWhatTheNodeHolds() {
        DataSource shared = h2("shared-close");
        JdbcLockService probe = JdbcLockService.builder(shared).createSchema(true).build();
        try {
            runner.withBean("dataSource", DataSource.class, () -> shared).run(context -> {
                context.getBean(LockService.class).acquire(LockRequest.paths("/kept/open").build());
                assertThat(probe.tryAcquire(LockRequest.paths("/kept/open").build())).isEmpty();
            });
            Optional<LockHandle> after = probe.tryAcquire(LockRequest.paths("/kept/open").build());
            assertThat(after).isPresent();
            after.get().release();
        }
        finally {
            probe.close();
        }
    }

    static DataSource h2(String name) {
        return new SimpleDriverDataSource(new org.h2.Driver(), "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1", "sa", "");
    }

    static boolean tableExists(DataSource dataSource, String table) throws Exception {
        try (var connection = dataSource.getConnection();
                var tables = connection.getMetaData().getTables(null, null, table.toUpperCase(), null)) {
            if (tables.next()) {
                return true;
            }
        }
        try (var connection = dataSource.getConnection();
                var tables = connection.getMetaData().getTables(null, null, table.toLowerCase(), null)) {
            return tables.next();
        }
    }

    @Test
    void aListenerBeanThatNeedsTheLockServiceIsAddedWithoutACycle() {
        runner.withUserConfiguration(ListenerNeedingTheService.class).run(context -> {
            assertThat(context).hasNotFailed();
            LockService locks = context.getBean(LockService.class);
            locks.tryAcquire(LockRequest.paths("/listened").build()).orElseThrow().release();
            assertThat(context.getBean(CountingListener.class).acquired).hasValue(1);
        });
    }

    /** Counts acquisitions; needs the lock service, as the metrics do. */
    static class CountingListener implements LockListener {

        final java.util.concurrent.atomic.AtomicInteger acquired = new java.util.concurrent.atomic.AtomicInteger();

        CountingListener(LockService service) {
            assertThat(service).isNotNull();
        }

        @Override
        public void acquireFinished(LockRequest request, dev.locks.AcquireOutcome outcome, java.time.Duration elapsed,
                boolean waited) {
            acquired.incrementAndGet();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class ListenerNeedingTheService {

        @Bean
        CountingListener countingListener(LockService service) {
            return new CountingListener(service);
        }
    }

    @Test
    void aQuartzJobBuiltByTheContextIsLeftToTheQuartzListenerAndNotProxied() {
        runner.withUserConfiguration(Annotated.class).run(context -> {
            // what Spring's SpringBeanJobFactory does for every fire
            Object job = context.getAutowireCapableBeanFactory().createBean(GuardedJob.class);
            assertThat(AopUtils.isAopProxy(job)).isFalse();
            assertThat(AopUtils.isAopProxy(context.getBean(Reports.class))).isTrue();
        });
    }

    @Test
    void aBeanThatIsAQuartzJobWithALockedMethodFailsTheStartNamingIt() {
        // without Quartz's auto-configuration, so without the trigger listener: the bean is checked anyway
        runner.withBean("exportJob", LockedMethodJob.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessageContaining(
                    "@Semaphore on method export of bean 'exportJob' (" + LockedMethodJob.class.getName()
                            + "), a Quartz job, is not applied").hasMessageContaining("LockService.call");
        });
    }

    @Test
    void aQuartzJobBehindAnotherFeaturesJdkProxyIsJudgedByItsTargetClass() {
        // as a @Transactional job bean with interface proxies would be
        Supplier<org.quartz.Job> proxied = () -> (org.quartz.Job) new ProxyFactory(new LockedMethodJob()).getProxy();
        assertThat(AopUtils.isJdkDynamicProxy(proxied.get())).isTrue();
        runner.withBean("exportJob", org.quartz.Job.class, proxied).run(context -> assertThat(context).hasFailed()
                .getFailure().hasMessageContaining("@Semaphore on method export of bean 'exportJob' ("
                        + LockedMethodJob.class.getName() + ")"));
    }

    @Test
    void aJobThroughASubInterfaceOfJobIsNeitherProxiedNorLetThroughTheCheck() {
        runner.withUserConfiguration(Annotated.class).run(context -> {
            Object job = context.getAutowireCapableBeanFactory().createBean(InterruptibleLockedJob.class);
            assertThat(AopUtils.isAopProxy(job)).isFalse();
        });
        runner.withBean("interruptible", InterruptibleLockedJob.class).run(context -> assertThat(context)
                .hasFailed().getFailure().hasMessageContaining("@Semaphore on method export of bean 'interruptible'"));
    }

    @Test
    void aBeanThatIsAQuartzJobWithClusterSingletonOnItsClassStarts() {
        runner.withBean("guardedJob", GuardedJob.class).run(context -> assertThat(context).hasNotFailed());
    }

    /** A job that is also called as a service; its method's annotation would do nothing. */
    public static class LockedMethodJob implements org.quartz.Job {

        @Override
        public void execute(org.quartz.JobExecutionContext context) {
            export();
        }

        @dev.locks.annotation.Semaphore(name = "exports", max = 2)
        public void export() {
        }
    }

    /** A job through {@code InterruptableJob}, which extends {@code Job}. */
    public static class InterruptibleLockedJob implements org.quartz.InterruptableJob {

        @Override
        public void execute(org.quartz.JobExecutionContext context) {
            export();
        }

        @Override
        public void interrupt() {
        }

        @dev.locks.annotation.Semaphore(name = "exports", max = 2)
        public void export() {
        }
    }

    /** A Quartz job guarded by the trigger listener, per scheduled fire. */
    @dev.locks.annotation.ClusterSingleton(name = "guarded")
    public static class GuardedJob implements org.quartz.Job {

        @Override
        public void execute(org.quartz.JobExecutionContext context) {
        }
    }

    /** Locked under {@code /reports}; runs a check inside the lock. */
    public static class Reports {

        @PathLocked(paths = "'/reports'")
        public boolean run(java.util.function.BooleanSupplier inside) {
            return inside.getAsBoolean();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Annotated {

        @Bean
        Reports reports() {
            return new Reports();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnLockService {

        @Bean
        RecordingLockService ownLockService(DataSource dataSource) {
            return new RecordingLockService(JdbcLockService.builder(dataSource).tablePrefix("own_").createSchema(true)
                    .build());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnLockServiceWithoutDataSourceBean {

        @Bean(destroyMethod = "close")
        RecordingLockService ownLockService() {
            SimpleDriverDataSource pool = new SimpleDriverDataSource(new org.h2.Driver(),
                    "jdbc:h2:mem:own-" + java.util.UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
            return new RecordingLockService(JdbcLockService.builder(pool).createSchema(true).build());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnAdvisor {

        @Bean
        BeanFactoryLockOperationSourceAdvisor ownAdvisor() {
            BeanFactoryLockOperationSourceAdvisor advisor = new BeanFactoryLockOperationSourceAdvisor(
                    new AnnotationLockOperationSource(new LockExpressionEvaluator()));
            advisor.setOrder(42);
            return advisor;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class SecondDataSource {

        @Bean
        @Primary
        DataSource dataSource() {
            return h2("app-" + System.nanoTime());
        }

        @Bean
        DataSource lockDataSource() {
            return h2("lock-tables-" + System.nanoTime());
        }
    }

    /** An auto-configuration after ours that brings the DataSource. */
    @org.springframework.boot.autoconfigure.AutoConfiguration(after = LocksAutoConfiguration.class)
    static class LateDataSource {

        @Bean
        DataSource lateDataSource() {
            return h2("late-" + System.nanoTime());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoDataSources {

        @Bean
        DataSource first() {
            return h2("first");
        }

        @Bean
        DataSource second() {
            return h2("second");
        }
    }


    @Configuration(proxyBeanMethods = false)
    static class WithPostProcessor {

        @Bean
        static BeanPostProcessor applicationPostProcessor() {
            return new BeanPostProcessor() {
            };
        }
    }
}
