package dev.locks;

import java.util.ArrayList;
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

    /**
     * @param ticket the request's place in the store's queue: of the waiters a release may free, the
     *               one queued first is told to try at once
     */
    Waiter register(LockKind kind, String tenant, List<LockPath> paths, long ticket) {
        Waiter waiter = new Waiter(scopeKey(kind, tenant), paths, ticket);
        waitersByScope.computeIfAbsent(waiter.scope, k -> ConcurrentHashMap.newKeySet()).add(waiter);
        return waiter;
    }

    /**
     * Wakes the waiters whose paths overlap the released ones.
     *
     * @param freed whether the grant's rows are gone (false when it stays held for lockAtLeastFor)
     */
    void released(LockKind kind, String tenant, List<LockPath> paths, boolean freed) {
        Set<Waiter> waiters = waitersByScope.get(scopeKey(kind, tenant));
        if (waiters == null) {
            return;
        }
        List<Waiter> overlapping = new ArrayList<>();
        Waiter first = null;
        for (Waiter waiter : waiters) {
            if (waiter.overlapsAny(paths)) {
                overlapping.add(waiter);
                if (first == null || waiter.ticket < first.ticket) {
                    first = waiter;
                }
            }
        }
        // only the waiter queued first may skip its look: the others would try grants that must fail
        if (freed && first != null) {
            first.overlappingRelease = true;
        }
        overlapping.forEach(Waiter::signal);
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

        private volatile long ticket;

        private Waiter(String scope, List<LockPath> paths, long ticket) {
            this.scope = scope;
            this.paths = paths;
            this.ticket = ticket;
        }

        /** The request queued again (its record had lapsed), at the back. */
        void requeued(long newTicket) {
            this.ticket = newTicket;
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
