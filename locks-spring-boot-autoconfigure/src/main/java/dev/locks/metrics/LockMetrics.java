package dev.locks.metrics;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import dev.locks.AcquireOutcome;
import dev.locks.DefaultLockService;
import dev.locks.LockHandle;
import dev.locks.LockListener;
import dev.locks.LockRequest;

/**
 * Records a lock service's events as Micrometer meters:
 * <ul>
 * <li>{@code locks.acquire} (timer, tags {@code kind}, {@code outcome}): every acquisition that
 * reached the store, waiting included; a nested scope re-entering a lock its thread already holds
 * is not counted, as it never asks the store;</li>
 * <li>{@code locks.wait} (timer, tags {@code kind}, {@code outcome}): only acquisitions that found the
 * lock busy and waited;</li>
 * <li>{@code locks.held}, {@code locks.waiting} (gauges): handles this node holds, requests of this
 * node waiting now;</li>
 * <li>{@code locks.releases.pending} (gauge): releases the store could not take, being retried;</li>
 * <li>{@code locks.renewals} (counter): leases the watchdog extended;</li>
 * <li>{@code locks.lease.lost} (counter, tag {@code kind}): handles whose lease ran out or that were
 * force-released while held;</li>
 * <li>{@code locks.released} (counter, tag {@code kind}): handles released by their owner.</li>
 * </ul>
 * With {@code tenantTag} the timers and the per-handle counters also carry {@code tenant}; it is off
 * by default because every tenant then makes its own time series.
 */
public final class LockMetrics implements LockListener {

    private final MeterRegistry registry;

    private final boolean tenantTag;

    private final String defaultTenant;

    private final Counter renewals;

    private LockMetrics(MeterRegistry registry, boolean tenantTag, String defaultTenant) {
        this.registry = registry;
        this.tenantTag = tenantTag;
        this.defaultTenant = defaultTenant;
        this.renewals = Counter.builder("locks.renewals")
                .description("Lock leases extended by the watchdog")
                .register(registry);
    }

    /**
     * Registers the meters of {@code service} in {@code registry} and starts listening to it.
     *
     * @param service the lock service
     * @param registry where the meters go
     * @param tenantTag whether timers and counters carry the tenant as a tag
     * @return the listener now added to the service
     */
    public static LockMetrics bind(DefaultLockService service, MeterRegistry registry, boolean tenantTag) {
        Objects.requireNonNull(service, "service");
        Objects.requireNonNull(registry, "registry");
        LockMetrics metrics = new LockMetrics(registry, tenantTag, service.settings().defaultTenant());
        Gauge.builder("locks.held", service, DefaultLockService::heldCount)
                .description("Lock handles this node holds")
                .register(registry);
        Gauge.builder("locks.waiting", service, DefaultLockService::waitingCount)
                .description("Lock requests of this node waiting now")
                .register(registry);
        Gauge.builder("locks.releases.pending", service, DefaultLockService::pendingReleaseCount)
                .description("Releases of this node the store could not take, being retried in the background")
                .register(registry);
        service.addListener(metrics);
        return metrics;
    }

    @Override
    public void acquireFinished(LockRequest request, AcquireOutcome outcome, Duration elapsed, boolean waited) {
        Tags tags = tags(request).and("outcome", outcome.name().toLowerCase(Locale.ROOT));
        Timer.builder("locks.acquire")
                .description("Lock acquisitions, waiting included")
                .tags(tags)
                .register(registry)
                .record(elapsed);
        if (waited) {
            Timer.builder("locks.wait")
                    .description("Lock acquisitions that found the lock busy and waited")
                    .tags(tags)
                    .register(registry)
                    .record(elapsed);
        }
    }

    @Override
    public void released(LockHandle handle) {
        Counter.builder("locks.released")
                .description("Lock handles released by their owner")
                .tags(tags(handle.request()))
                .register(registry)
                .increment();
    }

    @Override
    public void renewed(int grants) {
        renewals.increment(grants);
    }

    @Override
    public void leaseLost(LockHandle handle, String reason) {
        Counter.builder("locks.lease.lost")
                .description("Held locks whose lease ran out or that were force-released")
                .tags(tags(handle.request()))
                .register(registry)
                .increment();
    }

    private Tags tags(LockRequest request) {
        Tags tags = Tags.of("kind", request.kind().name().toLowerCase(Locale.ROOT));
        if (tenantTag) {
            tags = tags.and("tenant", request.tenant() != null ? request.tenant() : defaultTenant);
        }
        return tags;
    }

    @Override
    public String toString() {
        return "LockMetrics[" + registry.getClass().getSimpleName() + (tenantTag ? ", tenant tag" : "") + "]";
    }
}
