package dev.locks.autoconfigure.quartz;

import org.quartz.Scheduler;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.locks.LockService;
import dev.locks.quartz.ClusterSingletonTriggerListener;

/**
 * Guards Quartz jobs annotated {@code @ClusterSingleton} (or listed in {@code locks.quartz.jobs}) so
 * that each scheduled fire runs on one node of the cluster: registers a
 * {@link ClusterSingletonTriggerListener} with the scheduler Spring Boot builds, and with any other
 * scheduler of the context. Quartz alone is enough: job classes are never proxied, so an application
 * that builds its scheduler without Boot's Quartz module must still get the listener.
 */
@AutoConfiguration(afterName = "dev.locks.autoconfigure.LocksAutoConfiguration",
        beforeName = "org.springframework.boot.quartz.autoconfigure.QuartzAutoConfiguration")
@ConditionalOnClass(Scheduler.class)
@ConditionalOnBooleanProperty(name = "locks.quartz.enabled", matchIfMissing = true)
@EnableConfigurationProperties(LocksQuartzProperties.class)
public final class LocksQuartzAutoConfiguration {

    /**
     * Without a lock service the guard cannot be built; the check fails the start if a job needs it.
     * {@code locks.enabled=false} turns the lock annotations off deliberately, this check with them.
     */
    @Bean
    @ConditionalOnMissingBean(LockService.class)
    @ConditionalOnBooleanProperty(name = "locks.enabled", matchIfMissing = true)
    static UnguardedJobsCheck unguardedJobsCheck(ObjectProvider<LockService> locks, ObjectProvider<Scheduler> schedulers,
            LocksQuartzProperties properties) {
        return new UnguardedJobsCheck(locks, schedulers, properties.getJobs());
    }

    /** The guard itself, over the application's lock service; off with the locks, even where that service is the application's own. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(LockService.class)
    @ConditionalOnBooleanProperty(name = "locks.enabled", matchIfMissing = true)
    static class GuardConfiguration {

        @Bean
        @ConditionalOnMissingBean
        ClusterSingletonTriggerListener clusterSingletonTriggerListener(LockService locks,
                LocksQuartzProperties properties) {
            return new ClusterSingletonTriggerListener(locks, properties.getJobs(), properties.getFireMarkerRetention());
        }

        @Bean
        SchedulerListenerCheck clusterSingletonSchedulerListenerCheck(ObjectProvider<Scheduler> schedulers,
                ClusterSingletonTriggerListener listener) {
            return new SchedulerListenerCheck(schedulers, listener);
        }

        /** With Spring Boot's Quartz module: the listener goes on the scheduler Boot builds as it is built. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = { "org.springframework.scheduling.quartz.SchedulerFactoryBean",
                "org.springframework.boot.quartz.autoconfigure.SchedulerFactoryBeanCustomizer" })
        static class BootSchedulerConfiguration {

            @Bean
            ClusterSingletonSchedulerCustomizer clusterSingletonSchedulerCustomizer(
                    ClusterSingletonTriggerListener listener) {
                return new ClusterSingletonSchedulerCustomizer(listener);
            }
        }
    }
}
