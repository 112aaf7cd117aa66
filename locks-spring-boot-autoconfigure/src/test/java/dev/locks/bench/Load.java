package dev.locks.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs an operation on a number of threads for a fixed time and measures each call, and the CPU
 * time the calling threads spent (with H2 that is the database's work too; with a server it is the
 * client's share, which decides throughput when the cores are shared). A failing
 * operation fails the round: a benchmark of locks that were not actually taken would be worthless.
 */
final class Load {

    /** One operation, e.g. acquire and release one lock. */
    @FunctionalInterface
    interface Op {
        /**
         * @param thread the worker's index, 0 to threads-1
         * @param seq a number no other call of this load receives
         */
        void run(int thread, long seq) throws Exception;
    }

    /** An operation that measures only part of itself, e.g. the acquire but not the release. */
    @FunctionalInterface
    interface TimedOp {
        /** @return the nanoseconds to record for this call */
        long run(int thread, long seq) throws Exception;
    }

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private Load() {
    }

    static Round run(int threads, Duration length, AtomicLong sequence, Op op) {
        return runTimed(threads, length, sequence, (thread, seq) -> {
            long begin = System.nanoTime();
            op.run(thread, seq);
            return System.nanoTime() - begin;
        });
    }

    static Round runTimed(int threads, Duration length, AtomicLong sequence, TimedOp op) {
        Samples latencies = new Samples();
        AtomicLong done = new AtomicLong();
        AtomicLong cpu = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        long[] window = new long[2];
        for (int t = 0; t < threads; t++) {
            int thread = t;
            Thread worker = new Thread(() -> {
                try {
                    start.await();
                    long deadline = window[1];
                    long cpuBefore = THREADS.getCurrentThreadCpuTime();
                    while (failure.get() == null) {
                        if (System.nanoTime() - deadline >= 0) {
                            break;
                        }
                        latencies.add(op.run(thread, sequence.getAndIncrement()));
                        done.incrementAndGet();
                    }
                    cpu.addAndGet(THREADS.getCurrentThreadCpuTime() - cpuBefore);
                }
                catch (Throwable ex) {
                    failure.compareAndSet(null, ex);
                }
            }, "bench-" + t);
            worker.setDaemon(true);
            workers.add(worker);
            worker.start();
        }
        window[0] = System.nanoTime();
        window[1] = window[0] + length.toNanos();
        start.countDown();
        for (Thread worker : workers) {
            try {
                worker.join();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", ex);
            }
        }
        long elapsed = System.nanoTime() - window[0];
        if (failure.get() != null) {
            throw new IllegalStateException("A benchmark operation failed: " + failure.get(), failure.get());
        }
        return new Round(done.get(), elapsed, latencies, cpu.get());
    }
}
