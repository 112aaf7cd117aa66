package dev.locks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * What to lock: a tenant, one or more paths (or a singleton or semaphore name), a mode, a lease and
 * how long to wait. A request is granted all-or-nothing.
 *
 * <pre>{@code
 * LockRequest.paths("/Shared/marketing/Dallas", "/Shared/QA").exclusive().tenant("acme")
 *         .lease(Duration.ofMinutes(2)).waitAtMost(Duration.ofSeconds(10)).build();
 * LockRequest.singleton("nightly-report").lockAtLeastFor(Duration.ofSeconds(5)).build();
 * LockRequest.semaphore("exports:acme", 10).waitAtMost(Duration.ofSeconds(30)).build();
 * }</pre>
 *
 * <p>Unset tenant, lease and wait take the service's defaults. Paths are normalised by the service
 * that receives the request.
 */
public final class LockRequest {

    /** Upper bound for leases and waits: longer values are taken for a unit mistake. */
    public static final Duration MAX_DURATION = Duration.ofDays(7);

    private final LockKind kind;

    private final List<String> keys;

    private final LockMode mode;

    private final String tenant;

    private final Duration lease;

    private final Duration waitAtMost;

    private final Duration lockAtLeastFor;

    private final int permits;

    private LockRequest(Builder b) {
        this.kind = b.kind;
        this.keys = List.copyOf(b.keys);
        this.mode = b.mode;
        this.tenant = b.tenant;
        this.lease = b.lease;
        this.waitAtMost = b.waitAtMost;
        this.lockAtLeastFor = b.lockAtLeastFor;
        this.permits = b.permits;
    }

    /**
     * Starts a request for hierarchical path locks, exclusive unless {@link Builder#shared()} is called.
     *
     * @param paths absolute paths; overlapping ones are merged
     * @return a builder
     */
    public static Builder paths(String... paths) {
        Objects.requireNonNull(paths, "paths");
        return paths(List.of(nullSafe(paths)));
    }

    /**
     * Starts a request for hierarchical path locks, exclusive unless {@link Builder#shared()} is called.
     *
     * @param paths absolute paths; overlapping ones are merged
     * @return a builder
     */
    public static Builder paths(Collection<String> paths) {
        Objects.requireNonNull(paths, "paths");
        return new Builder(LockKind.PATH, new ArrayList<>(paths));
    }

    /**
     * Starts a request for a named cluster singleton: one holder per name across the cluster.
     *
     * @param name the singleton's name, e.g. {@code nightly-report}
     * @return a builder
     */
    public static Builder singleton(String name) {
        return new Builder(LockKind.SINGLETON, nameList(name));
    }

    /**
     * Starts a request for one permit of a named counting semaphore.
     *
     * @param name the semaphore's name, e.g. {@code exports} or {@code exports:acme}
     * @param max how many permits may be held at once across the cluster; a live permit whose holder
     *            asked for a smaller max makes the smaller one apply
     * @return a builder
     */
    public static Builder semaphore(String name, int max) {
        if (max < 1) {
            throw new IllegalArgumentException("A semaphore needs at least 1 permit, was " + max + " for " + MessageText.quoted(name));
        }
        Builder builder = new Builder(LockKind.SEMAPHORE, nameList(name));
        builder.permits = max;
        return builder;
    }

    private static List<String> nameList(String name) {
        List<String> list = new ArrayList<>(1);
        list.add(name);
        return list;
    }

    private static String[] nullSafe(String[] paths) {
        for (String p : paths) {
            if (p == null) {
                throw new InvalidLockPathException(null, "path is null");
            }
        }
        return paths;
    }

    /** @return what is locked */
    public LockKind kind() {
        return kind;
    }

    /** @return the paths as given (for a singleton or semaphore: its one name) */
    public List<String> keys() {
        return keys;
    }

    /** @return the mode; singletons are exclusive and semaphore permits shared */
    public LockMode mode() {
        return mode;
    }

    /** @return the tenant, or null for the service's default */
    public String tenant() {
        return tenant;
    }

    /** @return the lease, or null for the service's default */
    public Duration lease() {
        return lease;
    }

    /** @return the longest wait, or null for the service's default */
    public Duration waitAtMost() {
        return waitAtMost;
    }

    /** @return for singletons, how long the lock is kept after an early release; zero otherwise */
    public Duration lockAtLeastFor() {
        return lockAtLeastFor;
    }

    /** @return for semaphores, the number of permits; 0 otherwise */
    public int permits() {
        return permits;
    }

    /**
     * A copy with another wait, used by {@code tryAcquire} and the annotations.
     *
     * @param wait the new wait
     * @return a request equal to this one but for the wait
     */
    public LockRequest withWaitAtMost(Duration wait) {
        Builder b = toBuilder();
        b.waitAtMost(wait);
        return b.build();
    }

    private Builder toBuilder() {
        Builder b = new Builder(kind, new ArrayList<>(keys));
        b.mode = mode;
        b.tenant = tenant;
        b.lease = lease;
        b.waitAtMost = waitAtMost;
        b.lockAtLeastFor = lockAtLeastFor;
        b.permits = permits;
        return b;
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder();
        switch (kind) {
            case PATH -> s.append(mode).append(' ').append(MessageText.paths(keys));
            case SINGLETON -> s.append("singleton ").append(MessageText.quoted(keys.get(0)));
            case SEMAPHORE -> s.append("semaphore ").append(MessageText.quoted(keys.get(0))).append(" (max ").append(permits)
                    .append(')');
        }
        if (tenant != null) {
            s.append(" in tenant ").append(MessageText.quoted(tenant));
        }
        return s.toString();
    }

    /** Builds a {@link LockRequest}; start with {@link LockRequest#paths}, {@code singleton} or {@code semaphore}. */
    public static final class Builder {

        private final LockKind kind;

        private final List<String> keys;

        private LockMode mode;

        private String tenant;

        private Duration lease;

        private Duration waitAtMost;

        private Duration lockAtLeastFor = Duration.ZERO;

        private int permits;

        private Builder(LockKind kind, List<String> keys) {
            this.kind = kind;
            this.keys = keys;
            this.mode = kind == LockKind.SEMAPHORE ? LockMode.SHARED : LockMode.EXCLUSIVE;
        }

        /** @return this builder, asking for an exclusive (write) lock */
        public Builder exclusive() {
            return mode(LockMode.EXCLUSIVE);
        }

        /** @return this builder, asking for a shared (read) lock */
        public Builder shared() {
            return mode(LockMode.SHARED);
        }

        /**
         * @param mode the lock mode; only path locks can be shared
         * @return this builder
         */
        public Builder mode(LockMode mode) {
            Objects.requireNonNull(mode, "mode");
            if (kind != LockKind.PATH && mode != this.mode) {
                throw new IllegalArgumentException("A " + kind.name().toLowerCase() + " has no " + mode + " mode");
            }
            this.mode = mode;
            return this;
        }

        /**
         * @param tenant the tenant whose tree the paths belong to
         * @return this builder
         */
        public Builder tenant(String tenant) {
            this.tenant = PathNormalizer.checkName("tenant", tenant, 190);
            return this;
        }

        /**
         * How long the grant lives unless renewed; for singletons this is {@code lockAtMostFor}.
         *
         * @param lease a positive duration of at most {@link #MAX_DURATION}
         * @return this builder
         */
        public Builder lease(Duration lease) {
            this.lease = checkDuration("lease", lease, false);
            return this;
        }

        /**
         * @param wait how long {@code acquire} may wait for conflicting locks; zero to fail at once
         * @return this builder
         */
        public Builder waitAtMost(Duration wait) {
            this.waitAtMost = checkDuration("waitAtMost", wait, true);
            return this;
        }

        /** @return this builder, failing at once when busy */
        public Builder noWait() {
            return waitAtMost(Duration.ZERO);
        }

        /**
         * Keeps a singleton locked for at least this long after it was taken, even if released
         * earlier, so that a node whose clock fires a little later does not run the same job again.
         * Without a {@link #lease lease} of its own it may be longer than the service's default
         * lease: the lease then only bounds how long a crashed holder keeps the lock.
         *
         * @param atLeast a duration no longer than the lease, if one is given
         * @return this builder
         */
        public Builder lockAtLeastFor(Duration atLeast) {
            if (kind != LockKind.SINGLETON) {
                throw new IllegalArgumentException("lockAtLeastFor applies to singletons only");
            }
            this.lockAtLeastFor = checkDuration("lockAtLeastFor", atLeast, true);
            return this;
        }

        /**
         * @return the request
         * @throws IllegalArgumentException if it asks for nothing or contradicts itself
         */
        public LockRequest build() {
            if (keys.isEmpty()) {
                throw new IllegalArgumentException("A lock request needs at least one path");
            }
            for (String key : keys) {
                if (key == null) {
                    throw kind == LockKind.PATH ? new InvalidLockPathException(null, "path is null")
                            : new IllegalArgumentException("The " + kind.name().toLowerCase() + " name must not be null");
                }
            }
            if (kind != LockKind.PATH) {
                keys.set(0, PathNormalizer.checkName(kind.name().toLowerCase() + " name", keys.get(0), 1000));
            }
            if (lease != null && lockAtLeastFor.compareTo(lease) > 0) {
                throw new IllegalArgumentException("lockAtLeastFor (" + lockAtLeastFor + ") is longer than the lease ("
                        + lease + ") for singleton '" + keys.get(0) + "'");
            }
            return new LockRequest(this);
        }

        static Duration checkDuration(String what, Duration d, boolean zeroAllowed) {
            Objects.requireNonNull(d, what);
            if (d.isNegative() || (!zeroAllowed && d.isZero())) {
                throw new IllegalArgumentException(what + " must be " + (zeroAllowed ? "zero or positive" : "positive")
                        + ", was " + d);
            }
            if (d.compareTo(MAX_DURATION) > 0) {
                throw new IllegalArgumentException(what + " of " + d + " is longer than the maximum " + MAX_DURATION);
            }
            return d;
        }
    }
}
