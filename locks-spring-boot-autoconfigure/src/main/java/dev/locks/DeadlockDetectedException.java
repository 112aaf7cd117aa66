package dev.locks;

import java.util.List;

/**
 * Waiting would never end: the owners form a cycle, each holding what the next waits for (owner 1
 * holds {@code /a} and waits for {@code /b}; owner 2 holds {@code /b} and waits for {@code /a}).
 * The youngest waiter of the cycle receives this exception and stops waiting; the message names
 * the cycle. Nothing new was granted to it; what its owner held before is still held.
 */
public class DeadlockDetectedException extends LockException {

    private static final long serialVersionUID = 1L;

    private final transient List<LockHolder> cycle;

    /**
     * @param message the cycle, naming nodes, threads and paths
     * @param cycle for each owner in the cycle, the held lock the previous one waits for
     */
    public DeadlockDetectedException(String message, List<LockHolder> cycle) {
        super(message);
        this.cycle = List.copyOf(cycle);
    }

    /** @return the held locks that form the cycle, in order */
    public List<LockHolder> getCycle() {
        return cycle;
    }
}
