package dev.locks.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

import dev.locks.aop.BeanFactoryLockOperationSourceAdvisor;

/**
 * Settings of the lock service and the lock annotations, under {@code locks.*}.
 */
@ConfigurationProperties("locks")
public class LocksProperties {

    /**
     * Whether to set up the lock service and the lock annotations.
     */
    private boolean enabled = true;

    /**
     * Name of this node, stored with every lock it holds and shown to other nodes in timeouts and
     * holder lists. Defaults to the host name and process id.
     */
    private String nodeId;

    /**
     * Tenant of locks that name none.
     */
    private String defaultTenant = "default";

    /**
     * Lease of a lock whose request or annotation sets none. Locks held through the annotations or
     * LockService.call are renewed while the work runs. At least 300ms, three of the watchdog's ticks.
     */
    private Duration defaultLease = Duration.ofSeconds(30);

    /**
     * How long a request waits for a busy lock when its request or annotation sets no wait.
     */
    private Duration defaultWait = Duration.ofSeconds(10);

    /**
     * How often held leases are renewed. Defaults to a third of each lease; longer values are capped
     * at a third of the lease. At least 100ms, the watchdog's tick.
     */
    private Duration renewInterval;

    /**
     * How often expired lock rows are deleted from the lock table. Zero to never purge.
     */
    private Duration purgeInterval = Duration.ofMinutes(1);

    /**
     * How long closing the lock service waits for work still holding locks under the watchdog
     * (annotated methods, call, Quartz jobs) to end; locks of work still running after it are left to
     * their leases, not released. Zero to leave them at once.
     */
    private Duration shutdownWait = Duration.ofSeconds(10);

    private final Backoff backoff = new Backoff();

    private final Paths paths = new Paths();

    private final Jdbc jdbc = new Jdbc();

    private final Aop aop = new Aop();

    private final Log log = new Log();

    private final Waiting waiting = new Waiting();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getNodeId() {
        return nodeId;
    }

    public void setNodeId(String nodeId) {
        this.nodeId = nodeId;
    }

    public String getDefaultTenant() {
        return defaultTenant;
    }

    public void setDefaultTenant(String defaultTenant) {
        this.defaultTenant = defaultTenant;
    }

    public Duration getDefaultLease() {
        return defaultLease;
    }

    public void setDefaultLease(Duration defaultLease) {
        this.defaultLease = defaultLease;
    }

    public Duration getDefaultWait() {
        return defaultWait;
    }

    public void setDefaultWait(Duration defaultWait) {
        this.defaultWait = defaultWait;
    }

    public Duration getRenewInterval() {
        return renewInterval;
    }

    public void setRenewInterval(Duration renewInterval) {
        this.renewInterval = renewInterval;
    }

    public Duration getPurgeInterval() {
        return purgeInterval;
    }

    public void setPurgeInterval(Duration purgeInterval) {
        this.purgeInterval = purgeInterval;
    }

    public Duration getShutdownWait() {
        return shutdownWait;
    }

    public void setShutdownWait(Duration shutdownWait) {
        this.shutdownWait = shutdownWait;
    }

    public Backoff getBackoff() {
        return backoff;
    }

    public Paths getPaths() {
        return paths;
    }

    public Jdbc getJdbc() {
        return jdbc;
    }

    public Aop getAop() {
        return aop;
    }

    public Log getLog() {
        return log;
    }

    public Waiting getWaiting() {
        return waiting;
    }

    /** How a waiting request polls a lock held on another node. */
    public static class Backoff {

        /**
         * First delay between polls of a waiting request. A release on the same node wakes its
         * waiters at once.
         */
        private Duration initial = Duration.ofMillis(2);

        /**
         * Growth of the delay between polls.
         */
        private double multiplier = 1.5;

        /**
         * Longest delay between polls. It bounds how late a waiter on another node notices a
         * release where the database cannot notify (MySQL/MariaDB); the node's total poll rate
         * stays capped by max-polls-per-second however many threads wait. At most a quarter of
         * locks.waiting.queue-lease, so that a waiter renews its place in the queue in time.
         */
        private Duration max = Duration.ofMillis(10);

        /**
         * Random jitter added to each delay, so that waiters on many nodes spread out.
         */
        private Duration jitter = Duration.ofMillis(1);

        public Duration getInitial() {
            return initial;
        }

        public void setInitial(Duration initial) {
            this.initial = initial;
        }

        public double getMultiplier() {
            return multiplier;
        }

        public void setMultiplier(double multiplier) {
            this.multiplier = multiplier;
        }

        public Duration getMax() {
            return max;
        }

        public void setMax(Duration max) {
            this.max = max;
        }

        public Duration getJitter() {
            return jitter;
        }

        public void setJitter(Duration jitter) {
            this.jitter = jitter;
        }
    }

    /** Path rules. */
    public static class Paths {

        /**
         * Whether paths are case-sensitive. When false, paths equal under String.equalsIgnoreCase
         * are the same lock, /A and /a too.
         */
        private boolean caseSensitive = true;

        /**
         * Longest path, in characters, after normalisation. At most 5000, which every store can hold.
         */
        private int maxLength = 4000;

        public boolean isCaseSensitive() {
            return caseSensitive;
        }

        public void setCaseSensitive(boolean caseSensitive) {
            this.caseSensitive = caseSensitive;
        }

        public int getMaxLength() {
            return maxLength;
        }

        public void setMaxLength(int maxLength) {
            this.maxLength = maxLength;
        }
    }

    /** The lock tables. */
    public static class Jdbc {

        /**
         * Prefix of the lock table names.
         */
        private String tablePrefix = "locks_";

        /**
         * When to create the lock tables at start-up: 'embedded' (only in an in-memory database such
         * as jdbc:h2:mem:, not in a file or server H2), 'always' or 'never' (tables made by Flyway or
         * Liquibase from the shipped scripts). Where they are not created, the start fails if the
         * database answers that they are missing.
         */
        private DatabaseInitializationMode initializeSchema = DatabaseInitializationMode.EMBEDDED;

        /**
         * Name of the DataSource bean that holds the lock tables, when it is not the application's
         * only or primary DataSource. Locks released inside a transaction on this DataSource commit
         * together with it; the annotations' locks inside a transaction on any other DataSource are
         * released right after it ends, and a release by hand there is made at once.
         */
        private String dataSourceBean;

        /**
         * The lock store's SQL, when it must not be detected from the connection: 'mysql' to run
         * MariaDB grants as a transaction of plain statements (a proxy that does not pass compound
         * statements through), 'mariadb' for a MariaDB server whose version a proxy hides,
         * 'postgresql' or 'h2'. Start-up fails if it is another database's.
         */
        private Dialect dialect;

        /**
         * Keep one connection listening for other nodes' releases where the database can notify
         * (PostgreSQL LISTEN/NOTIFY), so that waiters get a freed lock at once. Off, they poll. Skipped
         * automatically for HikariCP pools of fewer than 3 connections.
         */
        private boolean releaseNotifications = true;

        /**
         * Whether a release waits until its commit is on disk. Off, a release on PostgreSQL made outside
         * your transaction, on a pool in auto-commit, commits without waiting for the WAL flush; other
         * databases commit releases as the server is configured to. Exclusion never depends on it, and
         * a release lost in a database crash leaves its lock held until the lease ends.
         */
        private boolean durableReleases;

        public boolean isDurableReleases() {
            return durableReleases;
        }

        public void setDurableReleases(boolean durableReleases) {
            this.durableReleases = durableReleases;
        }

        public boolean isReleaseNotifications() {
            return releaseNotifications;
        }

        public void setReleaseNotifications(boolean releaseNotifications) {
            this.releaseNotifications = releaseNotifications;
        }

        public String getTablePrefix() {
            return tablePrefix;
        }

        public void setTablePrefix(String tablePrefix) {
            this.tablePrefix = tablePrefix;
        }

        public DatabaseInitializationMode getInitializeSchema() {
            return initializeSchema;
        }

        public void setInitializeSchema(DatabaseInitializationMode initializeSchema) {
            this.initializeSchema = initializeSchema;
        }

        public Dialect getDialect() {
            return dialect;
        }

        public void setDialect(Dialect dialect) {
            this.dialect = dialect;
        }

        public String getDataSourceBean() {
            return dataSourceBean;
        }

        public void setDataSourceBean(String dataSourceBean) {
            this.dataSourceBean = dataSourceBean;
        }
    }

    /** The SQL a lock store can speak ({@code locks.jdbc.dialect}). */
    public enum Dialect {

        /** MySQL's statements, on MySQL or MariaDB. */
        MYSQL,

        /** MariaDB's compound statements: a grant in one round trip. */
        MARIADB,

        /** PostgreSQL. */
        POSTGRESQL,

        /** H2. */
        H2
    }

    /** The lock annotations. */
    public static class Aop {

        /**
         * Order of the lock advisor among other advisors. The default, {@code LOWEST_PRECEDENCE - 1000},
         * puts it outside @Transactional and @Cacheable (both lowest precedence), so that a lock is
         * taken before the transaction begins and freed as it commits or rolls back.
         */
        private int order = BeanFactoryLockOperationSourceAdvisor.DEFAULT_ORDER;

        public int getOrder() {
            return order;
        }

        public void setOrder(int order) {
            this.order = order;
        }
    }

    /** Logging. */
    public static class Log {

        /**
         * A wait for a lock longer than this logs the holders once at INFO. 0 for never.
         */
        private Duration slowWait = Duration.ofSeconds(5);

        public Duration getSlowWait() {
            return slowWait;
        }

        public void setSlowWait(Duration slowWait) {
            this.slowWait = slowWait;
        }
    }

    /** The fair wait queue, the per-node poll budget and deadlock detection. */
    public static class Waiting {

        /**
         * Lease of a waiting request's queue record, renewed while it waits. A waiter that died stops
         * blocking later requests when it lapses.
         */
        private Duration queueLease = Duration.ofSeconds(5);

        /**
         * The most polls per second this node makes for all its waiting requests together.
         */
        private int maxPollsPerSecond = 500;

        /**
         * How often a waiting owner that already holds locks looks for a deadlock cycle.
         */
        private Duration deadlockCheckInterval = Duration.ofMillis(500);

        /**
         * Delay between a waiting request's polls while the database announces other nodes'
         * releases (PostgreSQL's notifications). Polling then only finds what sends no notice: a
         * lease running out, a lock-at-least-for ending. The backoff applies where it cannot.
         */
        private Duration notifiedPollInterval = Duration.ofMillis(100);

        public Duration getQueueLease() {
            return queueLease;
        }

        public void setQueueLease(Duration queueLease) {
            this.queueLease = queueLease;
        }

        public int getMaxPollsPerSecond() {
            return maxPollsPerSecond;
        }

        public void setMaxPollsPerSecond(int maxPollsPerSecond) {
            this.maxPollsPerSecond = maxPollsPerSecond;
        }

        public Duration getDeadlockCheckInterval() {
            return deadlockCheckInterval;
        }

        public void setDeadlockCheckInterval(Duration deadlockCheckInterval) {
            this.deadlockCheckInterval = deadlockCheckInterval;
        }

        public Duration getNotifiedPollInterval() {
            return notifiedPollInterval;
        }

        public void setNotifiedPollInterval(Duration notifiedPollInterval) {
            this.notifiedPollInterval = notifiedPollInterval;
        }
    }
}
