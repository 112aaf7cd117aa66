package dev.locks;

/**
 * A held lock's lease ran out before it was renewed, or the lock was force-released: another owner
 * may hold it now. Raised by {@link LockHandle#checkValid()}.
 */
public class LockLostException extends LockException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message which lock was lost and why
     */
    public LockLostException(String message) {
        super(message);
    }
}
