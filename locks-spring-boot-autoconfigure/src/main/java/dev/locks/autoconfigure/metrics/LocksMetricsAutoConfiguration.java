package dev.locks.autoconfigure.metrics;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import dev.locks.DefaultLockService;
import dev.locks.metrics.LockMetrics;

/**
 * Publishes the lock service's meters ({@link LockMetrics}) to the application's
 * {@link MeterRegistry}. Runs after the registries exist, so that the condition on them can see
 * them.
 */
@AutoConfiguration(afterName = {
        "dev.locks.autoconfigure.LocksAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnSingleCandidate(DefaultLockService.class)
@EnableConfigurationProperties(LocksMetricsProperties.class)
public class LocksMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LockMetrics lockMetrics(DefaultLockService locks, MeterRegistry registry, LocksMetricsProperties properties) {
        return LockMetrics.bind(locks, registry, properties.isTenantTag());
    }
}
