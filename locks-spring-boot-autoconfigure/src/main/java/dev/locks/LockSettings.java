package dev.locks;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The engine's defaults and tuning, shared by every store. Immutable; start with {@link #builder()}.
 */
public final class LockSettings {

    private final String nodeId;

    private final String defaultTenant;

    private final Duration defaultLease;

    private final Duration defaultWait;

    private final Duration renewInterval;

    private final Duration renewalTick;

    private final Duration backoffInitial;

    private final double backoffMultiplier;

    private final Duration backoffMax;

    private final Duration backoffJitter;

    private final PathNormalizer pathNormalizer;

    private final int maxPathsPerRequest;

    /**
     * The most paths one request may name. A request's conflict check reads each path's subtree in a
     * branch of its own, twice: H2's parser recurses once per branch (700 short paths overflowed a
     * thread's stack), and each branch adds parameters (PostgreSQL takes at most 65,535).
     */
    public static final int MOST_PATHS_PER_REQUEST = 256;

    /**
     * The most paths and ancestors one request may cover together: each is a key in the conflict
     * check and a node row, so deep paths cost what many paths do.
     */
    public static final int MOST_KEYS_PER_REQUEST = 4096;

    /**
     * The most characters all paths of one request may have together: each is sent several times
     * (its row and its subtree bounds, for grants and waiters), and MySQL's packets are capped
     * ({@code max_allowed_packet}, 16 MB by default on MariaDB).
     */
    public static final int MOST_CHARACTERS_PER_REQUEST = 262_144;

    private final Duration purgeInterval;

    private final Duration slowWaitLog;

    private final List<LockListener> listeners;

    private final Duration waiterLease;

    private final Duration deadlockCheckInterval;

    private final Duration notifiedPollInterval;

    private final int maxPollsPerSecond;

    private final Duration shutdownWait;

    private LockSettings(Builder b) {
        this.nodeId = b.nodeId != null ? b.nodeId : defaultNodeId();
        this.defaultTenant = name("defaultTenant", "default tenant", b.defaultTenant);
        this.renewalTick = positive("renewalTick", b.renewalTick);
        this.defaultLease = positive("defaultLease", b.defaultLease);
        if (defaultLease.compareTo(shortestWatchedLease()) < 0) {
            throw new InvalidLockSettingException("defaultLease", "must be at least " + shortestWatchedLease().toMillis()
                    + " ms, three of the watchdog's " + renewalTick.toMillis() + " ms ticks, to be renewed in time; was "
                    + defaultLease.toMillis() + " ms");
        }
        this.defaultWait = notNegative("defaultWait", b.defaultWait);
        if (b.renewInterval != null && b.renewInterval.compareTo(renewalTick) < 0) {
            // every lock would be renewed at every tick: a write per held lock ten times a second
            throw new InvalidLockSettingException("renewInterval", "must be at least the watchdog's tick of "
                    + renewalTick.toMillis() + " ms, or unset for a third of each lease; was " + b.renewInterval.toMillis() + " ms");
        }
        this.renewInterval = b.renewInterval;
        this.backoffInitial = positive("backoffInitial", b.backoffInitial);
        if (b.backoffMultiplier < 1.0) {
            throw new InvalidLockSettingException("backoffMultiplier", "must be at least 1, was " + b.backoffMultiplier);
        }
        this.backoffMultiplier = b.backoffMultiplier;
        this.backoffMax = positive("backoffMax", b.backoffMax);
        this.backoffJitter = notNegative("backoffJitter", b.backoffJitter);
        if (b.maxPathLength < 1 || b.maxPathLength > PathNormalizer.LONGEST_MAX_LENGTH) {
            // a longer path would fail in the store as if the database were down, not as an invalid path
            throw new InvalidLockSettingException("maxPathLength", "must be between 1 and " + PathNormalizer.LONGEST_MAX_LENGTH
                    + ", was " + b.maxPathLength);
        }
        this.pathNormalizer = new PathNormalizer(b.caseSensitive, b.maxPathLength);
        this.maxPathsPerRequest = b.maxPathsPerRequest;
        this.purgeInterval = b.purgeInterval == null || b.purgeInterval.isZero() ? null
                : notNegative("purgeInterval", b.purgeInterval);
        this.slowWaitLog = b.slowWaitLog == null || b.slowWaitLog.isZero() ? null
                : notNegative("slowWaitLog", b.slowWaitLog);
        this.listeners = List.copyOf(b.listeners);
        this.waiterLease = positive("waiterLease", b.waiterLease);
        if (backoffMax.compareTo(waiterLease.dividedBy(4)) > 0) {
            // a waiter renews its queue record between sleeps: a longer sleep lets it lapse, and the
            // waiter queues again at the back, behind everyone who came meanwhile
            throw new InvalidLockSettingException("backoffMax", "must be at most a quarter of the queue lease ("
                    + waiterLease.dividedBy(4).toMillis() + " ms), so that a waiter keeps its place; was "
                    + backoffMax.toMillis() + " ms");
        }
        this.deadlockCheckInterval = positive("deadlockCheckInterval", b.deadlockCheckInterval);
        this.notifiedPollInterval = positive("notifiedPollInterval", b.notifiedPollInterval);
        if (b.maxPollsPerSecond < 1) {
            throw new InvalidLockSettingException("maxPollsPerSecond", "must be positive, was " + b.maxPollsPerSecond);
        }
        this.maxPollsPerSecond = b.maxPollsPerSecond;
        this.shutdownWait = notNegative("shutdownWait", b.shutdownWait);
    }

    private static Duration notNegative(String what, Duration d) {
        Objects.requireNonNull(d, what);
        if (d.isNegative()) {
            throw new InvalidLockSettingException(what, "must not be negative, was " + d);
        }
        return d;
    }

    /** A name stored with every lock (190 characters fit the schema's indexed columns), or the setting's failure. */
    private static String name(String setting, String what, String value) {
        try {
            return PathNormalizer.checkName(what, value, 190);
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidLockSettingException(setting, "is invalid: " + ex.getMessage());
        }
    }

    private static Duration positive(String what, Duration d) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
            throw new InvalidLockSettingException(what, "must be positive, was " + d);
        }
        return d;
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a host-and-process name, e.g. {@code web-1:4711} */
    public static String defaultNodeId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        }
        catch (Exception ex) {
            host = "unknown-host";
        }
        return host + ":" + ManagementFactory.getRuntimeMXBean().getPid();
    }

    /** @return this node's name, stored with every grant */
    public String nodeId() {
        return nodeId;
    }

    /** @return the tenant of requests that name none */
    public String defaultTenant() {
        return defaultTenant;
    }

    /** @return the lease of requests that set none */
    public Duration defaultLease() {
        return defaultLease;
    }

    /** @return the wait of requests that set none */
    public Duration defaultWait() {
        return defaultWait;
    }

    /**
     * @param lease a grant's lease
     * @return how often the watchdog renews it: the configured interval, or a third of the lease
     */
    public Duration renewIntervalFor(Duration lease) {
        Duration third = lease.dividedBy(3);
        return renewInterval == null || renewInterval.compareTo(third) > 0 ? third : renewInterval;
    }

    /** @return how often the watchdog looks for leases due for renewal */
    public Duration renewalTick() {
        return renewalTick;
    }

    /**
     * @return the shortest lease the watchdog can keep: three of its ticks, since it renews a third
     *         of the way in and may look only a tick later
     */
    public Duration shortestWatchedLease() {
        return renewalTick.multipliedBy(3);
    }

    /** @return first delay between polls of a waiting request */
    public Duration backoffInitial() {
        return backoffInitial;
    }

    /** @return growth of the delay between polls */
    public double backoffMultiplier() {
        return backoffMultiplier;
    }

    /** @return longest delay between polls */
    public Duration backoffMax() {
        return backoffMax;
    }

    /** @return random jitter added to each delay, so that waiters on many nodes spread out */
    public Duration backoffJitter() {
        return backoffJitter;
    }

    /** @return the path rules */
    public PathNormalizer pathNormalizer() {
        return pathNormalizer;
    }

    /** @return the most paths one request may name */
    public int maxPathsPerRequest() {
        return maxPathsPerRequest;
    }

    /** @return how often expired grants are purged from the store; null or zero for never */
    public Duration purgeInterval() {
        return purgeInterval;
    }

    /** @return a wait longer than this logs the holders once at INFO; null for never */
    public Duration slowWaitLog() {
        return slowWaitLog;
    }

    /** @return lease of a waiting request's queue record; a dead waiter stops blocking others after it */
    public Duration waiterLease() {
        return waiterLease;
    }

    /** @return how often a waiting owner that holds locks looks for a deadlock cycle */
    public Duration deadlockCheckInterval() {
        return deadlockCheckInterval;
    }

    /**
     * @return the delay between a waiter's polls while the store announces other nodes' releases
     *         (PostgreSQL's notifications): polling then only finds what sends no notice, such as
     *         a lease running out or a lockAtLeastFor ending
     */
    public Duration notifiedPollInterval() {
        return notifiedPollInterval;
    }

    /** @return the most store polls per second this node makes for all its waiting requests together */
    public int maxPollsPerSecond() {
        return maxPollsPerSecond;
    }

    /**
     * @return how long closing the service waits for work under the watchdog (annotated methods,
     *         {@code call}, Quartz's running locks) to release its locks, renewing them meanwhile
     */
    public Duration shutdownWait() {
        return shutdownWait;
    }

    /** @return listeners told about lost leases and other events */
    public List<LockListener> listeners() {
        return listeners;
    }

    /** Builds {@link LockSettings}. */
    public static final class Builder {

        private String nodeId;

        private String defaultTenant = "default";

        private Duration defaultLease = Duration.ofSeconds(30);

        private Duration defaultWait = Duration.ofSeconds(10);

        private Duration renewInterval;

        private Duration renewalTick = Duration.ofMillis(100);

        private Duration backoffInitial = Duration.ofMillis(2);

        private double backoffMultiplier = 1.5;

        private Duration backoffMax = Duration.ofMillis(10);

        private Duration backoffJitter = Duration.ofMillis(1);

        private boolean caseSensitive = true;

        private int maxPathLength = PathNormalizer.DEFAULT_MAX_LENGTH;

        private int maxPathsPerRequest = MOST_PATHS_PER_REQUEST;

        private Duration purgeInterval = Duration.ofMinutes(1);

        private Duration slowWaitLog = Duration.ofSeconds(5);

        private final List<LockListener> listeners = new ArrayList<>();

        private Duration waiterLease = Duration.ofSeconds(5);

        private Duration deadlockCheckInterval = Duration.ofMillis(500);

        private Duration notifiedPollInterval = Duration.ofMillis(100);

        private Duration shutdownWait = Duration.ofSeconds(10);

        private int maxPollsPerSecond = 500;

        private Builder() {
        }

        /** @param polls most store polls per second for all waiters of this node @return this builder */
        public Builder maxPollsPerSecond(int polls) {
            this.maxPollsPerSecond = polls;
            return this;
        }

        /** @param lease lease of a waiting request's queue record @return this builder */
        public Builder waiterLease(Duration lease) {
            this.waiterLease = lease;
            return this;
        }

        /**
         * @param interval delay between a waiter's polls while the store announces other nodes'
         *                 releases; the backoff applies otherwise
         * @return this builder
         */
        public Builder notifiedPollInterval(Duration interval) {
            this.notifiedPollInterval = interval;
            return this;
        }

        /** @param interval how often waiting owners that hold locks look for deadlocks @return this builder */
        public Builder deadlockCheckInterval(Duration interval) {
            this.deadlockCheckInterval = interval;
            return this;
        }

        /**
         * @param nodeId this node's name, up to 190 characters
         * @return this builder
         * @throws InvalidLockSettingException if the name is blank, too long or holds a control character
         */
        public Builder nodeId(String nodeId) {
            this.nodeId = name("nodeId", "node id", nodeId);
            return this;
        }

        /** @param tenant the default tenant @return this builder */
        public Builder defaultTenant(String tenant) {
            this.defaultTenant = tenant;
            return this;
        }

        /** @param lease the default lease @return this builder */
        public Builder defaultLease(Duration lease) {
            this.defaultLease = lease;
            return this;
        }

        /** @param wait the default wait @return this builder */
        public Builder defaultWait(Duration wait) {
            this.defaultWait = wait;
            return this;
        }

        /** @param interval renewal interval; null for a third of each lease @return this builder */
        public Builder renewInterval(Duration interval) {
            this.renewInterval = interval;
            return this;
        }

        /** @param tick how often the watchdog checks for due renewals @return this builder */
        public Builder renewalTick(Duration tick) {
            this.renewalTick = tick;
            return this;
        }

        /**
         * @param initial first delay between polls
         * @param multiplier growth per poll
         * @param max longest delay
         * @param jitter random jitter, not negative
         * @return this builder
         */
        public Builder backoff(Duration initial, double multiplier, Duration max, Duration jitter) {
            this.backoffInitial = initial;
            this.backoffMultiplier = multiplier;
            this.backoffMax = max;
            this.backoffJitter = jitter;
            return this;
        }

        /** @param caseSensitive false to fold path case as String.equalsIgnoreCase compares @return this builder */
        public Builder caseSensitive(boolean caseSensitive) {
            this.caseSensitive = caseSensitive;
            return this;
        }

        /** @param max longest normalised path @return this builder */
        public Builder maxPathLength(int max) {
            this.maxPathLength = max;
            return this;
        }

        /** @param max most paths per request, 1 to {@value LockSettings#MOST_PATHS_PER_REQUEST} @return this builder */
        public Builder maxPathsPerRequest(int max) {
            if (max < 1 || max > MOST_PATHS_PER_REQUEST) {
                // more would fail in the store as if the database were down (see MOST_PATHS_PER_REQUEST)
                throw new InvalidLockSettingException("maxPathsPerRequest", "must be between 1 and "
                        + MOST_PATHS_PER_REQUEST + ", was " + max);
            }
            this.maxPathsPerRequest = max;
            return this;
        }

        /** @param interval purge interval; null or zero to never purge, not negative @return this builder */
        public Builder purgeInterval(Duration interval) {
            this.purgeInterval = interval;
            return this;
        }

        /** @param threshold wait after which holders are logged; null or zero for never @return this builder */
        public Builder slowWaitLog(Duration threshold) {
            this.slowWaitLog = threshold;
            return this;
        }

        /**
         * @param wait how long closing the service waits for watched work to release its locks; zero
         *             to leave such locks to their leases at once, not negative
         * @return this builder
         */
        public Builder shutdownWait(Duration wait) {
            this.shutdownWait = wait;
            return this;
        }

        /** @param listener told about lost leases and other events @return this builder */
        public Builder listener(LockListener listener) {
            this.listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /** @return the settings */
        public LockSettings build() {
            return new LockSettings(this);
        }
    }
}
