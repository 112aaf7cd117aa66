package dev.locks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Caps how often one node polls the store for waiting requests, however many threads wait: each
 * poll takes the next free slot, slots are {@code 1/rate} apart. Waiters woken by a release still
 * poll at once when the budget is idle.
 */
final class PollBudget {

    private final long intervalNanos;

    private final AtomicLong nextSlot = new AtomicLong(System.nanoTime());

    PollBudget(int pollsPerSecond) {
        if (pollsPerSecond < 1) {
            throw new IllegalArgumentException("maxPollsPerSecond must be positive, was " + pollsPerSecond);
        }
        this.intervalNanos = TimeUnit.SECONDS.toNanos(1) / pollsPerSecond;
    }

    /**
     * Waits for a slot.
     *
     * @param deadlineNanos give up rather than take a slot after this
     * @return false if no slot was free before the deadline
     */
    boolean await(long deadlineNanos) throws InterruptedException {
        long slot;
        while (true) {
            long now = System.nanoTime();
            long next = nextSlot.get();
            slot = next - now > 0 ? next : now;
            if (slot - deadlineNanos > 0) {
                return false;
            }
            if (nextSlot.compareAndSet(next, slot + intervalNanos)) {
                break;
            }
        }
        long delay = slot - System.nanoTime();
        if (delay > 0) {
            TimeUnit.NANOSECONDS.sleep(delay);
        }
        return true;
    }
}
