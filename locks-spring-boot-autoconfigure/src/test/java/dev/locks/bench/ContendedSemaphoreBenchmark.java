package dev.locks.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.locks.LockHandle;
import dev.locks.LockRequest;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.CountingDataSource;
import dev.locks.testing.TestDatabase;

/**
 * What waiting for a busy semaphore costs the database: ten threads on two nodes (or one) share three
 * permits (other counts through {@code locks.bench.semaphoreThreads} and {@code locks.bench.semaphorePermits}), each holding its permit {@value #HOLD_MILLIS} ms, and the benchmark counts the statements
 * both nodes sent (looks, grants, releases, queue rows, renewals) per permit taken, and how many
 * permits a release handed straight to a waiter. A waiter woken for nothing costs a statement.
 */
class ContendedSemaphoreBenchmark {

    private static final int HOLD_MILLIS = 10;

    private static final int THREADS = Integer.getInteger("locks.bench.semaphoreThreads", 10);

    /** 3 by default; a semaphore of more permits needs more threads to stay busy */
    private static final int PERMITS = Integer.getInteger("locks.bench.semaphorePermits", 3);

    /** 2 by default; 1 puts all ten threads on one node, where every release is seen at once */
    private static final int NODES = Integer.getInteger("locks.bench.semaphoreNodes", 2);

    private static final int ENTRIES_PER_THREAD = Integer.getInteger("locks.bench.semaphoreEntries", 40);

    @BeforeAll
    static void quiet() {
        BenchSetup.quietLogging();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(TestDatabase.class)
    void statementsPerPermitUnderContention(TestDatabase database) throws Exception {
        try (BenchDatabase db = new BenchDatabase(database)) {
            CountingDataSource countingA = new CountingDataSource(db.poolA());
            CountingDataSource countingB = new CountingDataSource(db.poolB());
            List<JdbcLockService> nodes = List.of(db.ours("node-a", countingA.dataSource()),
                    db.ours("node-b", countingB.dataSource())).subList(0, NODES);
            LockRequest permit = LockRequest.semaphore("exports", PERMITS).waitAtMost(Duration.ofSeconds(60)).build();
            // once, so that schema checks and first connections are not counted
            nodes.forEach(node -> node.acquire(permit).release());
            countingA.reset();
            countingB.reset();
            long handOffsBefore = nodes.stream().mapToLong(JdbcLockService::handOffCount).sum();
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            long started = System.nanoTime();
            try {
                List<Future<?>> workers = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    JdbcLockService node = nodes.get(t % nodes.size());
                    workers.add(pool.submit(() -> {
                        for (int i = 0; i < ENTRIES_PER_THREAD; i++) {
                            try (LockHandle h = node.acquire(permit)) {
                                Thread.sleep(HOLD_MILLIS);
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> worker : workers) {
                    worker.get(10, TimeUnit.MINUTES);
                }
            }
            finally {
                pool.shutdownNow();
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            int entries = THREADS * ENTRIES_PER_THREAD;
            long handOffs = nodes.stream().mapToLong(JdbcLockService::handOffCount).sum() - handOffsBefore;
            int statements = countingA.statements() + countingB.statements();
            Results.heading("busy semaphore: " + THREADS + " threads on " + NODES + " node(s), " + PERMITS + " permits, "
                    + HOLD_MILLIS + " ms holds, "
                    + entries + " permits (" + db.describe() + ")");
            Results.note("| measure | value |\n|---|---|");
            Results.line("| statements per permit (both nodes) | " + Results.format((double) statements / entries) + " |");
            Results.line("| permits handed over by a release | " + handOffs + " of " + entries + " |");
            Results.line("| permits per second (" + PERMITS + " / " + HOLD_MILLIS + " ms = " + PERMITS * 1000 / HOLD_MILLIS
                    + " at most) | "
                    + Results.format(entries / seconds) + " |");
        }
    }
}
