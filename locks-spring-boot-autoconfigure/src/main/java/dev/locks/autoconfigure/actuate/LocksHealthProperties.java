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

    public Duration getClockSkewWarning() {
        return clockSkewWarning;
    }

    public void setClockSkewWarning(Duration clockSkewWarning) {
        this.clockSkewWarning = clockSkewWarning;
    }
}
