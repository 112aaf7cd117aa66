package dev.locks;

/**
 * The lock store could not be reached or failed, so nothing is known about the lock. Never raised
 * for a lock that is merely busy (that is {@link LockTimeoutException}); the protected work never
 * runs unlocked because of it.
 */
public class LockUnavailableException extends LockException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message which lock could not be taken or released
     * @param cause the store's failure
     */
    public LockUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
