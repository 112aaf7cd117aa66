package dev.locks;

import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Distributed locks kept in a shared store: hierarchical path locks, cluster singletons and
 * counting semaphores.
 *
 * <p><b>Owners.</b> {@link #acquire} and {@link #tryAcquire} give every call a new owner: two handles
 * taken by one thread conflict exactly as two nodes would. The scoped forms ({@link #call},
 * {@link #run}, {@link #enter} and the annotations) share one owner per thread while the scope
 * lasts, so a nested call on a path the thread already covers in an equal or stronger mode is
 * granted without touching the store, and the lease is renewed by a watchdog while the work runs.
 */
public interface LockService {

    /**
     * Takes the locks, waiting up to the request's {@code waitAtMost}.
     *
     * @param request what to lock
     * @return the granted handle; release it (try-with-resources)
     * @throws LockTimeoutException if still busy after the wait, naming the holders
     * @throws LockUnavailableException if the store cannot be reached
     * @throws LockInterruptedException if the thread is interrupted while waiting
     * @throws DeadlockDetectedException if waiting would never end: owners wait for each other in a cycle
     * @throws IllegalArgumentException if a path or name is invalid
     */
    LockHandle acquire(LockRequest request);

    /**
     * Takes the locks if they are free now, without waiting.
     *
     * @param request what to lock; its wait is ignored
     * @return the handle, or empty if a conflicting lock is held
     * @throws LockUnavailableException if the store cannot be reached
     */
    Optional<LockHandle> tryAcquire(LockRequest request);

    /**
     * Runs {@code work} holding the locks: acquires (waiting), renews the lease while the work runs,
     * releases afterwards whatever happens. A release that fails (the store unreachable) is logged
     * and added to the work's exception as suppressed; it never replaces the work's outcome, and it
     * is retried in the background until it succeeds or the lease frees the locks.
     *
     * @param request what to lock
     * @param work the work
     * @param <T> the result
     * @param <E> what the work may throw
     * @return the work's result
     * @throws E the work's own exception, unchanged
     */
    <T, E extends Exception> T call(LockRequest request, CheckedCallable<T, E> work) throws E;

    /**
     * Runs {@code work} holding the locks; see {@link #call}.
     *
     * @param request what to lock
     * @param work the work
     */
    void run(LockRequest request, Runnable work);

    /**
     * Enters the current thread's lock scope: like {@link #call} for code that cannot pass a
     * callback (interceptors). The handle is renewed by the watchdog until released and re-enters
     * locks the scope already holds. Release it on the same thread.
     *
     * @param request what to lock
     * @return the handle
     */
    LockHandle enter(LockRequest request);

    /**
     * Like {@link #enter} but without waiting.
     *
     * @param request what to lock
     * @return the handle, or empty when busy
     */
    Optional<LockHandle> tryEnter(LockRequest request);

    /**
     * Batch claim: tries each request on its own, without waiting, and returns the handles of those
     * granted, in order. A script processing rows skips the ones another node holds. If a request
     * fails (an invalid path, the store unreachable), those granted before it are released and the
     * exception is thrown: nothing stays held that the caller has no handle for.
     *
     * @param requests independent requests
     * @return the granted handles
     */
    List<LockHandle> tryAcquireEach(Collection<LockRequest> requests);

    /**
     * Who holds live locks overlapping {@code path} (the path, its ancestors and its subtree).
     *
     * @param tenant the tenant, or null for the default
     * @param path a path
     * @return the holders, oldest first
     */
    List<LockHolder> holders(String tenant, String path);
}
