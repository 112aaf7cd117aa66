package dev.locks;

/**
 * The thread was interrupted while waiting for a lock. Nothing is held; the thread's interrupt
 * flag is set again.
 */
public class LockInterruptedException extends LockException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message which request was waiting
     * @param cause the interruption
     */
    public LockInterruptedException(String message, InterruptedException cause) {
        super(message, cause);
    }
}
