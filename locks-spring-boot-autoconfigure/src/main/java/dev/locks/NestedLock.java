package dev.locks;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A scoped acquisition nested in others of the same thread, whose handles cover some or all of
 * its paths: it relies on those enclosing handles, and holds a grant of its own only for the paths
 * they do not cover. It is valid while all of them are, so that a handle still valid at the end
 * held every one of its paths throughout. Releasing it releases its own grant, or only leaves the
 * scope; the enclosing handles keep their locks.
 */
final class NestedLock implements LockHandle {

    private final LockRequest request;

    /** The grant of the paths no enclosing handle covered, or null if they covered them all. */
    private final LockHandle own;

    private final List<LockHandle> enclosing;

    private final LockScope scope;

    private volatile boolean released;

    /**
     * @param own the handle granted for the uncovered paths, or null if there were none
     * @param enclosing the handles of the scope covering the other paths, at least one
     */
    NestedLock(LockRequest request, LockHandle own, List<LockHandle> enclosing, LockScope scope) {
        if (enclosing.isEmpty()) {
            throw new IllegalArgumentException("A nested lock relies on at least one enclosing handle");
        }
        this.request = request;
        this.own = own;
        this.enclosing = enclosing;
        this.scope = scope;
    }

    @Override
    public LockRequest request() {
        return request;
    }

    /** The newest of the tokens: no earlier grant of any of its paths has a larger one. */
    @Override
    public long fencingToken() {
        long token = Long.MIN_VALUE;
        for (LockHandle handle : all()) {
            token = Math.max(token, handle.fencingToken());
        }
        return token;
    }

    /** The earliest expiry: past it, some path may no longer be held. */
    @Override
    public Instant expiresAt() {
        Instant earliest = null;
        for (LockHandle handle : all()) {
            Instant at = handle.expiresAt();
            if (earliest == null || at.isBefore(earliest)) {
                earliest = at;
            }
        }
        return earliest;
    }

    @Override
    public boolean isValid() {
        if (released) {
            return false;
        }
        for (LockHandle handle : all()) {
            if (!handle.isValid()) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void checkValid() {
        if (released) {
            throw new LockLostException("Nested lock " + request + " was released");
        }
        if (own != null) {
            own.checkValid();
        }
        for (LockHandle handle : enclosing) {
            if (!handle.isValid()) {
                try {
                    handle.checkValid();
                }
                catch (LockLostException ex) {
                    throw new LockLostException("Nested lock " + request + " relies on an enclosing lock that is no"
                            + " longer held: " + ex.getMessage());
                }
                // valid again by now (a renewal landed): the next call judges afresh
            }
        }
    }

    /** @return why a lock this one relies on is known lost, or null ({@link LockHandles#knownLost}) */
    String knownLostReason() {
        for (LockHandle handle : all()) {
            String why = LockHandles.knownLost(handle);
            if (why != null) {
                return why;
            }
        }
        return null;
    }

    @Override
    public boolean renew() {
        return renewAll(null);
    }

    @Override
    public boolean renew(Duration lease) {
        LockRequest.Builder.checkDuration("lease", lease, false);
        return renewAll(lease);
    }

    /**
     * Renews its own grant. The enclosing handles keep their own leases, which the watchdog renews:
     * a shorter lease given here must not cut theirs. Only whether they are still valid counts.
     */
    private boolean renewAll(Duration lease) {
        if (released) {
            return false;
        }
        boolean all = own == null || (lease == null ? own.renew() : own.renew(lease));
        for (LockHandle handle : enclosing) {
            all &= handle.isValid();
        }
        return all;
    }

    @Override
    public synchronized boolean release() {
        if (released) {
            return false;
        }
        released = true;
        if (own != null) {
            return own.release();
        }
        scope.leave(this);
        return true;
    }

    private List<LockHandle> all() {
        if (own == null) {
            return enclosing;
        }
        List<LockHandle> all = new ArrayList<>(enclosing.size() + 1);
        all.add(own);
        all.addAll(enclosing);
        return all;
    }

    @Override
    public String toString() {
        return "LockHandle[nested " + request + (own != null ? ", own grant " + own : "") + " inside " + enclosing + "]";
    }
}
