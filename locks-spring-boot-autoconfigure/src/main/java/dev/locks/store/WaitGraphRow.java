package dev.locks.store;

import dev.locks.LockHolder;

/**
 * A row of the wait-for snapshot: a waiting request's path, or a path held by a waiting owner.
 *
 * @param owner the full owner token (never shown to users)
 * @param waiting true for a waiting request, false for a held grant
 * @param holder the row, as shown in messages; for a waiter its lock id is its ticket
 */
public record WaitGraphRow(String owner, boolean waiting, LockHolder holder) {
}
