package dev.locks.bench;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.management.ObjectName;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.locks.LockHandle;
import dev.locks.LockListener;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.CountingDataSource;
import dev.locks.testing.TestDatabase;

/**
 * Ten thousand locks held by one node under the watchdog: the statements one renewal round costs
 * (the watchdog must batch, not renew lock by lock) and the heap each held lock takes.
 */
class RenewalBenchmark {

    private static final int HELD = Integer.getInteger("locks.bench.heldLocks", 10_000);

    /** Renewed every lease/3 = 2 s. */
    private static final Duration LEASE = Duration.ofSeconds(6);

    private static final int ROUNDS = 2;

    @BeforeAll
    static void quiet() {
        BenchSetup.quietLogging();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(TestDatabase.class)
    void tenThousandLocksUnderWatchdogRenewal(TestDatabase database) throws Exception {
        try (BenchDatabase db = new BenchDatabase(database)) {
            CountingDataSource counting = new CountingDataSource(db.poolA());
            RenewedGrants renewals = new RenewedGrants();
            // no purge, so that the only statements while the locks sit are renewals
            JdbcLockService locks = db.ours(counting.dataSource(),
                    LockSettings.builder().nodeId("bench-a").purgeInterval(null).listener(renewals));
            // a first lock and release, so that lazily made objects (statement caches, the PostgreSQL listener) exist
            locks.acquire(LockRequest.paths("/warm-up").build()).release();
            Thread.sleep(500);

            long heapBefore = liveHeapBytes();
            Samples acquireTimes = new Samples();
            List<LockHandle> handles = acquireAll(locks, acquireTimes);
            long heapAfter = liveHeapBytes();
            counting.reset();
            renewals.reset();

            long deadline = System.nanoTime() + LEASE.multipliedBy(ROUNDS + 2).toNanos();
            while (renewals.grants.get() < ROUNDS * HELD && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            // the release listener's background probes are not renewals
            int statements = counting.operationStatements();
            int renewed = renewals.grants.get();
            int calls = renewals.calls.get();
            long invalid = handles.stream().filter(h -> !h.isValid()).count();

            Results.section("watchdog renewal of " + String.format("%,d", HELD) + " locks held by one node, lease "
                    + LEASE.toSeconds() + " s (" + db.describe() + ")");
            if (renewed < ROUNDS * HELD) {
                throw new IllegalStateException("The watchdog renewed only " + renewed + " grants in "
                        + LEASE.multipliedBy(ROUNDS + 2).toSeconds() + " s, expected " + ROUNDS * HELD);
            }
            // handles joined the watchdog over the time acquiring took, so a round (lease/3) is spread over its
            // ticks: count per renewal of every held lock once
            double perRound = statements * (double) HELD / renewed;
            Results.figure("statements per renewal of all " + HELD + " locks (" + renewed + " renewals in "
                    + calls + " watchdog batches)",
                    Results.format(perRound), "≤ " + HELD / 100 + " (batched, ≥ 100 locks a statement)", perRound <= HELD / 100.0);
            double bytesPerLock = (heapAfter - heapBefore) / (double) HELD;
            Results.figure("JVM heap per held lock (live objects by class histogram, before and after"
                    + (database == TestDatabase.H2 ? "; H2's own rows live in this heap too)" : ")"),
                    String.format("%.0f bytes", bytesPerLock), "≤ 1024 bytes", bytesPerLock <= 1024);
            Results.figure("leases lost while acquiring and holding under the watchdog", String.valueOf(invalid), "0", invalid == 0);
            Results.figure("acquire latency while filling, 4 threads: p50 / p99 / max", Results.millis(acquireTimes.median())
                    + " / " + Results.millis(acquireTimes.percentile(99)) + " / " + Results.millis(acquireTimes.max()), "", true);
            releaseAll(handles);
        }
    }

    private static List<LockHandle> acquireAll(JdbcLockService locks, Samples acquireTimes) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<LockHandle>> futures = new ArrayList<>();
            for (int i = 0; i < HELD; i++) {
                String path = "/held/" + i / 100 + "/lock-" + i;
                // under the watchdog at once, as the scoped forms are: acquiring all takes longer than a lease
                futures.add(pool.submit(() -> {
                    long begin = System.nanoTime();
                    LockHandle handle = locks.acquire(LockRequest.paths(path).exclusive().lease(LEASE).build());
                    acquireTimes.add(System.nanoTime() - begin);
                    return locks.keepRenewed(handle);
                }));
            }
            List<LockHandle> handles = new ArrayList<>(HELD);
            for (Future<LockHandle> f : futures) {
                handles.add(f.get());
            }
            return handles;
        }
        finally {
            pool.shutdown();
        }
    }

    private static void releaseAll(List<LockHandle> handles) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Boolean>> released = new ArrayList<>();
            for (LockHandle handle : handles) {
                released.add(pool.submit(handle::release));
            }
            for (Future<Boolean> f : released) {
                f.get();
            }
        }
        finally {
            pool.shutdown();
        }
    }

    /**
     * The bytes of live objects: HotSpot's class histogram, which collects fully first and counts what
     * is reachable. The used heap after {@code System.gc()} also counts what the collector left in
     * regions it did not clean, which moved H2's figure by more than a kilobyte per lock between runs.
     */
    private static long liveHeapBytes() throws Exception {
        String histogram = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                new Object[] { new String[0] }, new String[] { String[].class.getName() });
        Matcher total = Pattern.compile("(?m)^Total\\s+\\d+\\s+(\\d+)").matcher(histogram);
        if (!total.find()) {
            throw new IllegalStateException("No total in the class histogram:\n" + histogram);
        }
        return Long.parseLong(total.group(1));
    }

    /** Counts what the watchdog reports renewed. */
    private static final class RenewedGrants implements LockListener {

        final AtomicInteger grants = new AtomicInteger();

        final AtomicInteger calls = new AtomicInteger();

        @Override
        public void renewed(int count) {
            grants.addAndGet(count);
            calls.incrementAndGet();
        }

        void reset() {
            grants.set(0);
            calls.set(0);
        }
    }
}
