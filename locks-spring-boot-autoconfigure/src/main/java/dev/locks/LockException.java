package dev.locks;

/**
 * Base of every exception the library raises about a lock (as opposed to bad arguments, which are
 * {@link IllegalArgumentException}s such as {@link InvalidLockPathException}).
 */
public class LockException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what happened, naming the lock
     */
    public LockException(String message) {
        super(message);
    }

    /**
     * @param message what happened, naming the lock
     * @param cause the underlying failure
     */
    public LockException(String message, Throwable cause) {
        super(message, cause);
    }
}
