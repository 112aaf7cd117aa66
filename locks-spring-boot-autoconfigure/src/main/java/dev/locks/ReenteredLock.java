package dev.locks;

import java.time.Duration;
import java.time.Instant;

/**
 * A nested scoped acquisition that the thread's scope already covered: no store round trip.
 * Releasing it only leaves the scope; the outer handle keeps the lock.
 */
final class ReenteredLock implements LockHandle {

    private final LockRequest request;

    private final LockHandle outer;

    private final LockScope scope;

    private volatile boolean released;

    ReenteredLock(LockRequest request, LockHandle outer, LockScope scope) {
        this.request = request;
        this.outer = outer;
        this.scope = scope;
    }

    @Override
    public LockRequest request() {
        return request;
    }

    @Override
    public long fencingToken() {
        return outer.fencingToken();
    }

    @Override
    public Instant expiresAt() {
        return outer.expiresAt();
    }

    @Override
    public boolean isValid() {
        return !released && outer.isValid();
    }

    @Override
    public void checkValid() {
        if (released) {
            throw new LockLostException("Re-entered lock " + request + " was released");
        }
        outer.checkValid();
    }

    @Override
    public boolean renew() {
        return !released && outer.renew();
    }

    @Override
    public boolean renew(Duration lease) {
        return !released && outer.renew(lease);
    }

    @Override
    public synchronized boolean release() {
        if (released) {
            return false;
        }
        released = true;
        scope.leave(this);
        return true;
    }

    @Override
    public String toString() {
        return "LockHandle[re-entered " + request + " inside " + outer + "]";
    }
}
