package dev.locks;

/**
 * Work run under a lock by {@link LockService#call}. Unlike {@link java.util.concurrent.Callable},
 * the exception type is inferred, so a lambda that throws nothing checked needs no try/catch, and
 * one that throws {@code IOException} passes it through unchanged.
 *
 * @param <T> the result
 * @param <E> what the work may throw
 */
@FunctionalInterface
public interface CheckedCallable<T, E extends Exception> {

    /**
     * @return the work's result
     * @throws E the work's failure, passed to the caller unchanged
     */
    T call() throws E;
}
