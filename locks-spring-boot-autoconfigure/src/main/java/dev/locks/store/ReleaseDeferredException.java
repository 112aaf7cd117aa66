package dev.locks.store;

import dev.locks.LockUnavailableException;

/**
 * A release that failed inside the caller's transaction, which the store has arranged to repeat on
 * its own when that transaction ends. The engine must not retry it sooner: a release before the
 * caller's commit would free the lock while the work it guards is still uncommitted.
 */
public class ReleaseDeferredException extends LockUnavailableException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message which lock could not be released, and why
     * @param cause the store's failure
     */
    public ReleaseDeferredException(String message, Throwable cause) {
        super(message, cause);
    }
}
