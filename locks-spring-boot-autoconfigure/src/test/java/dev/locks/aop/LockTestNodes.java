package dev.locks.aop;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionManagerCustomizationAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import dev.locks.LockHandle;
import dev.locks.LockKind;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.autoconfigure.LocksAutoConfiguration;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;

/**
 * Application contexts standing for cluster nodes, each with its own connection pool to one shared
 * database and lock table, plus a plain "probe" lock service (a further node) that tests use to
 * look at what the nodes hold.
 */
public final class LockTestNodes implements AutoCloseable {

    private final TestDatabase database;

    private final String prefix = TestDatabase.uniquePrefix();

    private final List<HikariDataSource> pools = new ArrayList<>();

    private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

    private final DataSource probePool;

    private final JdbcLockService probe;

    /**
     * Creates the lock tables under a fresh prefix.
     *
     * @param database the database
     */
    public LockTestNodes(TestDatabase database) {
        this.database = database;
        this.probePool = pool(4);
        this.probe = JdbcLockService.builder(probePool).tablePrefix(prefix).createSchema(true)
                .settings(LockSettings.builder().nodeId("probe").build()).build();
    }

    /** @return the table prefix of this run */
    public String prefix() {
        return prefix;
    }

    /** @return the probe's pool, for test tables */
    public DataSource probePool() {
        return probePool;
    }

    /** @return the probe: a lock service on a node of its own */
    public JdbcLockService probe() {
        return probe;
    }

    /**
     * A new pool, closed with the nodes. Wrapped so that a context does not close it on shutdown.
     *
     * @param size connections
     * @return the pool
     */
    public DataSource pool(int size) {
        HikariDataSource pool = database.newPool(size);
        pools.add(pool);
        return new DelegatingDataSource(pool);
    }

    /**
     * Starts a node: the auto-configuration of locks and transactions over a pool of its own.
     *
     * @param name the node id
     * @param properties extra {@code key=value} properties
     * @param configurations the application's configuration classes
     * @return the running context
     */
    public ConfigurableApplicationContext node(String name, List<String> properties, Class<?>... configurations) {
        return start(pool(10), defaults(name, properties), configurations);
    }

    /**
     * Starts a node with no extra properties.
     *
     * @param name the node id
     * @param configurations the application's configuration classes
     * @return the running context
     */
    public ConfigurableApplicationContext node(String name, Class<?>... configurations) {
        return node(name, List.of(), configurations);
    }

    /**
     * Starts a context on the given DataSource.
     *
     * @param dataSource the application's DataSource
     * @param properties all properties
     * @param configurations the application's configuration classes
     * @return the running context
     */
    public ConfigurableApplicationContext start(DataSource dataSource, Map<String, String> properties,
            Class<?>... configurations) {
        return start(dataSource, properties, context -> { }, configurations);
    }

    /**
     * Starts a context on the given DataSource (the primary one) with further beans.
     *
     * @param dataSource the application's primary DataSource
     * @param properties all properties
     * @param beans registers further beans
     * @param configurations the application's configuration classes
     * @return the running context
     */
    public ConfigurableApplicationContext start(DataSource dataSource, Map<String, String> properties,
            Consumer<AnnotationConfigApplicationContext> beans, Class<?>... configurations) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        TestPropertyValues.of(properties).applyTo(context);
        context.registerBean("dataSource", DataSource.class, () -> dataSource, bd -> bd.setPrimary(true));
        beans.accept(context);
        if (configurations.length > 0) {
            context.register(configurations);
        }
        context.register(AutoConfigurations.class);
        try {
            context.refresh();
        }
        catch (RuntimeException ex) {
            context.close();
            throw ex;
        }
        contexts.add(context);
        return context;
    }

    /**
     * @param name the node id
     * @param extra extra {@code key=value} properties
     * @return the properties every node gets: this run's tables, the node id
     */
    public Map<String, String> defaults(String name, List<String> extra) {
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("locks.jdbc.table-prefix", prefix);
        properties.put("locks.jdbc.initialize-schema", "never");
        properties.put("locks.node-id", name);
        for (String pair : extra) {
            int eq = pair.indexOf('=');
            properties.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
        return properties;
    }

    /**
     * @param tenant the tenant, or null
     * @param path a path
     * @return true if some node holds a lock that conflicts with an exclusive lock on the path
     */
    public boolean isLocked(String tenant, String path) {
        LockRequest.Builder request = LockRequest.paths(path).exclusive();
        if (tenant != null) {
            request.tenant(tenant);
        }
        return !isFree(request.build());
    }

    /**
     * @param path a path in the default tenant
     * @return true if some node holds a lock that conflicts with an exclusive lock on the path
     */
    public boolean isLocked(String path) {
        return isLocked(null, path);
    }

    /**
     * @param request a request
     * @return true if the probe could take it now (it gives it back at once)
     */
    public boolean isFree(LockRequest request) {
        Optional<LockHandle> handle = probe.tryAcquire(request);
        handle.ifPresent(LockHandle::release);
        return handle.isPresent();
    }

    /**
     * @param kind singleton or semaphore
     * @param tenant the tenant, or null
     * @param name the name
     * @return how many grants hold it now
     */
    public int holders(LockKind kind, String tenant, String name) {
        return probe.holders(kind, tenant, name).size();
    }

    @Override
    public void close() {
        for (int i = contexts.size() - 1; i >= 0; i--) {
            contexts.get(i).close();
        }
        probe.close();
        TestDatabase.dropTables(probePool, prefix);
        pools.forEach(HikariDataSource::close);
    }

    /** The auto-configurations a node runs, in Boot's order. */
    @ImportAutoConfiguration({ TransactionManagerCustomizationAutoConfiguration.class,
            DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
            LocksAutoConfiguration.class })
    static class AutoConfigurations {
    }
}
