package dev.locks.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

import dev.locks.LockHandle;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.testing.TestDatabase;

/**
 * Base of the tests that run against every database: one table prefix per class, a fresh tenant
 * per test, and helpers that start extra "nodes" (services on their own connection pools).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LockServiceContract {

    protected String prefix;

    protected String tenant;

    protected JdbcLockService locks;

    private HikariDataSource mainPool;

    private final List<AutoCloseable> toClose = new ArrayList<>();

    /** @return the database under test: by default that of the enclosing class's {@link ContractsOn} */
    protected TestDatabase database() {
        ContractsOn target = contractsOn();
        if (target == null) {
            throw new IllegalStateException(getClass().getName() + " names no database: override database() or"
                    + " annotate its enclosing class with @ContractsOn");
        }
        return target.value();
    }

    /** @return the dialect the nodes use, or null to detect it from the connection */
    protected SqlDialect dialect() {
        ContractsOn target = contractsOn();
        return target == null || target.dialect() == SqlDialect.class ? null
                : org.springframework.beans.BeanUtils.instantiateClass(target.dialect());
    }

    /** @return the driver settings of every pool, as data source properties */
    protected Map<String, String> driverProperties() {
        ContractsOn target = contractsOn();
        return target != null && target.serverPrepared() ? ConnectorJTuning.RECOMMENDED : Map.of();
    }

    private ContractsOn contractsOn() {
        Class<?> enclosing = getClass().getEnclosingClass();
        return enclosing != null ? enclosing.getAnnotation(ContractsOn.class) : null;
    }

    @BeforeAll
    void createSchema() {
        prefix = TestDatabase.uniquePrefix();
        mainPool = database().newPool(16, driverProperties());
        JdbcLockService.builder(mainPool).tablePrefix(prefix).createSchema(true).build().close();
    }

    @BeforeEach
    void startNode() {
        tenant = "t-" + UUID.randomUUID();
        locks = node("node-a", mainPool);
    }

    @AfterEach
    void stopNodes() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        toClose.clear();
    }

    @AfterAll
    void dropSchema() {
        if (mainPool != null) {
            TestDatabase.dropTables(mainPool, prefix);
            mainPool.close();
        }
    }

    /** A service standing for another node: its own pool, its own node id. */
    protected JdbcLockService newNode(String nodeId) {
        HikariDataSource pool = database().newPool(8, driverProperties());
        toClose.add(pool);
        return node(nodeId, pool);
    }

    /** A pool closed after the test. */
    protected HikariDataSource newPool(int size) {
        return closeAfterTest(database().newPool(size, driverProperties()));
    }

    /** Closes {@code resource} after the test, after what was registered later. */
    protected <T extends AutoCloseable> T closeAfterTest(T resource) {
        toClose.add(resource);
        return resource;
    }

    protected JdbcLockService node(String nodeId, javax.sql.DataSource pool) {
        return node(nodeId, pool, LockSettings.builder().nodeId(nodeId).slowWaitLog(null));
    }

    protected JdbcLockService node(String nodeId, javax.sql.DataSource pool, LockSettings.Builder settings) {
        JdbcLockService.Builder builder = JdbcLockService.builder(pool).tablePrefix(prefix).settings(settings.build());
        SqlDialect dialect = dialect();
        JdbcLockService service = (dialect != null ? builder.dialect(dialect) : builder).build();
        toClose.add(service);
        return service;
    }

    protected HikariDataSource mainPool() {
        return mainPool;
    }

    protected LockRequest.Builder x(String... paths) {
        return LockRequest.paths(paths).exclusive().tenant(tenant);
    }

    protected LockRequest.Builder s(String... paths) {
        return LockRequest.paths(paths).shared().tenant(tenant);
    }

    protected Optional<LockHandle> tryX(String... paths) {
        return locks.tryAcquire(x(paths).build());
    }

    protected static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** The store's grant behind a handle, for tests that go around the API. */
    protected static dev.locks.store.Grant grantOf(LockHandle h) {
        try {
            var method = h.getClass().getDeclaredMethod("grant");
            method.setAccessible(true);
            return (dev.locks.store.Grant) method.invoke(h);
        }
        catch (ReflectiveOperationException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
