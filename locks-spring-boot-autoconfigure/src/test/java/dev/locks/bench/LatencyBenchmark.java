package dev.locks.bench;

import static dev.locks.bench.BenchSetup.ROUND;
import static dev.locks.bench.BenchSetup.ROUNDS;
import static dev.locks.bench.BenchSetup.WARMUP_ROUNDS;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.locks.LockHandle;
import dev.locks.LockRequest;
import dev.locks.LockService;
import dev.locks.LockSettings;
import dev.locks.testing.TestDatabase;

/**
 * How acquire latency grows with what is in the tables and with path depth: this library against
 * itself, in interleaved rounds on the same pool. Hierarchy must not make the common case slow.
 */
class LatencyBenchmark {

    /** Live locks held by another node in the same tenant. */
    private static final int LIVE_LOCKS = Integer.getInteger("locks.bench.liveLocks", 100_000);

    private static final String LIVE_LOCKS_TEXT = String.format("%,d", LIVE_LOCKS);

    // few paths a request: the conflict query has a branch per path, and with 100,000 rows in the tenant a
    // 100-path request costs PostgreSQL ~0.5 s of planning and a parallel plan (see BENCHMARKS.md)
    private static final int PATHS_PER_REQUEST = 10;

    /** The probes cycle through this many paths, so that a path's first use is not measured. */
    private static final int PROBE_PATHS = 64;

    @BeforeAll
    static void quiet() {
        BenchSetup.quietLogging();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(TestDatabase.class)
    void acquireLatencyWithManyLiveLocksInTheTenant(TestDatabase database) throws Exception {
        try (BenchDatabase db = new BenchDatabase(database)) {
            String crowdedTables = TestDatabase.uniquePrefix();
            LockService empty = db.ours("bench-a", db.poolA());
            LockService crowded = db.oursOnOwnTables(db.poolA(), crowdedTables, LockSettings.builder().nodeId("bench-a"));
            LockService elsewhere = db.oursOnTables(db.poolB(), crowdedTables,
                    LockSettings.builder().nodeId("bench-b").maxPathsPerRequest(PATHS_PER_REQUEST));
            long started = System.nanoTime();
            fill(elsewhere);
            long live = liveRows(db, crowdedTables);
            if (live != LIVE_LOCKS) {
                throw new IllegalStateException("Expected " + LIVE_LOCKS + " live lock rows, found " + live);
            }
            Duration fillTime = Duration.ofNanos(System.nanoTime() - started);
            AtomicLong seq = new AtomicLong();
            Map<String, Interleaved.Result> results = new Interleaved(WARMUP_ROUNDS, ROUNDS)
                    .add("none", () -> Load.runTimed(1, ROUND, seq, (t, n) -> timedAcquire(empty, "/t/folder-" + n % PROBE_PATHS + "/file")))
                    .add("crowded", () -> Load.runTimed(1, ROUND, seq, (t, n) -> timedAcquire(crowded, "/t/folder-" + n % PROBE_PATHS + "/file")))
                    .run();
            Results.section("acquire latency, " + LIVE_LOCKS_TEXT + " live locks of another node in the tenant vs none ("
                    + db.describe() + ")");
            compareLatency("with " + LIVE_LOCKS_TEXT + " live locks vs none", results.get("crowded"),
                    results.get("none"), 1.2);
            Results.note("(filling took " + fillTime.toSeconds() + " s: " + LIVE_LOCKS / PATHS_PER_REQUEST + " requests of "
                    + PATHS_PER_REQUEST + " paths /t/held-i/lock-j; probes lock /t/folder-k/file)");
        }
    }

    /**
     * The same question put to ShedLock, as context for the target above: how much 100,000 rows in its
     * table slow a single-key lock that has no hierarchy to check.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(TestDatabase.class)
    void shedLockLatencyWithManyLockedNames(TestDatabase database) throws Exception {
        try (BenchDatabase db = new BenchDatabase(database)) {
            LockProvider empty = db.shedLock(db.poolA());
            String crowdedTable = TestDatabase.uniquePrefix();
            LockProvider crowded = db.shedLockOnOwnTable(db.poolA(), crowdedTable);
            long locked = PeerTables.lockShedLockNames(db.poolA(), crowdedTable, "held-", LIVE_LOCKS,
                    Instant.now().plus(Duration.ofDays(1)));
            if (locked != LIVE_LOCKS) {
                throw new IllegalStateException("Expected " + LIVE_LOCKS + " locked names, found " + locked);
            }
            AtomicLong seq = new AtomicLong();
            Map<String, Interleaved.Result> results = new Interleaved(WARMUP_ROUNDS, ROUNDS)
                    .add("none", () -> Load.runTimed(1, ROUND, seq, (t, n) -> timedLock(empty, "folder-" + n % PROBE_PATHS)))
                    .add("crowded", () -> Load.runTimed(1, ROUND, seq, (t, n) -> timedLock(crowded, "folder-" + n % PROBE_PATHS)))
                    .run();
            Results.section("ShedLock's lock latency, " + LIVE_LOCKS_TEXT + " locked names in its table vs none ("
                    + db.describe() + ")");
            compareLatency("with " + LIVE_LOCKS_TEXT + " locked names vs none", results.get("crowded"),
                    results.get("none"), Double.NaN);
            Results.note("(context for ours above, no target: ShedLock's lock is one row's UPDATE by primary key)");
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(TestDatabase.class)
    void acquireLatencyOfDeepPaths(TestDatabase database) {
        try (BenchDatabase db = new BenchDatabase(database)) {
            LockService locks = db.ours("bench-a", db.poolA());
            String deep = "/d" + "/s".repeat(18);
            AtomicLong seq = new AtomicLong();
            Map<String, Interleaved.Result> results = new Interleaved(WARMUP_ROUNDS, ROUNDS)
                    .add("depth 2", () -> Load.runTimed(1, ROUND, seq, (t, n) -> timedAcquire(locks, "/d/p-" + n % PROBE_PATHS)))
                    .add("depth 20", () -> Load.runTimed(1, ROUND, seq, (t, n) -> timedAcquire(locks, deep + "/p-" + n % PROBE_PATHS)))
                    .run();
            Results.section("acquire latency, depth-20 paths vs depth-2 paths (" + db.describe() + ")");
            compareLatency("depth 20 vs depth 2", results.get("depth 20"), results.get("depth 2"), 1.5);
        }
    }

    /** Acquires and releases; returns the time the acquire took. */
    private static long timedAcquire(LockService locks, String path) {
        long begin = System.nanoTime();
        LockHandle handle = locks.acquire(LockRequest.paths(path).exclusive().build());
        long took = System.nanoTime() - begin;
        if (!handle.release()) {
            throw new IllegalStateException("The lock on " + path + " was gone before its release");
        }
        return took;
    }

    /** Locks and unlocks; returns the time the lock took. */
    private static long timedLock(LockProvider shedLock, String name) {
        long begin = System.nanoTime();
        SimpleLock lock = shedLock.lock(new LockConfiguration(ClockProvider.now(), name, Duration.ofSeconds(30), Duration.ZERO))
                .orElseThrow(() -> new IllegalStateException("ShedLock did not grant the free lock " + name));
        long took = System.nanoTime() - begin;
        lock.unlock();
        return took;
    }

    private static void compareLatency(String what, Interleaved.Result measured, Interleaved.Result baseline, double bound) {
        Samples m = measured.latencies();
        Samples b = baseline.latencies();
        Results.compare("median acquire latency, " + what, Results.millis(m.median()), Results.millis(b.median()),
                m.median() / b.median(), false, bound);
        Results.compare("p90 acquire latency, " + what, Results.millis(m.percentile(90)), Results.millis(b.percentile(90)),
                m.percentile(90) / b.percentile(90), false, Double.NaN);
        Results.compare("p99 acquire latency, " + what, Results.millis(m.percentile(99)), Results.millis(b.percentile(99)),
                m.percentile(99) / b.percentile(99), false, Double.NaN);
    }

    /** Takes {@link #LIVE_LOCKS} locks with a long lease, {@link #PATHS_PER_REQUEST} paths per request, on eight threads. */
    private static void fill(LockService elsewhere) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<LockHandle>> handles = new ArrayList<>();
            for (int i = 0; i < LIVE_LOCKS / PATHS_PER_REQUEST; i++) {
                List<String> paths = new ArrayList<>(PATHS_PER_REQUEST);
                for (int j = 0; j < PATHS_PER_REQUEST; j++) {
                    paths.add("/t/held-" + i + "/lock-" + j);
                }
                handles.add(pool.submit(() -> elsewhere.acquire(LockRequest.paths(paths).exclusive()
                        .lease(Duration.ofHours(1)).build())));
            }
            for (Future<LockHandle> handle : handles) {
                handle.get();
            }
        }
        finally {
            pool.shutdown();
        }
    }

    private static long liveRows(BenchDatabase db, String tables) throws SQLException {
        try (Connection c = db.poolA().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + tables + "held")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
