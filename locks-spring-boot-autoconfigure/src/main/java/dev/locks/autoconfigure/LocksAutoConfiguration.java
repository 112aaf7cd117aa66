package dev.locks.autoconfigure;

import javax.sql.DataSource;

import org.springframework.aop.Advisor;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.jdbc.EmbeddedDatabaseConnection;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;

import dev.locks.DefaultLockService;
import dev.locks.InvalidLockSettingException;
import dev.locks.LockListener;
import dev.locks.LockService;
import dev.locks.LockSettings;
import dev.locks.aop.AnnotationLockOperationSource;
import dev.locks.aop.BeanFactoryLockOperationSourceAdvisor;
import dev.locks.aop.LockExpressionEvaluator;
import dev.locks.aop.LockInterceptor;
import dev.locks.aop.LockedTransactionListener;
import dev.locks.aop.LockOperationSource;
import dev.locks.jdbc.H2Dialect;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.jdbc.MariaDbDialect;
import dev.locks.jdbc.MySqlDialect;
import dev.locks.jdbc.PostgresDialect;
import dev.locks.jdbc.SqlDialect;
import dev.locks.quartz.JobBeanCheck;

/**
 * Gives an application with a {@link DataSource} a {@link LockService} over that database (tables
 * created per {@code locks.jdbc.initialize-schema}) and the lock annotations {@code @PathLocked},
 * {@code @ClusterSingleton} and {@code @Semaphore}; an application with a lock service of its own
 * gets the annotations over it, with or without a DataSource bean. With neither, annotated beans
 * fail the start rather than run unlocked. Every bean backs off when the application defines its
 * own; {@code locks.enabled=false} turns everything off.
 */
@AutoConfiguration(after = DataSourceAutoConfiguration.class)
@ConditionalOnClass(DataSource.class)
@ConditionalOnProperty(prefix = "locks", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(LocksProperties.class)
public final class LocksAutoConfiguration {

    /**
     * The lock service. It runs its watchdog on a thread of its own rather than on the application's
     * TaskScheduler: a long {@code @Scheduled} job on a one-thread scheduler must not delay renewals.
     * It is created after the application's database initialisation (Flyway, Liquibase,
     * {@code spring.sql.init}): creating the lock tables first would leave a migration tool a
     * schema it refuses as not empty, or a script tables that already exist.
     *
     * @param properties the settings
     * @param beanFactory to find the lock DataSource
     * @return the service, closed on shutdown to release what this node holds (locks of work still
     *         running after {@code locks.shutdown-wait} are left to their leases)
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(LockService.class)
    @ConditionalOnBean(DataSource.class)
    @DependsOnDatabaseInitialization
    public JdbcLockService lockService(LocksProperties properties, BeanFactory beanFactory) {
        DataSource dataSource = LockDataSource.find(properties.getJdbc().getDataSourceBean(), beanFactory);
        return JdbcLockService.builder(dataSource)
                .dialect(dialect(properties.getJdbc().getDialect()))
                .tablePrefix(properties.getJdbc().getTablePrefix())
                .releaseNotifications(properties.getJdbc().isReleaseNotifications())
                .durableReleases(properties.getJdbc().isDurableReleases())
                .createSchema(createSchema(properties, dataSource))
                .settings(settings(properties))
                .build();
    }

    /** A new dialect of the configured kind, or null to detect it. */
    private static SqlDialect dialect(LocksProperties.Dialect configured) {
        if (configured == null) {
            return null;
        }
        return switch (configured) {
            case MYSQL -> new MySqlDialect();
            case MARIADB -> new MariaDbDialect();
            case POSTGRESQL -> new PostgresDialect();
            case H2 -> new H2Dialect();
        };
    }

    private static boolean createSchema(LocksProperties properties, DataSource dataSource) {
        return switch (properties.getJdbc().getInitializeSchema()) {
            case ALWAYS -> true;
            case NEVER -> false;
            case EMBEDDED -> EmbeddedDatabaseConnection.isEmbedded(dataSource);
        };
    }

    /**
     * Adds the application's {@link LockListener} beans to the lock service once every singleton
     * exists: listeners such as the metrics need the service themselves, so resolving them while
     * the service is built would be a cycle.
     *
     * @param service the lock service
     * @param listeners the listener beans
     * @return the registrar
     */
    @Bean
    static SmartInitializingSingleton lockListenerRegistrar(ObjectProvider<DefaultLockService> service,
            ObjectProvider<LockListener> listeners) {
        return () -> service.ifUnique(locks -> listeners.orderedStream().forEach(locks::addListener));
    }

    /**
     * Fails the start when beans carry lock annotations and there is no lock service to apply them.
     *
     * @return the check
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static LockServiceRequiredCheck lockServiceRequiredCheck() {
        return new LockServiceRequiredCheck();
    }

    static LockSettings settings(LocksProperties properties) {
        LockSettings.Builder settings = LockSettings.builder()
                .defaultTenant(properties.getDefaultTenant())
                .defaultLease(properties.getDefaultLease())
                .defaultWait(properties.getDefaultWait())
                .renewInterval(properties.getRenewInterval())
                .backoff(properties.getBackoff().getInitial(), properties.getBackoff().getMultiplier(),
                        properties.getBackoff().getMax(), properties.getBackoff().getJitter())
                .caseSensitive(properties.getPaths().isCaseSensitive())
                .maxPathLength(properties.getPaths().getMaxLength())
                .purgeInterval(properties.getPurgeInterval())
                .shutdownWait(properties.getShutdownWait())
                .slowWaitLog(properties.getLog().getSlowWait())
                .waiterLease(properties.getWaiting().getQueueLease())
                .maxPollsPerSecond(properties.getWaiting().getMaxPollsPerSecond())
                .deadlockCheckInterval(properties.getWaiting().getDeadlockCheckInterval())
                .notifiedPollInterval(properties.getWaiting().getNotifiedPollInterval());
        try {
            if (properties.getNodeId() != null && !properties.getNodeId().isBlank()) {
                settings.nodeId(properties.getNodeId());
            }
            return settings.build();
        }
        catch (InvalidLockSettingException ex) {
            throw SettingProperty.explain(ex, properties);
        }
    }

    /**
     * A DataSource for the lock service this configuration builds, or the application's own lock
     * service: either way the annotations need the advisor.
     */
    static final class DataSourceOrLockService extends AnyNestedCondition {

        DataSourceOrLockService() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnBean(DataSource.class)
        static final class HasDataSource {
        }

        @ConditionalOnBean(LockService.class)
        static final class HasLockService {
        }
    }

    /**
     * The lock annotations: operation source, interceptor and advisor, like Spring's
     * {@code ProxyCachingConfiguration}. They reach the lock service and its DataSource only on
     * first use, so creating the advisor early (as auto-proxy creators do) creates nothing else.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Advisor.class)
    @Conditional(DataSourceOrLockService.class)
    @Import(LocksProxyRegistrar.class)
    static class AnnotationConfiguration {

        /** The proxy leaves Quartz jobs alone: a job bean's other lock annotations must fail the start. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.quartz.Job")
        static class QuartzJobBeans {

            @Bean
            @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
            static JobBeanCheck lockAnnotationsOnJobBeansCheck() {
                return new JobBeanCheck();
            }
        }

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        @ConditionalOnMissingBean
        static LockExpressionEvaluator lockExpressionEvaluator() {
            return new LockExpressionEvaluator();
        }

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        @ConditionalOnMissingBean(LockOperationSource.class)
        static AnnotationLockOperationSource lockOperationSource(LockExpressionEvaluator evaluator) {
            return new AnnotationLockOperationSource(evaluator);
        }

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        @ConditionalOnMissingBean
        static LockInterceptor lockInterceptor(ObjectProvider<LockService> lockService,
                LockOperationSource operationSource, LockExpressionEvaluator evaluator) {
            LockInterceptor interceptor = new LockInterceptor(lockService::getObject, operationSource, evaluator);
            interceptor.setLockStoreResource(() -> lockService.getObject() instanceof JdbcLockService jdbc
                    ? jdbc.store().dataSource() : null);
            return interceptor;
        }

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        @ConditionalOnMissingBean
        static LockedTransactionListener lockedTransactionListener() {
            return new LockedTransactionListener();
        }

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static TransactionManagerListenerRegistrar lockedTransactionListenerRegistrar(
                ObjectProvider<LockedTransactionListener> listener) {
            return new TransactionManagerListenerRegistrar(listener);
        }

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        @ConditionalOnMissingBean
        static BeanFactoryLockOperationSourceAdvisor lockAdvisor(LockOperationSource operationSource,
                LockInterceptor interceptor, Environment environment) {
            BeanFactoryLockOperationSourceAdvisor advisor = new BeanFactoryLockOperationSourceAdvisor(operationSource);
            advisor.setAdvice(interceptor);
            // read from the environment, not LocksProperties: advisors are created while the bean post
            // processors are, and the properties bean would then miss some of them (Boot warns of it)
            advisor.setOrder(Binder.get(environment).bind("locks.aop.order", Integer.class)
                    .orElse(BeanFactoryLockOperationSourceAdvisor.DEFAULT_ORDER));
            return advisor;
        }
    }
}
