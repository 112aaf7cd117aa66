package dev.locks.autoconfigure.metrics;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the lock meters, under {@code locks.metrics}.
 */
@ConfigurationProperties("locks.metrics")
public class LocksMetricsProperties {

    /**
     * Whether lock timers and counters carry the tenant as a tag. Off by default: every tenant then
     * makes its own time series.
     */
    private boolean tenantTag;

    public boolean isTenantTag() {
        return tenantTag;
    }

    public void setTenantTag(boolean tenantTag) {
        this.tenantTag = tenantTag;
    }
}
