package dev.locks.store;

/**
 * The engine's side of a release that a store puts off until the caller's transaction ends. Until
 * then the grant must stay live, or a transaction outlasting the lease would let another node take
 * the lock before the work it guards is committed; so the engine keeps renewing the grant from
 * {@link #started} to {@link #ended}, as it did while the lock was held.
 */
public interface PendingRelease {

    /** For releases nothing renews in the meantime: a store's own retries, an unwatched handle. */
    PendingRelease NONE = new PendingRelease() {

        @Override
        public void started() {
        }

        @Override
        public void ended() {
        }
    };

    /**
     * The release waits for the caller's transaction: keep the grant's lease renewed. Called at most
     * once, from within {@link LockStore#release}, and always followed by {@link #ended}.
     */
    void started();

    /**
     * The caller's transaction ended and the release was made, or failed and was handed to the
     * engine's retries: stop renewing. Called once, on the thread that ended the transaction, for
     * every release a store takes into a caller's transaction, also one that joined at once without
     * {@link #started}.
     */
    void ended();
}
