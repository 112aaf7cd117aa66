package dev.locks;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Wakes waiters of this JVM the moment a release here may have freed what they wait for, instead
 * of letting them sleep out their backoff.
 */
final class LocalWakeups {

    private final Map<String, Set<Waiter>> waitersByScope = new ConcurrentHashMap<>();

    Waiter register(LockKind kind, String tenant, List<LockPath> paths) {
        Waiter waiter = new Waiter(scopeKey(kind, tenant), paths);
        waitersByScope.computeIfAbsent(waiter.scope, k -> ConcurrentHashMap.newKeySet()).add(waiter);
        return waiter;
    }

    void released(LockKind kind, String tenant, List<LockPath> paths) {
        Set<Waiter> waiters = waitersByScope.get(scopeKey(kind, tenant));
        if (waiters == null) {
            return;
        }
        for (Waiter waiter : waiters) {
            if (waiter.overlapsAny(paths)) {
                waiter.overlappingRelease = true;
                waiter.signal();
            }
        }
    }

    /** Another node released something in this tenant: every waiter of the tenant looks again. */
    void releasedInScope(LockKind kind, String tenant) {
        Set<Waiter> waiters = waitersByScope.get(scopeKey(kind, tenant));
        if (waiters != null) {
            waiters.forEach(Waiter::signal);
        }
    }

    private static String scopeKey(LockKind kind, String tenant) {
        return kind.code() + tenant;
    }

    /** One waiting request; close it when the wait ends. */
    final class Waiter implements AutoCloseable {

        private final String scope;

        private final List<LockPath> paths;

        private final Semaphore signal = new Semaphore(0);

        private volatile boolean overlappingRelease;

        private Waiter(String scope, List<LockPath> paths) {
            this.scope = scope;
            this.paths = paths;
        }

        private boolean overlapsAny(List<LockPath> released) {
            for (LockPath mine : paths) {
                for (LockPath other : released) {
                    if (mine.overlaps(other)) {
                        return true;
                    }
                }
            }
            return false;
        }

        private void signal() {
            if (signal.availablePermits() == 0) {
                signal.release();
            }
        }

        /**
         * Whether a release in this JVM of a path overlapping this waiter's came since the last call:
         * the way is then likely free, where a release elsewhere in the tenant only may have freed it.
         */
        boolean takeOverlappingRelease() {
            boolean seen = overlappingRelease;
            overlappingRelease = false;
            return seen;
        }

        /**
         * Sleeps until signalled or the time is up; a signal that came earlier returns at once.
         *
         * @return true if woken by a signal
         */
        boolean await(long nanos) throws InterruptedException {
            if (signal.tryAcquire(nanos, TimeUnit.NANOSECONDS)) {
                signal.drainPermits();
                return true;
            }
            return false;
        }

        @Override
        public void close() {
            Set<Waiter> waiters = waitersByScope.get(scope);
            if (waiters != null) {
                waiters.remove(this);
            }
        }
    }
}
