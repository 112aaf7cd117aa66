package dev.locks.testing;

import java.util.ArrayList;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;

import dev.locks.DefaultLockService;
import dev.locks.LockSettings;
import dev.locks.jdbc.JdbcLockStore;
import dev.locks.jdbc.SqlDialect;
import dev.locks.store.LockStore;

/**
 * A JDBC lock store on tables of its own in the in-memory H2 database, for tests that put a service
 * of their own over it. Closing it closes those services, drops the tables and closes the pool.
 */
public final class H2Store implements AutoCloseable {

    private final HikariDataSource pool;

    private final String prefix;

    private final JdbcLockStore store;

    private final List<DefaultLockService> services = new ArrayList<>();

    public H2Store() {
        prefix = TestDatabase.uniquePrefix();
        pool = TestDatabase.H2.newPool(4);
        store = new JdbcLockStore(pool, SqlDialect.detect(pool), prefix);
        store.createSchema();
    }

    public JdbcLockStore store() {
        return store;
    }

    /** Settings for a test's node: no slow-wait log and no purge, which would only add noise. */
    public static LockSettings.Builder quietNode(String nodeId) {
        return LockSettings.builder().nodeId(nodeId).slowWaitLog(null).purgeInterval(null);
    }

    /**
     * @param over this store, wrapped as the test likes
     * @return a service over it, closed with this
     */
    public DefaultLockService service(LockStore over, LockSettings settings) {
        DefaultLockService service = new DefaultLockService(over, settings, null);
        services.add(service);
        return service;
    }

    @Override
    public void close() {
        services.forEach(DefaultLockService::close);
        TestDatabase.dropTables(pool, prefix);
        pool.close();
    }
}
