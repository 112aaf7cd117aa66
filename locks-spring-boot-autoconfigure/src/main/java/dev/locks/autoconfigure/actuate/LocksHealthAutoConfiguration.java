package dev.locks.autoconfigure.actuate;

import java.time.Clock;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

import dev.locks.DefaultLockService;
import dev.locks.actuate.LocksHealthIndicator;

/**
 * The {@code locks} health indicator, unless {@code management.health.locks.enabled=false}.
 */
@AutoConfiguration(afterName = "dev.locks.autoconfigure.LocksAutoConfiguration")
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnSingleCandidate(DefaultLockService.class)
@EnableConfigurationProperties(LocksHealthProperties.class)
public class LocksHealthAutoConfiguration {

    // the bean name gives the contributor its name, "locks"; the condition sits on the method because
    // Spring gathers a class's conditions before checking any, and its class is missing without Boot health
    @Bean
    @ConditionalOnEnabledHealthIndicator("locks")
    @ConditionalOnMissingBean(name = "locksHealthIndicator")
    LocksHealthIndicator locksHealthIndicator(DefaultLockService locks, LocksHealthProperties properties) {
        if (properties.getTimeout().isNegative() || properties.getTimeout().isZero()) {
            throw new InvalidConfigurationPropertyValueException("locks.health.timeout", properties.getTimeout(),
                    "A health check needs a positive timeout.");
        }
        return new LocksHealthIndicator(locks, properties.getClockSkewWarning(), Clock.systemUTC(),
                properties.isLockProbe(), properties.getTimeout());
    }
}
