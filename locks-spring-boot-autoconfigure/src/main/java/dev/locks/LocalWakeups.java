package dev.locks;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import dev.locks.store.GrantRequest;
import dev.locks.store.GrantResult;

/**
 * Wakes waiters of this JVM the moment a release here may have freed what they wait for, instead
 * of letting them sleep out their backoff, and lets such a release hand its lock to the waiter
 * queued first: {@link #claimFirst} reserves that waiter while it sleeps, the release grants its
 * request in the release's own transaction, and {@link Waiter#deliver} wakes it holding the lock.
 */
final class LocalWakeups {

    private final Map<String, Set<Waiter>> waitersByScope = new ConcurrentHashMap<>();

    /**
     * @param queued the waiting request with its ticket, its place in the store's queue: of the
     *               waiters a release may free, the one queued first is told to try at once
     */
    Waiter register(GrantRequest queued) {
        Waiter waiter = new Waiter(scopeKey(queued.kind(), queued.tenant()), queued);
        // compute, like the removal in close(): an add cannot land in a set that is being dropped
        waitersByScope.compute(waiter.scope, (scope, waiters) -> {
            Set<Waiter> set = waiters != null ? waiters : ConcurrentHashMap.newKeySet();
            set.add(waiter);
            return set;
        });
        return waiter;
    }

    /** @return how many (kind, tenant) scopes have waiters now */
    int scopeCount() {
        return waitersByScope.size();
    }

    /**
     * Reserves, for a hand-off, the waiter queued first among those whose paths overlap the released
     * ones, if it is asleep. Only the first: the grant of any later one must fail while the first waits.
     *
     * @return the reserved waiter, to be given {@link Waiter#deliver} or {@link Waiter#unclaim} exactly
     *         once; null if there is none or it is busy looking for itself
     */
    Waiter claimFirst(LockKind kind, String tenant, List<LockPath> paths) {
        List<Waiter> overlapping = overlapping(kind, tenant, paths);
        Waiter first = first(overlapping);
        return first != null && first.claim() ? first : null;
    }

    /** What a release of this JVM did to the lock. */
    enum Release {
        /** the rows are gone: the way may be free for the waiter queued first */
        FREED,
        /** the rows stay until lockAtLeastFor has passed, which may be now already */
        KEPT,
        /** the release's own transaction granted the first waiter, or found an earlier one elsewhere */
        HANDED_OVER
    }

    /**
     * Wakes the waiters whose paths overlap the released ones.
     */
    void released(LockKind kind, String tenant, List<LockPath> paths, Release release) {
        List<Waiter> overlapping = overlapping(kind, tenant, paths);
        if (kind != LockKind.PATH) {
            // a permit or a singleton frees one place, which only one waiter can take: waking the others
            // would have each of them look in vain, and keep them too busy for a release to hand over to
            if (release == Release.FREED) {
                tellFirstUntold(overlapping);
            }
            else if (release == Release.KEPT) {
                // free already if lockAtLeastFor has passed: the first waiter looks
                Waiter first = first(overlapping);
                if (first != null) {
                    first.signal();
                }
            }
            return;
        }
        if (release == Release.FREED) {
            pathFreed(overlapping);
        }
        else {
            overlapping.forEach(Waiter::signal);
        }
    }

    /**
     * Another node released something in this tenant: every path waiter of the tenant looks again, but
     * the one queued first, which may be next, tries at once; it costs one more statement if the
     * release freed something else. Of the waiters for a permit or singleton, the first of each name
     * tries, since the release freed at most one place.
     */
    void releasedInScope(LockKind kind, String tenant) {
        Set<Waiter> waiters = waitersByScope.get(scopeKey(kind, tenant));
        if (waiters == null) {
            return;
        }
        if (kind != LockKind.PATH) {
            Map<List<LockPath>, List<Waiter>> byName = new HashMap<>();
            for (Waiter waiter : waiters) {
                byName.computeIfAbsent(waiter.queued.paths(), k -> new ArrayList<>()).add(waiter);
            }
            byName.values().forEach(LocalWakeups::tellFirstUntold);
            return;
        }
        pathFreed(waiters);
    }

    /**
     * A path may have come free for these waiters: all look again, and the one queued first tries its
     * grant at once. Only it may skip its look: the others would try grants that must fail.
     */
    private static void pathFreed(Collection<Waiter> waiters) {
        Waiter first = first(waiters);
        if (first != null) {
            first.overlappingRelease = true;
        }
        waiters.forEach(Waiter::signal);
    }

    /**
     * A waiter of this JVM left the queue without the lock, so the conflicting requests queued after it
     * may go ahead: they look again. Nodes elsewhere learn of it from the store's notice or their poll.
     */
    void left(GrantRequest queued) {
        List<Waiter> behind = new ArrayList<>();
        for (Waiter waiter : overlapping(queued.kind(), queued.tenant(), queued.paths())) {
            if (waiter.queued.ticket() > queued.ticket()) {
                behind.add(waiter);
            }
        }
        if (queued.kind() != LockKind.PATH) {
            tellFirstUntold(behind);
            return;
        }
        behind.forEach(Waiter::signal);
    }

    /**
     * A waiter for a permit was handed a freed place, or told of one, and could not take it. While
     * nodes disagree on a semaphore's max (a rolling change of it), that may be its own smaller max
     * alone: the place may still fit a waiter queued after it that asked for a larger one, and the
     * first such waiter not told yet tries. Waiters with the same max or a smaller one would not fit.
     */
    void notTakenBy(GrantRequest busy) {
        if (busy.kind() != LockKind.SEMAPHORE) {
            return;
        }
        List<Waiter> largerMaxBehind = new ArrayList<>();
        for (Waiter waiter : overlapping(busy.kind(), busy.tenant(), busy.paths())) {
            if (waiter.queued.ticket() > busy.ticket() && waiter.queued.permits() > busy.permits()) {
                largerMaxBehind.add(waiter);
            }
        }
        tellFirstUntold(largerMaxBehind);
    }

    /**
     * Tells the waiter queued first that a place came free, unless an earlier release has told it
     * already and it has not tried yet: two places freed in quick succession go to two waiters.
     */
    private static void tellFirstUntold(Collection<Waiter> waiters) {
        List<Waiter> inQueueOrder = new ArrayList<>(waiters);
        inQueueOrder.sort(Comparator.comparingLong(waiter -> waiter.queued.ticket()));
        for (Waiter waiter : inQueueOrder) {
            if (waiter.tell()) {
                return;
            }
        }
    }

    private List<Waiter> overlapping(LockKind kind, String tenant, List<LockPath> paths) {
        Set<Waiter> waiters = waitersByScope.get(scopeKey(kind, tenant));
        if (waiters == null) {
            return List.of();
        }
        List<Waiter> overlapping = new ArrayList<>();
        for (Waiter waiter : waiters) {
            if (waiter.overlapsAny(paths)) {
                overlapping.add(waiter);
            }
        }
        return overlapping;
    }

    private static Waiter first(Iterable<Waiter> waiters) {
        Waiter first = null;
        for (Waiter waiter : waiters) {
            if (first == null || waiter.queued.ticket() < first.queued.ticket()) {
                first = waiter;
            }
        }
        return first;
    }

    private static String scopeKey(LockKind kind, String tenant) {
        return kind.code() + tenant;
    }

    /**
     * What a release handed to a waiter.
     *
     * @param result the waiter's grant, a busy answer, or null if the release could not try
     * @param sentNanos {@link System#nanoTime()} before the release sent the grant: the start of its lease here
     * @param uncertain whether the store failed the hand-off, which may have committed with only its
     *                  answer lost: a grant under the waiter's request id may then exist
     */
    record HandedOver(GrantResult result, long sentNanos, boolean uncertain) {

        boolean granted() {
            return result != null && result.grant() != null;
        }
    }

    /** Where a waiter is, as far as a hand-off is concerned. */
    private enum State {
        /** looking or granting for itself; no hand-off */
        WORKING,
        /** asleep; a release may claim it */
        SLEEPING,
        /** a release is granting for it */
        CLAIMED,
        /** the release's answer is waiting to be taken */
        DELIVERED,
        /** it stopped waiting; whatever a release still grants it must be released again */
        GONE
    }

    /** One waiting request; {@link #close()} it when the wait ends. */
    final class Waiter {

        private final String scope;

        private final Semaphore signal = new Semaphore(0);

        private volatile GrantRequest queued;

        private volatile boolean overlappingRelease;

        private State state = State.WORKING;

        private HandedOver delivery;

        private Waiter(String scope, GrantRequest queued) {
            this.scope = scope;
            this.queued = queued;
        }

        /** @return the request as queued now, what a hand-off grants */
        GrantRequest request() {
            return queued;
        }

        /** The request queued again (its record had lapsed), at the back. */
        void requeued(GrantRequest requeued) {
            this.queued = requeued;
        }

        private boolean overlapsAny(List<LockPath> released) {
            for (LockPath mine : queued.paths()) {
                for (LockPath other : released) {
                    if (mine.overlaps(other)) {
                        return true;
                    }
                }
            }
            return false;
        }

        /**
         * Tells this waiter that a place came free, unless it has been told already and not tried yet,
         * or has left: a waiter that closes at the same time either sees the tell and passes it on, or
         * is skipped here.
         *
         * @return whether this waiter took the tell
         */
        private synchronized boolean tell() {
            if (state == State.GONE || overlappingRelease) {
                return false;
            }
            overlappingRelease = true;
            signal();
            return true;
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
        synchronized boolean takeOverlappingRelease() {
            boolean seen = overlappingRelease;
            overlappingRelease = false;
            return seen;
        }

        /**
         * Sleeps until signalled or the time is up; a signal that came earlier returns at once. A
         * release may claim the waiter while it sleeps: call {@link #work} before touching the store.
         *
         * @return true if woken by a signal
         */
        boolean await(long nanos) throws InterruptedException {
            synchronized (this) {
                if (state == State.WORKING) {
                    state = State.SLEEPING;
                }
            }
            if (signal.tryAcquire(nanos, TimeUnit.NANOSECONDS)) {
                signal.drainPermits();
                return true;
            }
            return false;
        }

        /**
         * Ends the sleep before the waiter works with the store again: no release may claim it from
         * now on. If one has, waits for its answer until {@code deadlineNanos}, then gives up on it.
         *
         * @return what a release handed over, or null
         */
        synchronized HandedOver work(long deadlineNanos) throws InterruptedException {
            while (state == State.CLAIMED) {
                long remaining = deadlineNanos - System.nanoTime();
                if (remaining <= 0) {
                    state = State.GONE;
                    return null;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, remaining);
                }
                catch (InterruptedException ex) {
                    state = State.GONE;
                    throw ex;
                }
            }
            if (state == State.GONE) {
                return null;
            }
            HandedOver handed = delivery;
            delivery = null;
            state = State.WORKING;
            return handed;
        }

        /**
         * @return true if the wait ended while a release was handing the lock over ({@link #work}
         *         returned at the deadline): the waiter must stop at once, since the release frees
         *         what it grants under this request's grant id
         */
        synchronized boolean gaveUp() {
            return state == State.GONE;
        }

        private synchronized boolean claim() {
            if (state != State.SLEEPING) {
                return false;
            }
            state = State.CLAIMED;
            return true;
        }

        /**
         * Gives a claim back without an answer, instead of {@link #deliver}: the release did not hand
         * anything over and has freed nothing yet, so the waiter sleeps on as if never claimed.
         */
        synchronized void unclaim() {
            if (state == State.CLAIMED) {
                state = State.SLEEPING;
                // a waiter that woke meanwhile is waiting in work() for the answer
                notifyAll();
            }
        }

        /**
         * The claiming release's answer; called exactly once per {@link LocalWakeups#claimFirst},
         * unless the claim is given back with {@link #unclaim}.
         *
         * @return false if the waiter had given up: a grant in {@code handed} is then nobody's and
         *         the caller must release it
         */
        boolean deliver(HandedOver handed) {
            synchronized (this) {
                if (state != State.CLAIMED) {
                    return false;
                }
                delivery = handed;
                state = State.DELIVERED;
                notifyAll();
            }
            signal();
            return true;
        }

        /**
         * Leaves the waiters. A release that still holds a claim will find the waiter gone.
         *
         * @return an answer delivered but not taken (its grant must be released), or null
         */
        HandedOver close() {
            HandedOver left;
            boolean toldAndUntried;
            synchronized (this) {
                left = state == State.DELIVERED ? delivery : null;
                delivery = null;
                state = State.GONE;
                // read under the lock that tell() takes: no tell can land after this
                toldAndUntried = overlappingRelease;
                // a tenant per customer would otherwise leave an empty set behind for each one that ever waited
                waitersByScope.computeIfPresent(scope, (key, waiters) -> {
                    waiters.remove(this);
                    return waiters.isEmpty() ? null : waiters;
                });
            }
            if (toldAndUntried && queued.kind() != LockKind.PATH) {
                // told of a freed place it did not try for (a hand-off or its own grant came first):
                // the place is the next waiter's, which no later release may tell
                tellFirstUntold(overlapping(queued.kind(), queued.tenant(), queued.paths()));
            }
            return left;
        }
    }
}
