package dev.locks.autoconfigure.actuate;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

import dev.locks.DefaultLockService;
import dev.locks.actuate.LocksEndpoint;

/**
 * The {@code locks} actuator endpoint, created only when the application exposes it (Boot's
 * {@code management.endpoints.*.exposure.include}). Its write operation further needs
 * {@code management.endpoint.locks.access=unrestricted}.
 */
@AutoConfiguration(afterName = "dev.locks.autoconfigure.LocksAutoConfiguration")
@ConditionalOnClass(Endpoint.class)
@ConditionalOnSingleCandidate(DefaultLockService.class)
public class LocksEndpointAutoConfiguration {

    // on the method, not the class: Spring gathers a class's conditions before checking any, and this
    // one's condition class is missing when actuator is
    @Bean
    @ConditionalOnAvailableEndpoint(LocksEndpoint.class)
    @ConditionalOnMissingBean
    LocksEndpoint locksEndpoint(DefaultLockService locks) {
        return new LocksEndpoint(locks);
    }
}
