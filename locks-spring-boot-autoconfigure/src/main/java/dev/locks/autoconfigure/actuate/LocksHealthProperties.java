package dev.locks.autoconfigure.actuate;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the {@code locks} health indicator, under {@code locks.health}.
 */
@ConfigurationProperties("locks.health")
public class LocksHealthProperties {

    /**
     * A difference between this JVM's clock and the database's above which the health reports a
     * warning. Leases use only the database clock, so the status stays UP.
     */
    private Duration clockSkewWarning = Duration.ofSeconds(5);

    /**
     * Whether each health check takes and releases a lock of this node's ({@code locks-health:<node id>}),
     * so that a database where locks cannot be granted (read-only after a fail-over, no write grants)
     * shows DOWN. A grant and a release per check; the probe shows in listeners, metrics and the locks endpoint.
     */
    private boolean lockProbe = true;

    /**
     * How long a health check may take before the health reports DOWN: a database that stops
     * answering, or a pool without a free connection, then shows within this time instead of holding
     * the health endpoint. Checks arriving while one runs share it.
     */
    private Duration timeout = Duration.ofSeconds(10);

    public Duration getTimeout() {
        return timeout;
    }

    public void setTimeout(Duration timeout) {
        this.timeout = timeout;
    }

    public boolean isLockProbe() {
        return lockProbe;
    }

    public void setLockProbe(boolean lockProbe) {
        this.lockProbe = lockProbe;
    }

    public Duration getClockSkewWarning() {
        return clockSkewWarning;
    }

    public void setClockSkewWarning(Duration clockSkewWarning) {
        this.clockSkewWarning = clockSkewWarning;
    }
}
