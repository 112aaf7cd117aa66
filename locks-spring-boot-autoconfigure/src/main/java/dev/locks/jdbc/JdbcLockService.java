package dev.locks.jdbc;

import java.util.Objects;

import javax.sql.DataSource;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.scheduling.TaskScheduler;

import dev.locks.DefaultLockService;
import dev.locks.LockSettings;

/**
 * The lock service over a relational database, for plain Java without Spring Boot:
 *
 * <pre>{@code
 * JdbcLockService locks = JdbcLockService.builder(dataSource)
 *         .nodeId("web-1")
 *         .tablePrefix("locks_")
 *         .createSchema(true)
 *         .build();
 * }</pre>
 *
 * The dialect (MySQL/MariaDB, PostgreSQL, H2) is detected from the connection. Close the service on
 * shutdown to release what this node holds (locks of work still running after the shutdown wait are
 * left to their leases).
 */
public class JdbcLockService extends DefaultLockService {

    private static final Logger log = LoggerFactory.getLogger(JdbcLockService.class);

    private final JdbcLockStore store;

    private JdbcLockService(JdbcLockStore store, LockSettings settings, TaskScheduler scheduler) {
        super(store, settings, scheduler);
        this.store = store;
    }

    /**
     * @param dataSource the DataSource that holds (or will hold) the lock tables; a
     *                   {@link TransactionAwareDataSourceProxy} is replaced by its target, since the
     *                   store commits on connections of its own
     * @return a builder
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** @return the store, for operations such as force-release */
    public JdbcLockStore store() {
        return store;
    }

    /** Builds a {@link JdbcLockService}. */
    public static final class Builder {

        private final DataSource dataSource;

        private LockSettings.Builder settings = LockSettings.builder();

        private LockSettings builtSettings;

        private String tablePrefix = "locks_";

        private boolean createSchema;

        private SqlDialect dialect;

        private TaskScheduler scheduler;

        private boolean releaseNotifications = true;

        private boolean durableReleases;

        private Builder(DataSource dataSource) {
            this.dataSource = ownConnections(Objects.requireNonNull(dataSource, "dataSource"));
        }

        /**
         * The proxy hands out the caller's transactional connection, and the store's commits would
         * commit the caller's work with it; its target is also what a transaction manager binds, so
         * that a release can join the caller's transaction.
         */
        private static DataSource ownConnections(DataSource dataSource) {
            DataSource target = dataSource;
            while (target instanceof TransactionAwareDataSourceProxy proxy && proxy.getTargetDataSource() != null) {
                target = proxy.getTargetDataSource();
            }
            if (target != dataSource) {
                log.info("The lock store uses {}, the target of TransactionAwareDataSourceProxy {}: it needs"
                        + " connections of its own, outside the caller's transaction", target, dataSource);
            }
            return target;
        }

        /** @param nodeId this node's name, shown to other nodes @return this builder */
        public Builder nodeId(String nodeId) {
            settings.nodeId(nodeId);
            return this;
        }

        /** @param prefix prefix of the table names (default {@code locks_}) @return this builder */
        public Builder tablePrefix(String prefix) {
            this.tablePrefix = new LockTables(prefix).prefix();
            return this;
        }

        /**
         * @param create create the tables if missing (default false); without, {@link #build()} checks
         *               that they can be read
         * @return this builder
         */
        public Builder createSchema(boolean create) {
            this.createSchema = create;
            return this;
        }

        /**
         * @param dialect the dialect, instead of detecting it: {@link MySqlDialect} for a MariaDB server
         *                behind a proxy that does not pass compound statements through, or
         *                {@link MariaDbDialect} for one whose proxy hides the server's version. It must
         *                speak the database's SQL: {@link #build} fails otherwise.
         * @return this builder
         */
        public Builder dialect(SqlDialect dialect) {
            this.dialect = dialect;
            return this;
        }

        /**
         * @param enabled false to keep no connection listening for other nodes' releases (PostgreSQL);
         *                waiters then poll. Default true.
         * @return this builder
         */
        public Builder releaseNotifications(boolean enabled) {
            this.releaseNotifications = enabled;
            return this;
        }

        /**
         * @param durable true to make every release wait until its commit is on disk; by default a
         *                release on PostgreSQL does not ({@link JdbcLockStore#setDurableReleases})
         * @return this builder
         */
        public Builder durableReleases(boolean durable) {
            this.durableReleases = durable;
            return this;
        }

        /** @param scheduler runs the watchdog and purge; default a private daemon thread @return this builder */
        public Builder scheduler(TaskScheduler scheduler) {
            this.scheduler = scheduler;
            return this;
        }

        /**
         * Tuning beyond the node id: leases, waits, backoff, paths, listeners.
         *
         * @param settings the settings (its node id wins over {@link #nodeId})
         * @return this builder
         */
        public Builder settings(LockSettings settings) {
            this.builtSettings = settings;
            return this;
        }

        /**
         * @return the service, with its schema created if asked, or else checked; what the pool's driver
         *         or database settings cost it is logged once at INFO ({@link SqlDialect#tuningAdvice})
         * @throws IllegalStateException if the dialect was not given and the database is none the
         *         library supports, or was given and speaks another database's SQL, or if the lock
         *         tables were not to be created and the database answers that they cannot be read
         */
        public JdbcLockService build() {
            SqlDialect d = dialect != null ? dialect : SqlDialect.detect(dataSource);
            d.inspect(dataSource, dialect != null);
            JdbcLockStore store = new JdbcLockStore(dataSource, d, tablePrefix);
            store.setReleaseNotifications(releaseNotifications);
            store.setDurableReleases(durableReleases);
            if (createSchema) {
                store.createSchema();
            }
            else {
                store.checkSchema();
            }
            return new JdbcLockService(store, builtSettings != null ? builtSettings : settings.build(), scheduler);
        }
    }
}
