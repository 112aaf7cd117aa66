package dev.locks.actuate;

import java.time.Duration;

import javax.sql.DataSource;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import dev.locks.LockSettings;
import dev.locks.jdbc.JdbcLockService;

/**
 * An application's own lock service bean, node {@code node-a}, over its {@link DataSource}, with
 * the table prefix from {@code test.locks.prefix}; the context closes it.
 */
@Configuration(proxyBeanMethods = false)
public class UserLockService {

    @Bean
    public JdbcLockService lockService(DataSource dataSource, Environment environment) {
        return JdbcLockService.builder(dataSource)
                .tablePrefix(environment.getRequiredProperty("test.locks.prefix"))
                .settings(LockSettings.builder().nodeId("node-a").slowWaitLog(null)
                        .renewalTick(Duration.ofMillis(20)).build())
                .build();
    }
}
