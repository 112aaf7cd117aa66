package dev.locks.store;

/**
 * The outcome of {@link LockStore#releaseAndGrant}: whether the released grant was still live, and
 * what the waiter it was handed to got.
 *
 * @param released true if a live grant was released, as {@link LockStore#release} answers
 * @param next the waiter's grant, or a busy result without holders when something else is still in
 *             its way (the waiter then looks for itself)
 */
public record HandOff(boolean released, GrantResult next) {
}
