package dev.locks.jdbc;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Lines up one lock store's grant transactions that would lock the same node row exclusively,
 * before they take a connection, where the database has no shared row locks (H2: every path grant
 * of a tenant locks the tenant's root row).
 *
 * <p>Without it, the threads of one tenant wait inside H2 for the root row. H2 wakes every thread
 * waiting for a transaction when it ends, and all but one of them go back to sleep: on eight
 * threads that cost a third of their CPU, and each waiting thread held a pooled connection. Here the
 * waiting threads park on a lock that wakes one of them, and a thread that is running takes the lock
 * first. The node row still decides: the queue is only an optimisation, and a grant that cannot join
 * it within {@link #MAX_WAIT} goes to the database without it, so that a grant held up in the
 * database (another node's transaction) holds up this store's other grants of the tenant no longer
 * than the row lock would.
 *
 * <p>The lock is not fair, on purpose: a strictly fair one served every grant through a thread
 * woken from sleep, and eight threads of one tenant on H2 made 40 % fewer grants (BENCHMARKS.md,
 * twenty-third pass). The price is the tail: a waiter can lose its turn to running threads, so that
 * one grant in a hundred waited about 7.6 ms there rather than 4–5 ms without the queue, and at
 * worst it goes to the database without a place after {@link #MAX_WAIT}.
 *
 * <p>Keys share a fixed number of stripes, so memory does not grow with tenants. Two tenants in one
 * stripe take turns with each other, and a grant held up in the database holds up the other tenants
 * of its stripe for up to {@link #MAX_WAIT}.
 */
final class LocalGrantQueue {

    /** How long a grant waits in the queue at most: a second, far beyond a grant transaction. */
    static final Duration MAX_WAIT = Duration.ofSeconds(1);

    private static final int STRIPES = 256;

    private final ReentrantLock[] stripes = new ReentrantLock[STRIPES];

    private final long maxWaitNanos;

    LocalGrantQueue() {
        this(MAX_WAIT);
    }

    /** @param maxWait how long a grant waits in the queue at most before it goes on without a place */
    LocalGrantQueue(Duration maxWait) {
        this.maxWaitNanos = maxWait.toNanos();
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new ReentrantLock();
        }
    }

    /**
     * Joins the queue of the grant's exclusively locked node rows.
     *
     * @param locks the node locks the grant transaction takes
     * @return the place in the queue, to {@link Place#close close} once the transaction has ended
     */
    Place enter(List<SqlDialect.NodeLock> locks) {
        int stripe = -1;
        for (SqlDialect.NodeLock lock : locks) {
            if (lock.exclusive()) {
                if (stripe >= 0) {
                    // more than one row: no grant of a database without shared locks takes these
                    return Place.NONE;
                }
                stripe = stripeOf(lock.key());
            }
        }
        if (stripe < 0) {
            return Place.NONE;
        }
        ReentrantLock queue = stripes[stripe];
        try {
            if (queue.tryLock() || queue.tryLock(maxWaitNanos, TimeUnit.NANOSECONDS)) {
                return queue::unlock;
            }
        }
        catch (InterruptedException ex) {
            // the grant goes on as it would without the queue; its caller sees the interrupt
            Thread.currentThread().interrupt();
        }
        return Place.NONE;
    }

    private static int stripeOf(byte[] key) {
        // keys are SHA-256 digests: any byte is uniform
        return key[0] & (STRIPES - 1);
    }

    /** A place in the queue, left once the grant transaction has ended. */
    @FunctionalInterface
    interface Place extends AutoCloseable {

        Place NONE = () -> {
        };

        @Override
        void close();
    }
}
