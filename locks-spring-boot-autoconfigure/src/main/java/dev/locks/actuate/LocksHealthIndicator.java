package dev.locks.actuate;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.core.task.SimpleAsyncTaskExecutor;

import dev.locks.DefaultLockService;
import dev.locks.HolderQuery;
import dev.locks.LockHandle;
import dev.locks.LockRequest;

/**
 * The {@code locks} health: DOWN when the lock store cannot be reached, its tables cannot be read, or
 * (with the lock probe, the default) this node cannot take and release a lock; otherwise UP with the
 * difference between this JVM's clock and the database's. A difference above the warning threshold
 * adds a {@code warning} detail but leaves the status UP: leases are measured in database time only,
 * so a skewed JVM clock misleads log readers, not the locks.
 *
 * <p>The lock probe is the singleton {@code locks-health:<node id>}, taken without waiting and
 * released at once. Reads alone pass where no lock can be granted: a database switched to read-only
 * by a fail-over, a user without write grants, a table of the schema missing that only grants use.
 * The probe is seen like any lock by listeners, metrics and the {@code locks} endpoint while held.
 *
 * <p>A check runs on a thread of its own and the caller waits for it at most the timeout (10 s unless
 * set): a database that stops answering, or a pool with no free connection, makes the health DOWN
 * within the timeout instead of holding the caller, and with it the health endpoint, until a socket
 * or pool timeout fires, if one is set. Calls that arrive while a check runs wait for that check
 * rather than start another, so a store that hangs holds one thread of this indicator, not one per
 * call; once a check has run longer than the timeout, calls answer DOWN at once until it returns.
 */
public class LocksHealthIndicator extends AbstractHealthIndicator {

    /** Before the node id, the name of the singleton the lock probe takes. */
    public static final String PROBE_PREFIX = "locks-health:";

    // long enough that the watchdog need not renew it, short enough that a probe whose release failed
    // leaves the next checks busy only briefly
    private static final Duration PROBE_LEASE = Duration.ofSeconds(30);

    /** How long a caller waits for a check unless told otherwise. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

    /** One statement over both the held and the waiting table, so that either missing shows. */
    private static final HolderQuery ONE_ROW = new HolderQuery(null, null, null, null, 1, true);

    private final DefaultLockService locks;

    private final Duration clockSkewWarning;

    private final Clock clock;

    private final boolean lockProbe;

    private final Duration timeout;

    // a thread per check, not a pool's, which a hung store could fill or application work delay
    private final SimpleAsyncTaskExecutor checks = new SimpleAsyncTaskExecutor("locks-health-check-");

    // the latest check, which callers arriving while it runs share: two at once would find each
    // other's probe busy, and a hung store would gain a thread per call; null before the first
    private CompletableFuture<Health> running;

    // System.nanoTime() when the latest check began; both guarded by this
    private long runningSince;

    // until when (nanoTime) a probe of this JVM that failed may still hold the probe lock, so that
    // finding it busy then is no sign of health; in the past until a probe fails. Checks run one at
    // a time, on different threads.
    private volatile long ownProbeMayHoldUntil = System.nanoTime();

    /**
     * @param locks the lock service
     * @param clockSkewWarning a clock difference above which a warning is reported
     */
    public LocksHealthIndicator(DefaultLockService locks, Duration clockSkewWarning) {
        this(locks, clockSkewWarning, Clock.systemUTC(), true);
    }

    /**
     * @param locks the lock service
     * @param clockSkewWarning a clock difference above which a warning is reported
     * @param clock this JVM's clock
     */
    public LocksHealthIndicator(DefaultLockService locks, Duration clockSkewWarning, Clock clock) {
        this(locks, clockSkewWarning, clock, true);
    }

    /**
     * @param locks the lock service
     * @param clockSkewWarning a clock difference above which a warning is reported
     * @param clock this JVM's clock
     * @param lockProbe whether each check takes and releases this node's probe lock
     */
    public LocksHealthIndicator(DefaultLockService locks, Duration clockSkewWarning, Clock clock, boolean lockProbe) {
        this(locks, clockSkewWarning, clock, lockProbe, DEFAULT_TIMEOUT);
    }

    /**
     * @param locks the lock service
     * @param clockSkewWarning a clock difference above which a warning is reported
     * @param clock this JVM's clock
     * @param lockProbe whether each check takes and releases this node's probe lock
     * @param timeout how long a caller waits for a check before it reports DOWN; positive
     */
    public LocksHealthIndicator(DefaultLockService locks, Duration clockSkewWarning, Clock clock, boolean lockProbe,
            Duration timeout) {
        super("Lock store health check failed");
        this.locks = Objects.requireNonNull(locks, "locks");
        this.clockSkewWarning = Objects.requireNonNull(clockSkewWarning, "clockSkewWarning");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.lockProbe = lockProbe;
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        this.checks.setDaemon(true);
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("The health check timeout must be positive, was " + timeout);
        }
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        CompletableFuture<Health> check;
        long since;
        synchronized (this) {
            // a finished check is never handed out again: a call after it gets a fresh one
            if (running == null || running.isDone()) {
                running = checks.submitCompletable(this::checked);
                runningSince = System.nanoTime();
            }
            check = running;
            since = runningSince;
        }
        long waitNanos = since + timeout.toNanos() - System.nanoTime();
        try {
            Health health = check.get(Math.max(0, waitNanos), TimeUnit.NANOSECONDS);
            builder.status(health.getStatus()).withDetails(health.getDetails());
        }
        catch (TimeoutException ex) {
            Duration runningFor = Duration.ofNanos(System.nanoTime() - since);
            builder.down().withDetail("node", locks.settings().nodeId()).withDetail("store", "no answer")
                    .withDetail("error", "The lock store has not answered a health check running for "
                            + runningFor.toMillis() + " ms (timeout " + timeout + "): the database does not answer "
                            + "or the connection pool has no free connection");
        }
        catch (ExecutionException ex) {
            // what check() did not turn into details: Boot logs it and reports DOWN with it, as it did
            // when checks ran on the caller's thread
            if (ex.getCause() instanceof RuntimeException failure) {
                throw failure;
            }
            throw new IllegalStateException("The lock store health check failed", ex.getCause());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            builder.unknown().withDetail("node", locks.settings().nodeId()).withDetail("error", "interrupted");
        }
    }

    /** The check, run on {@link #checks}. */
    private Health checked() {
        Health.Builder builder = new Health.Builder();
        check(builder);
        return builder.build();
    }

    private void check(Health.Builder builder) {
        builder.withDetail("node", locks.settings().nodeId());
        Instant sent = clock.instant();
        Instant databaseTime;
        try {
            databaseTime = locks.storeTime();
        }
        catch (RuntimeException ex) {
            builder.down().withDetail("store", "unreachable").withDetail("error", ex.getMessage());
            return;
        }
        Instant received = clock.instant();
        try {
            locks.list(ONE_ROW);
        }
        catch (RuntimeException ex) {
            builder.down().withDetail("store", "reachable").withDetail("schema", "missing or unreadable")
                    .withDetail("error", ex.getMessage());
            return;
        }
        if (lockProbe && !probeLock(builder)) {
            return;
        }
        // the database read its clock somewhere between sending and receiving: compare with the middle
        Instant jvmTime = sent.plus(Duration.between(sent, received).dividedBy(2));
        Duration skew = Duration.between(jvmTime, databaseTime);
        builder.up()
                .withDetail("store", "reachable")
                .withDetail("schema", "present")
                .withDetail("databaseTime", databaseTime.toString())
                .withDetail("jvmTime", jvmTime.toString())
                .withDetail("clockSkewMillis", skew.toMillis())
                .withDetail("heldByThisNode", locks.heldCount())
                .withDetail("waitingOnThisNode", locks.waitingCount());
        if (skew.abs().compareTo(clockSkewWarning) > 0) {
            builder.withDetail("warning", "The database clock is " + skew.abs().toMillis() + " ms "
                    + (skew.isNegative() ? "behind" : "ahead of") + " this JVM's, more than " + clockSkewWarning
                    + "; leases use only the database clock, but log and JVM times will disagree with lock times");
        }
    }

    /**
     * Takes and releases this node's probe lock.
     *
     * @return false if that failed, and the builder says DOWN and why
     */
    private boolean probeLock(Health.Builder builder) {
        String name = PROBE_PREFIX + locks.settings().nodeId();
        try {
            long start = System.nanoTime();
            Optional<LockHandle> probe = locks.tryAcquire(LockRequest.singleton(name).lease(PROBE_LEASE).build());
            if (probe.isEmpty()) {
                return probeBusy(builder, name);
            }
            probe.get().release();
            builder.withDetail("lockProbe", "granted and released")
                    .withDetail("lockProbeMillis", Duration.ofNanos(System.nanoTime() - start).toMillis());
            return true;
        }
        catch (RuntimeException ex) {
            // a failed release leaves the probe held; so may a failed grant whose commit went through
            // with only the answer lost
            ownProbeMayHoldUntil = System.nanoTime() + PROBE_LEASE.toNanos();
            builder.down().withDetail("store", "reachable").withDetail("lockProbe", "failed")
                    .withDetail("error", ex.getMessage());
            return false;
        }
    }

    /**
     * The probe lock is held. The grant's reads ran, but its writes may not have: while a probe of this
     * JVM that failed may still hold it, that is no sign that grants work again.
     */
    private boolean probeBusy(Health.Builder builder, String name) {
        if (System.nanoTime() - ownProbeMayHoldUntil < 0) {
            builder.down().withDetail("store", "reachable").withDetail("lockProbe", "busy: " + name
                    + " is still held by this node's earlier probe, which failed");
            return false;
        }
        builder.withDetail("lockProbe", "busy: " + name + " is held, by another node with this node id or by a "
                + "probe of this node's before a restart");
        return true;
    }
}
