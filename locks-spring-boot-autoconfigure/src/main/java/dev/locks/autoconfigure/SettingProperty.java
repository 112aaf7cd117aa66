package dev.locks.autoconfigure;

import java.util.List;
import java.util.function.Function;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

import dev.locks.InvalidLockSettingException;

/**
 * A {@link dev.locks.LockSettings} builder setting and the {@code locks.*} property that sets it, so
 * that a value the settings refuse is reported under the name the user wrote, with Boot's failure
 * analysis ("Invalid value … for configuration property …").
 *
 * @param setting the builder setting, as {@link InvalidLockSettingException#setting()} names it
 * @param property the configuration property
 * @param value reads the property's bound value
 */
record SettingProperty(String setting, String property, Function<LocksProperties, Object> value) {

    private static final List<SettingProperty> ALL = List.of(
            new SettingProperty("nodeId", "locks.node-id", LocksProperties::getNodeId),
            new SettingProperty("defaultTenant", "locks.default-tenant", LocksProperties::getDefaultTenant),
            new SettingProperty("defaultLease", "locks.default-lease", LocksProperties::getDefaultLease),
            new SettingProperty("defaultWait", "locks.default-wait", LocksProperties::getDefaultWait),
            new SettingProperty("renewInterval", "locks.renew-interval", LocksProperties::getRenewInterval),
            new SettingProperty("purgeInterval", "locks.purge-interval", LocksProperties::getPurgeInterval),
            new SettingProperty("shutdownWait", "locks.shutdown-wait", LocksProperties::getShutdownWait),
            new SettingProperty("slowWaitLog", "locks.log.slow-wait", p -> p.getLog().getSlowWait()),
            new SettingProperty("backoffInitial", "locks.backoff.initial", p -> p.getBackoff().getInitial()),
            new SettingProperty("backoffMultiplier", "locks.backoff.multiplier", p -> p.getBackoff().getMultiplier()),
            new SettingProperty("backoffMax", "locks.backoff.max", p -> p.getBackoff().getMax()),
            new SettingProperty("backoffJitter", "locks.backoff.jitter", p -> p.getBackoff().getJitter()),
            new SettingProperty("maxPathLength", "locks.paths.max-length", p -> p.getPaths().getMaxLength()),
            new SettingProperty("waiterLease", "locks.waiting.queue-lease", p -> p.getWaiting().getQueueLease()),
            new SettingProperty("maxPollsPerSecond", "locks.waiting.max-polls-per-second",
                    p -> p.getWaiting().getMaxPollsPerSecond()),
            new SettingProperty("deadlockCheckInterval", "locks.waiting.deadlock-check-interval",
                    p -> p.getWaiting().getDeadlockCheckInterval()),
            new SettingProperty("notifiedPollInterval", "locks.waiting.notified-poll-interval",
                    p -> p.getWaiting().getNotifiedPollInterval()));

    /**
     * @param refused what the settings threw
     * @param properties the bound properties
     * @return the same failure named after its property, or {@code refused} if no property sets it
     */
    static RuntimeException explain(InvalidLockSettingException refused, LocksProperties properties) {
        for (SettingProperty p : ALL) {
            if (p.setting().equals(refused.setting())) {
                // the cause goes through the constructor: the one without it sets a null cause, which
                // initCause may not overwrite (it throws IllegalStateException instead)
                return new InvalidConfigurationPropertyValueException(p.property(), p.value().apply(properties),
                        refused.getMessage(), refused);
            }
        }
        return refused;
    }
}
