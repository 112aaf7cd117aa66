package dev.locks.store;

/**
 * The engine's side of a release that a store puts off until the caller's transaction ends. Until
 * then the grant must stay live, or a transaction outlasting the lease would let another node take
 * the lock before the work it guards is committed; so the engine keeps renewing the grant from
 * {@link #started} to {@link #ended}, as it did while the lock was held. Should the release still
 * fail once the transaction has ended, the store says so ({@link #failed}) and the engine retries it.
 */
public interface PendingRelease {

    /**
     * For releases that nothing renews meanwhile and nothing retries (the engine's own retries, made
     * outside any caller's transaction): a release after the caller's transaction that fails is left
     * to the grant's lease.
     */
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
     * The release the store made once the caller's transaction had ended failed: the engine retries
     * it (the transaction is over, so nothing it guarded is left uncommitted). Called at most once,
     * on the thread that ended the transaction, before {@link #ended}. Where nothing retries, the
     * grant's lease frees the lock.
     */
    default void failed() {
    }

    /**
     * The caller's transaction ended and the release was made, or {@link #failed}: stop renewing.
     * Called once, on the thread that ended the transaction, for every release a store takes into a
     * caller's transaction, also one that joined at once without {@link #started}.
     */
    void ended();
}
