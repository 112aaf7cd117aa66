package dev.locks;

import java.time.Duration;
import java.time.Instant;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import dev.locks.store.Grant;
import dev.locks.store.LockStore;

/**
 * Releases the store could not take, tried again in the background until one succeeds or the
 * grant's lease has run out, which frees it anyway. Without them a blip of a second during a
 * release would keep the lock for the rest of its lease: for a singleton's {@code lockAtMostFor},
 * many minutes. A release is idempotent (it names its grant and owner, and only live rows), so a
 * retry can never free anybody else's lock.
 * <p>
 * The retries run on a daemon thread of their own, started at the first failure: a retry that
 * waits for an unreachable database must not hold up the watchdog's renewals.
 */
final class ReleaseRetries implements AutoCloseable {

    /** How long after a failure, and after each failed retry, the next attempt comes. */
    static final Duration INTERVAL = Duration.ofSeconds(1);

    /** More pending releases than this mean the store is gone for long: the leases free the rest. */
    static final int MAX_PENDING = 100_000;

    private static final Logger log = LoggerFactory.getLogger(ReleaseRetries.class);

    /** How long closing waits for a retry under way, which may be waiting for the database. */
    static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

    /**
     * A release to try again.
     *
     * @param handle the handle released, whose lease (read at each round: a renewal under way when
     *               it was released may still extend it) ends the retries; null for a grant without
     *               one, whose retries end when the store answers at all (a lapsed grant answers false)
     * @param released what to do once it succeeded, or the lease it ran out on freed the lock
     */
    private record Pending(Grant grant, Duration keep, String description, GrantedLock handle, Runnable released,
            boolean uncertain) {

        boolean leaseOver() {
            return handle != null && System.nanoTime() - handle.validUntilNanos() >= 0;
        }
    }

    private final LockStore store;

    private final Queue<Pending> pending = new ConcurrentLinkedQueue<>();

    private ThreadPoolTaskScheduler scheduler;

    private volatile boolean closed;

    private volatile boolean drained;

    ReleaseRetries(LockStore store) {
        this.store = store;
    }

    /**
     * Takes a handle whose release failed; it is tried again from the next round on.
     *
     * @return false if it was refused (the queue is full, or the service closed) and the lease is
     *         left to free the lock
     */
    boolean add(GrantedLock handle, Runnable released) {
        return queue(new Pending(handle.grant(), handle.request().lockAtLeastFor(), handle.describe(), handle, released,
                false));
    }

    /**
     * Takes a handle whose release the store had taken over at the end of a caller's transaction,
     * and which failed; its lease, renewed until the transaction ended, ends the retries.
     *
     * @return false if it was refused and the lease is left to free the lock
     */
    boolean addTakenOver(GrantedLock handle, Runnable released) {
        if (add(handle, released)) {
            log.warn("Could not release {} after the caller's transaction; retrying in the background",
                    handle.describe());
            return true;
        }
        return false;
    }

    /**
     * Takes a grant made for a waiter that had stopped waiting, whose discard failed. Nobody holds a
     * handle to it, so nothing else would free it before its lease ends.
     *
     * @param released what to do once it succeeded (the waiters of this JVM on its paths hear of it)
     * @return false if the queue was full and the lease is left to free the lock
     */
    boolean addUnwanted(Grant grant, Runnable released) {
        return queue(new Pending(grant, Duration.ZERO,
                "the lock with token " + grant.fencingToken() + " granted to a waiter that had left", null, released, false));
    }

    /**
     * Takes the grant of a request whose grant failed: its commit may have gone through with only the
     * answer lost (a connection reset after the commit). Nobody holds a handle to such a grant, so
     * nothing else would free it before its lease ends. If the grant never happened, the first
     * retry the store answers releases nothing, and that is the end of it.
     *
     * @param released what to do once it succeeded (the waiters of this JVM on its paths hear of it)
     */
    void addUncertain(Grant grant, String what, Runnable released) {
        queue(new Pending(grant, Duration.ZERO, "a grant of " + what + " whose outcome was not known", null, released,
                true));
    }

    /** @return false if the release was refused and the lease is left to free the lock */
    private boolean queue(Pending release) {
        if (closed) {
            // nothing would read the queue any more
            warnOrNot(release, "Not retrying the release of {}: the lock service is closed; its lease will free it");
            return false;
        }
        if (pending.size() >= MAX_PENDING) {
            warnOrNot(release, "Not retrying the release of {}: the queue of releases is full; its lease will free it");
            return false;
        }
        pending.add(release);
        startOnce();
        return true;
    }

    /**
     * Warns of a release left to its lease; a grant whose outcome was not known almost never
     * happened (the failure was before the commit), so warning of each would only cry wolf.
     */
    private static void warnOrNot(Pending release, String message) {
        if (release.uncertain()) {
            log.debug(message, release.description());
        }
        else {
            log.warn(message, release.description());
        }
    }

    private synchronized void startOnce() {
        if (scheduler != null || closed) {
            return;
        }
        scheduler = new ThreadPoolTaskScheduler();
        scheduler.setThreadNamePrefix("locks-release-retry-");
        scheduler.setDaemon(true);
        scheduler.setPoolSize(1);
        // closing lets a round under way end, uninterrupted, so that a release it could not take is
        // still in the queue for the last round
        scheduler.setWaitForTasksToCompleteOnShutdown(true);
        scheduler.setAwaitTerminationMillis(CLOSE_WAIT.toMillis());
        scheduler.initialize();
        scheduler.scheduleWithFixedDelay(this::retry, Instant.now().plus(INTERVAL), INTERVAL);
    }

    /** @return the releases still to be retried */
    int size() {
        return pending.size();
    }

    /**
     * One round: the pending releases in turn until the store fails again. The one that failed goes
     * to the back, so that a release failing for a reason of its own does not hold up the others.
     */
    void retry() {
        for (int i = pending.size(); i > 0; i--) {
            Pending release = pending.poll();
            if (release == null) {
                return;
            }
            if (release.leaseOver()) {
                log.debug("Gave up releasing {}: its lease has run out", release.description());
                // which freed the lock as a release would have
                release.released().run();
                continue;
            }
            boolean freed;
            try {
                freed = store.release(release.grant(), release.keep());
            }
            catch (RuntimeException ex) {
                if (drained) {
                    // a retry that outlasted close's wait: nothing reads the queue any more
                    log.warn("Could not release {} on shutdown; its lease will free it: {}", release.description(),
                            ex.toString());
                }
                else {
                    pending.add(release);
                    log.debug("Retrying the release of {} failed: {}", release.description(), ex.toString());
                }
                return;
            }
            if (freed || !release.uncertain()) {
                log.info("Released {} on retry", release.description());
                release.released().run();
            }
            else {
                // the usual end for a grant whose outcome was not known: it never happened, and freed nothing
                log.debug("Nothing was left to release of {}", release.description());
            }
        }
    }

    /**
     * Makes one last attempt at each pending release, then stops. Releases that fail then, or come
     * later, are left to their leases, with a warning each.
     */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            if (scheduler != null) {
                // waits up to CLOSE_WAIT for a round under way, so that what it leaves is tried below
                scheduler.shutdown();
            }
        }
        retry();
        drained = true;
        for (Pending release : pending) {
            warnOrNot(release, "Could not release {} on shutdown; its lease will free it");
        }
        pending.clear();
    }
}
