package dev.locks.bench;

/**
 * One measured round of one contender: operations done in the round's time, and the latency of
 * each operation in nanoseconds.
 *
 * @param operations completed operations
 * @param nanos wall time of the round
 * @param latencies per-operation latency, nanoseconds
 * @param cpuNanos CPU time of the calling threads
 */
record Round(long operations, long nanos, Samples latencies, long cpuNanos) {

    double cpuNanosPerOperation() {
        return operations == 0 ? Double.NaN : cpuNanos / (double) operations;
    }

    double perSecond() {
        return operations * 1e9 / nanos;
    }
}
