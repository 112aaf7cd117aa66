package dev.locks.bench;

import java.util.Arrays;

/**
 * Measured values (latencies in nanoseconds, or rates) with order statistics. Percentiles are
 * nearest-rank, so a reported p99 is a value that was actually observed.
 */
final class Samples {

    private long[] values = new long[1024];

    private int size;

    synchronized void add(long value) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = value;
    }

    synchronized void addAll(Samples other) {
        long[] theirs = other.snapshot();
        for (long v : theirs) {
            add(v);
        }
    }

    synchronized int size() {
        return size;
    }

    double median() {
        return percentile(50);
    }

    /** @param p 0 to 100 */
    double percentile(double p) {
        long[] sorted = snapshot();
        if (sorted.length == 0) {
            return Double.NaN;
        }
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    double max() {
        return percentile(100);
    }

    private synchronized long[] snapshot() {
        return Arrays.copyOf(values, size);
    }
}
