package dev.locks.autoconfigure;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.locks.CheckedCallable;
import dev.locks.LockHandle;
import dev.locks.LockHolder;
import dev.locks.LockRequest;
import dev.locks.LockService;
import dev.locks.jdbc.JdbcLockService;

/** An application's own lock service: records the scoped requests and delegates. */
class RecordingLockService implements LockService, AutoCloseable {

    final List<String> entered = new CopyOnWriteArrayList<>();

    private final JdbcLockService delegate;

    RecordingLockService(JdbcLockService delegate) {
        this.delegate = delegate;
    }

    @Override
    public LockHandle acquire(LockRequest request) {
        return delegate.acquire(request);
    }

    @Override
    public Optional<LockHandle> tryAcquire(LockRequest request) {
        return delegate.tryAcquire(request);
    }

    @Override
    public <T, E extends Exception> T call(LockRequest request, CheckedCallable<T, E> work) throws E {
        return delegate.call(request, work);
    }

    @Override
    public void run(LockRequest request, Runnable work) {
        delegate.run(request, work);
    }

    @Override
    public LockHandle enter(LockRequest request) {
        entered.add(request.toString());
        return delegate.enter(request);
    }

    @Override
    public Optional<LockHandle> tryEnter(LockRequest request) {
        entered.add(request.toString());
        return delegate.tryEnter(request);
    }

    @Override
    public List<LockHandle> tryAcquireEach(Collection<LockRequest> requests) {
        return delegate.tryAcquireEach(requests);
    }

    @Override
    public List<LockHolder> holders(String tenant, String path) {
        return delegate.holders(tenant, path);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
