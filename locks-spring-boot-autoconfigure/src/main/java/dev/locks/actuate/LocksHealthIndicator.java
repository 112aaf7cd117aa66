package dev.locks.actuate;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import dev.locks.DefaultLockService;
import dev.locks.HolderQuery;

/**
 * The {@code locks} health: DOWN when the lock store cannot be reached or its tables cannot be read;
 * otherwise UP with the difference between this JVM's clock and the database's. A difference above
 * the warning threshold adds a {@code warning} detail but leaves the status UP: leases are measured
 * in database time only, so a skewed JVM clock misleads log readers, not the locks.
 */
public class LocksHealthIndicator extends AbstractHealthIndicator {

    /** One statement over both the held and the waiting table, so that either missing shows. */
    private static final HolderQuery ONE_ROW = new HolderQuery(null, null, null, null, 1, true);

    private final DefaultLockService locks;

    private final Duration clockSkewWarning;

    private final Clock clock;

    /**
     * @param locks the lock service
     * @param clockSkewWarning a clock difference above which a warning is reported
     */
    public LocksHealthIndicator(DefaultLockService locks, Duration clockSkewWarning) {
        this(locks, clockSkewWarning, Clock.systemUTC());
    }

    /**
     * @param locks the lock service
     * @param clockSkewWarning a clock difference above which a warning is reported
     * @param clock this JVM's clock
     */
    public LocksHealthIndicator(DefaultLockService locks, Duration clockSkewWarning, Clock clock) {
        super("Lock store health check failed");
        this.locks = Objects.requireNonNull(locks, "locks");
        this.clockSkewWarning = Objects.requireNonNull(clockSkewWarning, "clockSkewWarning");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
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
}
