package dev.locks;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.TaskScheduler;

import dev.locks.store.LockStore;

/**
 * Releases the store could not take, tried again in the background until one succeeds or the
 * grant's lease has run out, which frees it anyway. Without them a blip of a second during a
 * release would keep the lock for the rest of its lease: for a singleton's {@code lockAtMostFor},
 * many minutes. A release is idempotent (it names its grant and owner, and only live rows), so a
 * retry can never free anybody else's lock.
 */
final class ReleaseRetries implements AutoCloseable {

    /** How long after a failure, and after each failed retry, the next attempt comes. */
    static final Duration INTERVAL = Duration.ofSeconds(1);

    private static final Logger log = LoggerFactory.getLogger(ReleaseRetries.class);

    private final LockStore store;

    private final LocalWakeups wakeups;

    private final Set<GrantedLock> pending = ConcurrentHashMap.newKeySet();

    private final ScheduledFuture<?> rounds;

    ReleaseRetries(LockStore store, LocalWakeups wakeups, TaskScheduler scheduler) {
        this.store = store;
        this.wakeups = wakeups;
        this.rounds = scheduler.scheduleWithFixedDelay(this::retry, INTERVAL);
    }

    /** Takes a handle whose release failed; it is tried again from the next round on. */
    void add(GrantedLock handle) {
        pending.add(handle);
    }

    /** @return the releases still to be retried */
    int size() {
        return pending.size();
    }

    /** One round: each pending release once, until the store fails again. */
    void retry() {
        for (GrantedLock handle : pending) {
            if (System.nanoTime() - handle.validUntilNanos() >= 0) {
                pending.remove(handle);
                log.debug("Gave up releasing {}: its lease has run out", handle.describe());
                continue;
            }
            Duration keep = handle.request().lockAtLeastFor();
            try {
                store.release(handle.grant(), keep);
            }
            catch (RuntimeException ex) {
                // the store is still out of reach: the others would fail too
                log.debug("Retrying the release of {} failed: {}", handle.describe(), ex.toString());
                return;
            }
            pending.remove(handle);
            log.info("Released {} on retry", handle.describe());
            wakeups.released(handle.request().kind(), handle.tenant(), handle.paths(),
                    keep.isZero() ? LocalWakeups.Release.FREED : LocalWakeups.Release.KEPT);
        }
    }

    /** Stops the rounds after one last attempt at each pending release. */
    @Override
    public void close() {
        rounds.cancel(false);
        retry();
        pending.clear();
    }
}
