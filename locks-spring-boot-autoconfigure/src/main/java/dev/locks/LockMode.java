package dev.locks;

/**
 * How a path lock is held: {@link #EXCLUSIVE} (write) or {@link #SHARED} (read).
 *
 * <p>A lock on a path covers its whole subtree and implies an intention on every ancestor
 * (Gray's multiple-granularity locking). Two locks whose paths are equal or nested conflict when
 * at least one of them is exclusive.
 */
public enum LockMode {

    /** Write lock: conflicts with every other lock on the same path, its ancestors or its subtree. */
    EXCLUSIVE,

    /** Read lock: conflicts only with exclusive locks on the same path, its ancestors or its subtree. */
    SHARED;

    /**
     * Whether a lock in this mode and one in {@code other} on nested or equal paths exclude each other.
     *
     * @param other the other lock's mode
     * @return true unless both are shared
     */
    public boolean conflictsWith(LockMode other) {
        return this == EXCLUSIVE || other == EXCLUSIVE;
    }

    /**
     * Whether a lock held in this mode already grants what a request in {@code wanted} asks for.
     *
     * @param wanted the mode asked for
     * @return true if this mode is equal or stronger
     */
    public boolean covers(LockMode wanted) {
        return this == EXCLUSIVE || wanted == SHARED;
    }
}
