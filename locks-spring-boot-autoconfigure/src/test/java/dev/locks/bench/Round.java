package dev.locks.bench;

/**
 * One measured round of one contender: operations done in the round's time, and the latency of
 * each operation in nanoseconds.
 *
 * @param operations completed operations
 * @param nanos wall time of the round
 * @param latencies per-operation latency, nanoseconds
 * @param cpuNanos CPU time of the calling threads
 * @param serverCpuNanos CPU time of the database server's processes during the round, or
 *                       {@link ServerCpu#UNKNOWN}
 */
record Round(long operations, long nanos, Samples latencies, long cpuNanos, long serverCpuNanos) {

    Round(long operations, long nanos, Samples latencies, long cpuNanos) {
        this(operations, nanos, latencies, cpuNanos, ServerCpu.UNKNOWN);
    }

    Round withServerCpu(long serverCpuNanos) {
        return new Round(operations, nanos, latencies, cpuNanos, serverCpuNanos);
    }

    /** @return the server's CPU time per operation, or NaN if unknown */
    double serverCpuNanosPerOperation() {
        return operations == 0 || serverCpuNanos == ServerCpu.UNKNOWN ? Double.NaN
                : serverCpuNanos / (double) operations;
    }

    double cpuNanosPerOperation() {
        return operations == 0 ? Double.NaN : cpuNanos / (double) operations;
    }

    double perSecond() {
        return operations * 1e9 / nanos;
    }
}
