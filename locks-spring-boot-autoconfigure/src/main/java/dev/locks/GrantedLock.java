package dev.locks;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import dev.locks.store.Grant;

/**
 * A handle backed by a grant in the store. Validity is judged on this JVM's monotonic clock from
 * the moment the last successful grant or renewal was sent, which is never later than the
 * store's own lease start; no JVM time is ever compared with a store timestamp.
 */
final class GrantedLock implements LockHandle {

    /** LOST_RELEASED: released after it was lost, or found lost by its release; lost either way. */
    private enum State { HELD, RELEASED, LOST, LOST_RELEASED }

    // a field and a VarHandle rather than an AtomicReference: 16 bytes less for each of thousands of held locks
    private static final VarHandle STATE;

    private static final VarHandle LOST_REASON;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(GrantedLock.class, "state", State.class);
            LOST_REASON = MethodHandles.lookup().findVarHandle(GrantedLock.class, "lostReason", String.class);
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final DefaultLockService service;

    private final LockRequest request;

    private final String tenant;

    private final List<LockPath> paths;

    private final Duration lease;

    private final LockScope scope;

    private volatile State state = State.HELD;

    private volatile Grant grant;

    private volatile long validUntilNanos;

    private volatile long nextRenewalNanos;

    // the first reason found stays, so that listeners, checkValid and knownLost tell the same one
    private volatile String lostReason;

    GrantedLock(DefaultLockService service, LockRequest request, String tenant, List<LockPath> paths,
            Duration lease, LockScope scope, Grant grant, long sentNanos) {
        this.service = service;
        this.request = request;
        this.tenant = tenant;
        this.paths = paths;
        this.lease = lease;
        this.scope = scope;
        this.grant = grant;
        this.validUntilNanos = sentNanos + lease.toNanos();
    }

    @Override
    public LockRequest request() {
        return request;
    }

    @Override
    public long fencingToken() {
        return grant.fencingToken();
    }

    @Override
    public Instant expiresAt() {
        return grant.expiresAt();
    }

    @Override
    public boolean isValid() {
        return state == State.HELD && System.nanoTime() - validUntilNanos < 0;
    }

    @Override
    public void checkValid() {
        if (isValid()) {
            return;
        }
        State s = state;
        String why = switch (s) {
            case RELEASED -> "it was released";
            case LOST, LOST_RELEASED -> lostReason;
            case HELD -> ranOut();
        };
        throw new LockLostException("Lock " + describe() + " is no longer held: " + why);
    }

    private String ranOut() {
        return "its lease of " + lease + " ran out at " + grant.expiresAt() + " without renewal";
    }

    /**
     * @return why the lock is known lost (a renewal or the release found the grant gone, or the
     *         lease ran out unrenewed), or null; null for a handle released while held, whose grant a
     *         caller's transaction may keep until its commit
     */
    String knownLostReason() {
        State s = state;
        if (s == State.LOST || s == State.LOST_RELEASED) {
            return lostReason;
        }
        return s == State.HELD && System.nanoTime() - validUntilNanos >= 0 ? ranOut() : null;
    }

    @Override
    public boolean renew() {
        return renew(lease);
    }

    @Override
    public boolean renew(Duration newLease) {
        LockRequest.Builder.checkDuration("lease", newLease, false);
        if (state != State.HELD) {
            return false;
        }
        long sent = System.nanoTime();
        Map<String, Instant> renewed = service.store().renew(List.of(grant), newLease);
        Instant until = renewed.get(grant.grantId());
        if (until == null) {
            lost("the store no longer has the grant: its lease expired or it was force-released");
            return false;
        }
        renewed(until, sent, newLease);
        return true;
    }

    /**
     * Takes in a renewal's answer. The store never shortens a held lease, so each answer is a lower
     * bound and the latest of them holds, whichever order a hand renewal and the watchdog's answered in.
     */
    synchronized void renewed(Instant until, long sentNanos, Duration renewedLease) {
        Grant g = grant;
        if (until.isAfter(g.expiresAt())) {
            grant = new Grant(g.grantId(), g.owner(), g.fencingToken(), g.rows(), until);
        }
        long validUntil = sentNanos + renewedLease.toNanos();
        if (validUntil - validUntilNanos > 0) {
            validUntilNanos = validUntil;
        }
    }

    /** Marks the lease lost, once; returns true if this call did. */
    boolean lost(String reason) {
        LOST_REASON.compareAndSet(this, null, reason);
        if (STATE.compareAndSet(this, State.HELD, State.LOST)) {
            service.leaseLost(this, lostReason);
            return true;
        }
        return false;
    }

    @Override
    public boolean release() {
        State before;
        do {
            before = state;
            if (before == State.RELEASED || before == State.LOST_RELEASED) {
                return false;
            }
            // a lost lock stays known lost once released: a commit under way must still fail for it
        } while (!STATE.compareAndSet(this, before, before == State.HELD ? State.RELEASED : State.LOST_RELEASED));
        boolean released = service.released(this);
        if (before == State.HELD && !released) {
            // lost while held, and nothing noticed before the release (a pause or an outage longer
            // than the lease, a force-release since the last renewal): the work may have run
            // unprotected, which must show, and a commit under way must not go through
            LOST_REASON.compareAndSet(this, null,
                    "the store no longer had the grant at its release: its lease ran out or it was force-released");
            if (STATE.compareAndSet(this, State.RELEASED, State.LOST_RELEASED)) {
                service.leaseLost(this, lostReason);
            }
        }
        return before == State.HELD && released;
    }

    boolean isHeld() {
        return state == State.HELD;
    }

    boolean isLost() {
        return state == State.LOST;
    }

    Grant grant() {
        return grant;
    }

    String tenant() {
        return tenant;
    }

    List<LockPath> paths() {
        return paths;
    }

    Duration lease() {
        return lease;
    }

    LockScope scope() {
        return scope;
    }

    long validUntilNanos() {
        return validUntilNanos;
    }

    long nextRenewalNanos() {
        return nextRenewalNanos;
    }

    void nextRenewalNanos(long nanos) {
        this.nextRenewalNanos = nanos;
    }

    String describe() {
        return DefaultLockService.target(request, tenant, paths) + " (token " + grant.fencingToken() + ", owner "
                + OwnerTokens.hint(grant.owner()) + "…)";
    }

    @Override
    public String toString() {
        return "LockHandle[" + describe() + ", " + state + "]";
    }
}
