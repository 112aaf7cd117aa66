package dev.locks.bench;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import dev.locks.DefaultLockService;
import dev.locks.LockService;
import dev.locks.LockSettings;
import dev.locks.jdbc.ConnectorJTuning;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;

/**
 * One database prepared for a benchmark: two HikariCP pools of the same size (node A and node B),
 * this library's tables and both peers' tables under one unique prefix, and factories for the
 * contenders, each configured as its documentation recommends. Closing it closes what it made and
 * drops the tables.
 */
final class BenchDatabase implements AutoCloseable {

    /** Every contender gets pools of this size. */
    static final int POOL_SIZE = 10;

    private final TestDatabase database;

    private final String prefix = TestDatabase.uniquePrefix();

    private final HikariDataSource poolA;

    private final HikariDataSource poolB;

    private final List<AutoCloseable> toClose = new ArrayList<>();

    private final List<String> extraPrefixes = new ArrayList<>();

    private final List<String> extraPeerPrefixes = new ArrayList<>();

    /**
     * Connector/J's settings for every contender on MySQL/MariaDB: {@code recommended} (the default:
     * the ones this library's README recommends, {@link ConnectorJTuning#RECOMMENDED}) or
     * {@code defaults} (the driver's own).
     */
    static final String DRIVER_SETTINGS = System.getProperty("locks.bench.driverSettings", "recommended");

    BenchDatabase(TestDatabase database) {
        this.database = database;
        this.poolA = database.newPool(POOL_SIZE, driverProperties(database));
        HikariDataSource b;
        try {
            b = database.newPool(POOL_SIZE, driverProperties(database));
        }
        catch (RuntimeException ex) {
            poolA.close();
            throw ex;
        }
        this.poolB = b;
        try {
            JdbcLockService.builder(poolA).tablePrefix(prefix).createSchema(true).build().close();
            PeerTables.create(database, poolA, prefix);
        }
        catch (SQLException ex) {
            close();
            throw new IllegalStateException("Cannot create the peers' tables on " + database.id() + ": " + ex.getMessage(), ex);
        }
    }

    TestDatabase database() {
        return database;
    }

    HikariDataSource poolA() {
        return poolA;
    }

    HikariDataSource poolB() {
        return poolB;
    }

    /** @return the driver settings every contender's pools get on {@code database} */
    static Map<String, String> driverProperties(TestDatabase database) {
        if (database != TestDatabase.MYSQL || DRIVER_SETTINGS.equals("defaults")) {
            return Map.of();
        }
        if (!DRIVER_SETTINGS.equals("recommended")) {
            throw new IllegalArgumentException("locks.bench.driverSettings is 'recommended' or 'defaults', not '"
                    + DRIVER_SETTINGS + "'");
        }
        return ConnectorJTuning.RECOMMENDED;
    }

    /** The CPU time of this database's server processes, where they run on this machine. */
    ServerCpu serverCpu() {
        return ServerCpu.of(database, poolA.getJdbcUrl());
    }

    /** @return product and version, e.g. "MariaDB 10.11.11", and on MySQL/MariaDB the driver settings */
    String describe() {
        try (Connection c = poolA.getConnection()) {
            DatabaseMetaData meta = c.getMetaData();
            String settings = database == TestDatabase.MYSQL ? ", Connector/J " + DRIVER_SETTINGS : "";
            return meta.getDatabaseProductName() + " " + meta.getDatabaseProductVersion() + settings;
        }
        catch (SQLException ex) {
            return database.id();
        }
    }

    /** This library on {@code pool}, with defaults but for the node id. */
    JdbcLockService ours(String nodeId, DataSource pool) {
        return ours(pool, LockSettings.builder().nodeId(nodeId));
    }

    JdbcLockService ours(DataSource pool, LockSettings.Builder settings) {
        return ours(pool, prefix, settings);
    }

    /** This library on a table set of its own, e.g. one filled with many live locks. */
    JdbcLockService oursOnOwnTables(DataSource pool, String tablePrefix, LockSettings.Builder settings) {
        extraPrefixes.add(tablePrefix);
        JdbcLockService.builder(pool).tablePrefix(tablePrefix).createSchema(true).build().close();
        return ours(pool, tablePrefix, settings);
    }

    /** This library on tables made earlier with {@link #oursOnOwnTables}, e.g. as another node. */
    JdbcLockService oursOnTables(DataSource pool, String tablePrefix, LockSettings.Builder settings) {
        return ours(pool, tablePrefix, settings);
    }

    private JdbcLockService ours(DataSource pool, String tablePrefix, LockSettings.Builder settings) {
        JdbcLockService service = JdbcLockService.builder(pool).tablePrefix(tablePrefix).settings(settings.build()).build();
        toClose.add(service);
        return service;
    }

    /**
     * This library's service over {@link InPlaceGrantPrototype} on tables of its own (MariaDB only):
     * exclusive grants kept in place, designs that BENCHMARKS.md's twenty-third pass measures before
     * one is built.
     */
    LockService inPlacePrototype(InPlaceGrantPrototype.Design design, String nodeId, DataSource pool) {
        String tablePrefix = TestDatabase.uniquePrefix();
        JdbcLockService library = oursOnOwnTables(pool, tablePrefix, LockSettings.builder().nodeId(nodeId));
        InPlaceGrantPrototype store = new InPlaceGrantPrototype(design, pool, library.store(), tablePrefix);
        toClose.add(store::drop);
        DefaultLockService service = new DefaultLockService(store, LockSettings.builder().nodeId(nodeId).build(), null);
        toClose.add(service);
        return service;
    }

    /** ShedLock as its README recommends: JdbcTemplateLockProvider using the database's time. */
    LockProvider shedLock(DataSource pool) {
        return shedLock(pool, prefix);
    }

    /** ShedLock on a table of its own, e.g. one filled with many locked names. */
    LockProvider shedLockOnOwnTable(DataSource pool, String tablePrefix) throws SQLException {
        extraPeerPrefixes.add(tablePrefix);
        PeerTables.create(database, pool, tablePrefix);
        return shedLock(pool, tablePrefix);
    }

    private static LockProvider shedLock(DataSource pool, String tablePrefix) {
        return new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                .withJdbcTemplate(new JdbcTemplate(pool))
                .withTableName(PeerTables.shedLockTable(tablePrefix))
                .usingDbTime()
                .build());
    }

    /**
     * Spring Integration's JdbcLockRegistry over a DefaultLockRepository, with the defaults of its
     * reference guide; outside an application context the repository is given its transaction
     * manager and initialised by hand, as the context would.
     */
    JdbcLockRegistry registry(DataSource pool) {
        DefaultLockRepository repository = new DefaultLockRepository(pool);
        repository.setPrefix(PeerTables.integrationPrefix(prefix));
        repository.setTransactionManager(new DataSourceTransactionManager(pool));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        repository.start();
        toClose.add(repository::close);
        return new JdbcLockRegistry(repository);
    }

    @Override
    public void close() {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            }
            catch (Exception ex) {
                System.err.println("Closing " + toClose.get(i) + " failed: " + ex);
            }
        }
        toClose.clear();
        if (poolA != null && !poolA.isClosed()) {
            TestDatabase.dropTables(poolA, prefix);
            extraPrefixes.forEach(p -> TestDatabase.dropTables(poolA, p));
            PeerTables.drop(poolA, prefix);
            extraPeerPrefixes.forEach(p -> PeerTables.drop(poolA, p));
            poolA.close();
        }
        if (poolB != null) {
            poolB.close();
        }
    }
}
