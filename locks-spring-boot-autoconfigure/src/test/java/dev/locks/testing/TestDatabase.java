package dev.locks.testing;

import java.sql.Connection;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.opentest4j.TestAbortedException;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.JdbcDatabaseContainer;
import org.testcontainers.mysql.MySQLContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The databases the integration tests run on. A database comes from environment variables
 * ({@code LOCKS_TEST_MYSQL_URL}/{@code _USER}/{@code _PASSWORD}, {@code LOCKS_TEST_POSTGRES_URL}/...),
 * else from Testcontainers when Docker is available, else the tests are skipped with a loud
 * message, unless {@code LOCKS_REQUIRE_DATABASES} names the database: then they fail.
 */
public enum TestDatabase {

    H2("h2", null),
    MYSQL("mysql", "LOCKS_TEST_MYSQL"),
    POSTGRESQL("postgresql", "LOCKS_TEST_POSTGRES");

    private static final Set<TestDatabase> REPORTED = ConcurrentHashMap.newKeySet();

    private static volatile JdbcDatabaseContainer<?> mysqlContainer;

    private static volatile JdbcDatabaseContainer<?> postgresContainer;

    private final String id;

    private final String envPrefix;

    TestDatabase(String id, String envPrefix) {
        this.id = id;
        this.envPrefix = envPrefix;
    }

    /** @return the name used in LOCKS_REQUIRE_DATABASES */
    public String id() {
        return id;
    }

    /**
     * A fresh pool standing for one node. Skips (or fails, when required) if the database is missing.
     *
     * @param poolSize connections
     * @return the pool; close it after the test
     */
    public HikariDataSource newPool(int poolSize) {
        return newPool(poolSize, Map.of());
    }

    /**
     * A fresh pool standing for one node, its driver given {@code driverProperties}.
     *
     * @param poolSize connections
     * @param driverProperties the driver's settings, as the pool's data source properties
     * @return the pool; close it after the test
     */
    public HikariDataSource newPool(int poolSize, Map<String, String> driverProperties) {
        return newPool(poolSize, driverProperties, true);
    }

    /**
     * A fresh pool standing for one node, its driver given {@code driverProperties}, its connections
     * in auto-commit or not.
     */
    public HikariDataSource newPool(int poolSize, Map<String, String> driverProperties, boolean autoCommit) {
        Coordinates c = coordinates();
        HikariConfig config = new HikariConfig();
        config.setAutoCommit(autoCommit);
        driverProperties.forEach(config::addDataSourceProperty);
        config.setJdbcUrl(c.url);
        config.setUsername(c.user);
        config.setPassword(c.password);
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(10_000);
        config.setPoolName(id + "-" + UUID.randomUUID().toString().substring(0, 6));
        try {
            HikariDataSource ds = new HikariDataSource(config);
            try (Connection ignored = ds.getConnection()) {
                return ds;
            }
            catch (Exception ex) {
                ds.close();
                throw ex;
            }
        }
        catch (Exception ex) {
            return missing("cannot connect to " + c.url + ": " + ex.getMessage());
        }
    }

    /** @return a table prefix no other test run uses */
    public static String uniquePrefix() {
        return "lt" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
    }

    /** Drops the tables made under {@code prefix}. */
    public static void dropTables(DataSource ds, String prefix) {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + prefix + "held");
            st.execute("DROP TABLE IF EXISTS " + prefix + "node");
            st.execute("DROP TABLE IF EXISTS " + prefix + "wait");
            if (!c.getAutoCommit()) {
                c.commit();
            }
        }
        catch (Exception ex) {
            // leftovers carry a unique prefix and do no harm
        }
    }

    private Coordinates coordinates() {
        if (this == H2) {
            // the query cache the README recommends for the lock store's statements
            return new Coordinates("jdbc:h2:mem:locks-tests;DB_CLOSE_DELAY=-1;QUERY_CACHE_SIZE=64", "sa", "");
        }
        String url = System.getenv(envPrefix + "_URL");
        if (url != null && !url.isBlank()) {
            return new Coordinates(url, envOr(envPrefix + "_USER", this == MYSQL ? "root" : "postgres"),
                    envOr(envPrefix + "_PASSWORD", ""));
        }
        if (dockerAvailable()) {
            JdbcDatabaseContainer<?> container = container();
            return new Coordinates(container.getJdbcUrl(), container.getUsername(), container.getPassword());
        }
        return missing(envPrefix + "_URL is not set and Docker is not available");
    }

    private JdbcDatabaseContainer<?> container() {
        synchronized (TestDatabase.class) {
            if (this == MYSQL) {
                if (mysqlContainer == null) {
                    mysqlContainer = new MySQLContainer("mysql:8.4");
                    mysqlContainer.start();
                }
                return mysqlContainer;
            }
            if (postgresContainer == null) {
                postgresContainer = new PostgreSQLContainer("postgres:16-alpine");
                postgresContainer.start();
            }
            return postgresContainer;
        }
    }

    private static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        }
        catch (Throwable ex) {
            return false;
        }
    }

    private <T> T missing(String why) {
        String message = "DATABASE TESTS FOR " + id.toUpperCase(Locale.ROOT) + " DID NOT RUN: " + why;
        if (required().contains(id)) {
            throw new IllegalStateException(message + " (and LOCKS_REQUIRE_DATABASES requires " + id + ")");
        }
        if (REPORTED.add(this)) {
            System.err.println("\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n!!! " + message
                    + "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n");
        }
        throw new TestAbortedException(message);
    }

    private static Set<String> required() {
        String value = System.getenv("LOCKS_REQUIRE_DATABASES");
        if (value == null) {
            return Set.of();
        }
        return Arrays.stream(value.split(",")).map(s -> s.strip().toLowerCase(Locale.ROOT)).collect(Collectors.toSet());
    }

    private static String envOr(String name, String fallback) {
        String v = System.getenv(name);
        return v == null ? fallback : v;
    }

    private record Coordinates(String url, String user, String password) {
    }
}
