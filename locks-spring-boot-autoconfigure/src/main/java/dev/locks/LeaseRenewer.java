package dev.locks;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.TaskScheduler;

import dev.locks.store.Grant;
import dev.locks.store.LockStore;
import dev.locks.store.PendingRelease;

/**
 * The watchdog: renews the leases of registered handles every {@code lease/3} (or the configured
 * interval) in batches, one store round per lease length per tick rather than one per lock. A
 * handle whose renewal keeps failing until its lease has run out is marked lost.
 * <p>
 * A watched handle released inside a caller's transaction stays renewed until the store has made
 * the release at the end of that transaction ({@link PendingRelease}): released for its caller,
 * its grant still keeps other nodes out of the work that is not committed yet.
 */
final class LeaseRenewer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaseRenewer.class);

    /** How often a slow renewal is logged at most. */
    private static final Duration SLOW_RENEWAL_LOG_INTERVAL = Duration.ofMinutes(1);

    private final LockStore store;

    private final LockSettings settings;

    // when (nanoTime) the next slow renewal may be logged; only the watchdog's thread renews
    private long nextSlowRenewalLog = System.nanoTime();

    private final Set<GrantedLock> handles = ConcurrentHashMap.newKeySet();

    /** Released handles whose release waits for the caller's transaction to end. */
    private final Set<GrantedLock> releasing = ConcurrentHashMap.newKeySet();

    private final ScheduledFuture<?> ticks;

    private final List<LockListener> listeners;

    LeaseRenewer(LockStore store, LockSettings settings, TaskScheduler scheduler, List<LockListener> listeners) {
        this.store = store;
        this.settings = settings;
        this.listeners = listeners;
        this.ticks = scheduler.scheduleWithFixedDelay(this::renewDue, settings.renewalTick());
    }

    void register(GrantedLock handle) {
        handle.nextRenewalNanos(System.nanoTime() + settings.renewIntervalFor(handle.lease()).toNanos());
        handles.add(handle);
    }

    /** @return whether the handle was watched */
    boolean unregister(GrantedLock handle) {
        return handles.remove(handle);
    }

    /**
     * @param handle a handle just taken off the watch by its release
     * @return what keeps its grant renewed while the release waits for the caller's transaction
     */
    PendingRelease untilReleased(GrantedLock handle) {
        return new PendingRelease() {

            @Override
            public void started() {
                releasing.add(handle);
            }

            @Override
            public void ended() {
                releasing.remove(handle);
            }
        };
    }

    /** @return handles watched, and released ones still renewed until their caller's transaction ends */
    int size() {
        return handles.size() + releasing.size();
    }

    /** @return the handles watched now, a copy */
    Set<GrantedLock> watched() {
        return Set.copyOf(handles);
    }

    /** One round: renews every handle due now or within the next tick, grouped by lease. */
    void renewDue() {
        try {
            long horizon = System.nanoTime() + settings.renewalTick().toNanos();
            Map<Duration, List<GrantedLock>> due = new HashMap<>();
            for (GrantedLock handle : handles) {
                if (handle.isLost()) {
                    // lost to a renewal by hand; a released one is left to its release, which asks whether it was watched
                    handles.remove(handle);
                }
                else if (handle.isHeld() && handle.nextRenewalNanos() - horizon <= 0) {
                    due.computeIfAbsent(handle.lease(), k -> new ArrayList<>()).add(handle);
                }
            }
            for (GrantedLock handle : releasing) {
                if (handle.nextRenewalNanos() - horizon <= 0) {
                    due.computeIfAbsent(handle.lease(), k -> new ArrayList<>()).add(handle);
                }
            }
            due.forEach(this::renew);
        }
        catch (RuntimeException ex) {
            // the scheduler would stop calling a task that throws; the next tick must still come
            log.error("Lease renewal round failed", ex);
        }
    }

    private void renew(Duration lease, List<GrantedLock> batch) {
        long sent = System.nanoTime();
        List<Grant> grants = new ArrayList<>(batch.size());
        batch.forEach(h -> grants.add(h.grant()));
        Map<String, Instant> renewed;
        try {
            renewed = store.renew(grants, lease);
        }
        catch (RuntimeException ex) {
            for (GrantedLock handle : batch) {
                if (System.nanoTime() - handle.validUntilNanos() >= 0) {
                    lose(handle, "its lease of " + lease + " ran out while the store could not be reached: " + ex.getMessage());
                }
                else {
                    // try again on the next tick until the lease is gone
                    handle.nextRenewalNanos(System.nanoTime());
                }
            }
            log.warn("Could not renew {} lease(s); retrying until they run out: {}", batch.size(), ex.toString());
            return;
        }
        long answered = System.nanoTime();
        warnIfSlow(batch.size(), lease, answered - sent);
        long next = sent + settings.renewIntervalFor(lease).toNanos();
        if (!renewed.isEmpty()) {
            for (LockListener listener : listeners) {
                try {
                    listener.renewed(renewed.size());
                }
                catch (RuntimeException ex) {
                    // a failing listener must not keep the renewed handles from learning their new lease
                    log.warn("Lock listener {} failed", listener, ex);
                }
            }
        }
        for (GrantedLock handle : batch) {
            Instant until = renewed.get(handle.grant().grantId());
            if (until != null) {
                handle.renewed(until, sent, lease);
                handle.nextRenewalNanos(next);
            }
            else if (handle.isHeld()) {
                lose(handle, "the store no longer had the grant at renewal: its lease expired or it was force-released"
                        + lateness(handle, sent, answered));
            }
            else {
                // its release was made, or has joined the transaction, whose rows renewals keep off
                releasing.remove(handle);
            }
        }
    }

    /**
     * Says so when a renewal took longer than the time between renewals, before a longer one loses
     * leases: the store sees nothing wrong, and the pool's queue, where it usually waited, logs nothing.
     */
    private void warnIfSlow(int leases, Duration lease, long tookNanos) {
        long interval = settings.renewIntervalFor(lease).toNanos();
        long now = System.nanoTime();
        if (tookNanos <= interval || now - nextSlowRenewalLog < 0) {
            return;
        }
        nextSlowRenewalLog = now + SLOW_RENEWAL_LOG_INTERVAL.toNanos();
        log.warn("Renewing {} lease(s) of {} took {} ms, longer than the {} ms between renewals; a renewal slower than"
                + " what is left of a lease loses it. Most often the lock DataSource's pool had no free connection"
                + " (the application's work held them all): give the lock tables a pool of their own"
                + " (locks.jdbc.data-source-bean) or a longer lease. Logged at most once a minute.",
                leases, lease, tookNanos / 1_000_000, interval / 1_000_000);
    }

    /**
     * Why a renewal may have come too late, when it did: the lease had run out before it was sent
     * (the watchdog's one thread was held up by earlier rounds), or its answer took longer than the
     * lease had left. Either is most often a wait for a connection of a pool that the application's
     * own work has taken (else a slow database or a pause of this JVM), which the reason must name,
     * since the store only saw an expired grant.
     */
    private static String lateness(GrantedLock handle, long sent, long answered) {
        long overdue = sent - handle.validUntilNanos();
        long took = answered - sent;
        if (overdue < 0 && took < -overdue) {
            return "";
        }
        String when = overdue >= 0
                ? "; the renewal was sent " + overdue / 1_000_000 + " ms after the lease had run out and took " + took / 1_000_000 + " ms"
                : "; the renewal took " + took / 1_000_000 + " ms, more than the " + -overdue / 1_000_000 + " ms the lease had left";
        return when + ": a wait for a connection of the lock DataSource's pool, a slow database or a pause of this"
                + " JVM held the watchdog up (for the pool: give the lock tables a pool of their own, or a longer lease)";
    }

    private void lose(GrantedLock handle, String reason) {
        handles.remove(handle);
        if (releasing.remove(handle)) {
            log.warn("{} was released inside a transaction that had not ended when {}", handle.describe(), reason);
        }
        else {
            handle.lost(reason);
        }
    }

    @Override
    public void close() {
        ticks.cancel(false);
        handles.clear();
        releasing.clear();
    }
}
