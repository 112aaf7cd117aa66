package dev.locks.jdbc;

import java.lang.reflect.Method;

import javax.sql.DataSource;

import org.springframework.util.ClassUtils;

/** Reads the size of a HikariCP pool behind a DataSource, without depending on HikariCP. */
final class PoolSize {

    private static final String HIKARI_CONFIG = "com.zaxxer.hikari.HikariConfigMXBean";

    private PoolSize() {
    }

    /** @return true if the DataSource is a HikariCP pool of at most {@code connections} */
    static boolean atMost(DataSource dataSource, int connections) {
        try {
            if (!ClassUtils.isPresent(HIKARI_CONFIG, PoolSize.class.getClassLoader())) {
                return false;
            }
            Class<?> config = ClassUtils.forName(HIKARI_CONFIG, PoolSize.class.getClassLoader());
            if (!dataSource.isWrapperFor(config)) {
                return false;
            }
            Method max = config.getMethod("getMaximumPoolSize");
            return ((Number) max.invoke(dataSource.unwrap(config))).intValue() <= connections;
        }
        catch (Exception | LinkageError ex) {
            // an unknown pool: assume it can spare a connection
            return false;
        }
    }
}
