package dev.locks.bench;

import static dev.locks.bench.BenchSetup.OURS;
import static dev.locks.bench.BenchSetup.REGISTRY;
import static dev.locks.bench.BenchSetup.ROUND;
import static dev.locks.bench.BenchSetup.ROUNDS;
import static dev.locks.bench.BenchSetup.SHEDLOCK;
import static dev.locks.bench.BenchSetup.WARMUP_ROUNDS;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.function.Function;

import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;

import dev.locks.LockHandle;
import dev.locks.LockRequest;
import dev.locks.LockService;
import dev.locks.testing.TestDatabase;

/**
 * Uncontended acquire + release per second, this library against ShedLock and JdbcLockRegistry on
 * the same database, the same pool size, in interleaved rounds.
 */
class ThroughputBenchmark {

    private static final Duration LEASE = Duration.ofSeconds(30);

    /**
     * The in-place grant prototypes to add on MariaDB: {@code -Dlocks.bench.inPlacePrototype=node},
     * {@code held} or {@code node,held} ({@link InPlaceGrantPrototype.Design}).
     */
    private static final List<InPlaceGrantPrototype.Design> PROTOTYPES = prototypes(
            System.getProperty("locks.bench.inPlacePrototype", ""));

    private static final String SIBLINGS = "siblings in one tenant";

    private static final String TENANTS = "a tenant each";

    @BeforeAll
    static void quiet() {
        BenchSetup.quietLogging();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(TestDatabase.class)
    void oneThreadExclusiveLockOfDistinctPaths(TestDatabase database) {
        try (BenchDatabase db = new BenchDatabase(database)) {
            LockService ours = db.ours("bench-a", db.poolA());
            LockProvider shedLock = db.shedLock(db.poolA());
            JdbcLockRegistry registry = db.registry(db.poolA());
            AtomicLong seq = new AtomicLong();
            Function<LockService, Round> pathLoad = locks -> Load.run(1, ROUND, seq,
                    (t, n) -> lockAndRelease(locks, "/jobs/job-" + n));
            Interleaved rounds = new Interleaved(WARMUP_ROUNDS, ROUNDS).measuring(db.serverCpu())
                    .add(OURS, () -> pathLoad.apply(ours))
                    .add(SHEDLOCK, () -> Load.run(1, ROUND, seq, (t, n) -> lockAndRelease(shedLock, "job-" + n)))
                    .add(REGISTRY, () -> Load.run(1, ROUND, seq, (t, n) -> lockAndRelease(registry, "job-" + n)));
            withPrototype(rounds, db, pathLoad);
            report("one thread, exclusive lock + release, a new path each time (" + db.describe() + ")", rounds.run());
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(TestDatabase.class)
    void oneThreadExclusiveLockOfTheSamePath(TestDatabase database) {
        try (BenchDatabase db = new BenchDatabase(database)) {
            LockService ours = db.ours("bench-a", db.poolA());
            LockProvider shedLock = db.shedLock(db.poolA());
            JdbcLockRegistry registry = db.registry(db.poolA());
            AtomicLong seq = new AtomicLong();
            Function<LockService, Round> pathLoad = locks -> Load.run(1, ROUND, seq,
                    (t, n) -> lockAndRelease(locks, "/jobs/nightly"));
            Interleaved rounds = new Interleaved(WARMUP_ROUNDS, ROUNDS).measuring(db.serverCpu())
                    .add(OURS, () -> pathLoad.apply(ours))
                    .add(SHEDLOCK, () -> Load.run(1, ROUND, seq, (t, n) -> lockAndRelease(shedLock, "nightly")))
                    .add(REGISTRY, () -> Load.run(1, ROUND, seq, (t, n) -> lockAndRelease(registry, "nightly")));
            withPrototype(rounds, db, pathLoad);
            report("one thread, exclusive lock + release, the same path each time (" + db.describe() + ")", rounds.run());
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(TestDatabase.class)
    void eightThreadsOnSiblingPathsOfOneTenant(TestDatabase database) {
        try (BenchDatabase db = new BenchDatabase(database)) {
            LockService ours = db.ours("bench-a", db.poolA());
            LockProvider shedLock = db.shedLock(db.poolA());
            JdbcLockRegistry registry = db.registry(db.poolA());
            AtomicLong seq = new AtomicLong();
            Function<LockService, Round> pathLoad = locks -> Load.run(8, ROUND, seq,
                    (t, n) -> lockAndRelease(locks, "/t/folder-" + t + "/file"));
            Interleaved rounds = new Interleaved(WARMUP_ROUNDS, ROUNDS).measuring(db.serverCpu())
                    .add(OURS, () -> pathLoad.apply(ours))
                    .add(SHEDLOCK, () -> Load.run(8, ROUND, seq, (t, n) -> lockAndRelease(shedLock, "folder-" + t)))
                    .add(REGISTRY, () -> Load.run(8, ROUND, seq, (t, n) -> lockAndRelease(registry, "folder-" + t)));
            withPrototype(rounds, db, pathLoad);
            report("eight threads: ours on sibling paths /t/folder-N/file of one tenant, peers on distinct names ("
                    + db.describe() + ")", rounds.run());
        }
    }

    /**
     * The hierarchy's own cost: the eight-thread load on sibling paths of one tenant against the same
     * load with each thread in a tenant of its own, where no two grants share a node row or an index
     * range, on one service in interleaved rounds. Equal rates show that siblings do not serialise,
     * so that what separates this library from ShedLock on eight threads is the work of a grant.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(TestDatabase.class)
    void eightThreadsOnSiblingPathsAgainstATenantEach(TestDatabase database) {
        try (BenchDatabase db = new BenchDatabase(database)) {
            LockService ours = db.ours("bench-a", db.poolA());
            AtomicLong seq = new AtomicLong();
            Map<String, Interleaved.Result> results = new Interleaved(WARMUP_ROUNDS, ROUNDS).measuring(db.serverCpu())
                    .add(SIBLINGS, () -> Load.run(8, ROUND, seq, (t, n) -> lockAndRelease(ours, "t", "/t/folder-" + t + "/file")))
                    .add(TENANTS, () -> Load.run(8, ROUND, seq,
                            (t, n) -> lockAndRelease(ours, "tenant-" + t, "/t/folder-" + t + "/file")))
                    .run();
            report("eight threads: sibling paths of one tenant against a tenant each, both ours (" + db.describe() + ")",
                    results, SIBLINGS, TENANTS);
        }
    }

    static void lockAndRelease(LockService locks, String tenant, String path) {
        LockHandle handle = locks.acquire(LockRequest.paths(path).tenant(tenant).exclusive().lease(LEASE).build());
        if (!handle.release()) {
            throw new IllegalStateException("The lock on " + path + " in " + tenant + " was gone before its release");
        }
    }

    static void lockAndRelease(LockService locks, String path) {
        LockHandle handle = locks.acquire(LockRequest.paths(path).exclusive().lease(LEASE).build());
        if (!handle.release()) {
            throw new IllegalStateException("The lock on " + path + " was gone before its release");
        }
    }

    static void lockAndRelease(LockProvider shedLock, String name) {
        SimpleLock lock = shedLock.lock(new LockConfiguration(ClockProvider.now(), name, LEASE, Duration.ZERO))
                .orElseThrow(() -> new IllegalStateException("ShedLock did not grant the free lock " + name));
        lock.unlock();
    }

    static void lockAndRelease(JdbcLockRegistry registry, String key) {
        Lock lock = registry.obtain(key);
        lock.lock();
        lock.unlock();
    }

    /**
     * Adds the in-place grant prototype as a fourth contender where it was asked for and can run
     * (MariaDB): it runs {@code pathLoad}, this library's load, on a service of its own.
     */
    private static void withPrototype(Interleaved rounds, BenchDatabase db, Function<LockService, Round> pathLoad) {
        if (db.database() != TestDatabase.MYSQL) {
            return;
        }
        for (InPlaceGrantPrototype.Design design : PROTOTYPES) {
            LockService inPlace = db.inPlacePrototype(design, "bench-p", db.poolA());
            rounds.add(design.label, () -> pathLoad.apply(inPlace));
        }
    }

    private static List<InPlaceGrantPrototype.Design> prototypes(String names) {
        List<InPlaceGrantPrototype.Design> designs = new ArrayList<>();
        for (String name : names.split(",")) {
            if (!name.isBlank()) {
                designs.add(Arrays.stream(InPlaceGrantPrototype.Design.values())
                        .filter(design -> design.option.equals(name.trim())).findFirst()
                        .orElseThrow(() -> new IllegalArgumentException(
                                "locks.bench.inPlacePrototype takes node, held or both, not '" + name + "'")));
            }
        }
        return designs;
    }

    private static void report(String title, Map<String, Interleaved.Result> results) {
        report(title, results, OURS, SHEDLOCK, REGISTRY);
        for (InPlaceGrantPrototype.Design design : PROTOTYPES) {
            if (results.containsKey(design.label)) {
                report(title + ", " + design.label, results, design.label, SHEDLOCK, OURS);
            }
        }
    }

    /**
     * Compares one contender with the others: rates, then client CPU, then server CPU where known,
     * then every contender's latencies. Only the rate against ShedLock has a target.
     */
    private static void report(String title, Map<String, Interleaved.Result> results, String oursName, String... peers) {
        Results.section(title);
        Interleaved.Result ours = results.get(oursName);
        for (String peer : peers) {
            Interleaved.Result theirs = results.get(peer);
            Results.compare("acquire+release per second, vs " + peer, Results.perSecond(ours.medianPerSecond()),
                    Results.perSecond(theirs.medianPerSecond()), ours.medianPerSecond() / theirs.medianPerSecond(), true,
                    peer.equals(SHEDLOCK) ? 1.0 : Double.NaN);
        }
        for (String peer : peers) {
            Interleaved.Result theirs = results.get(peer);
            Results.compare("client CPU per acquire+release, vs " + peer, Results.micros(ours.medianCpuNanosPerOperation()),
                    Results.micros(theirs.medianCpuNanosPerOperation()),
                    ours.medianCpuNanosPerOperation() / theirs.medianCpuNanosPerOperation(), false, Double.NaN);
        }
        if (!Double.isNaN(ours.medianServerCpuNanosPerOperation())) {
            // from many threads the server's and the client's CPU share the machine's cores
            for (String peer : peers) {
                Interleaved.Result theirs = results.get(peer);
                Results.compare("server CPU per acquire+release, vs " + peer,
                        Results.micros(ours.medianServerCpuNanosPerOperation()),
                        Results.micros(theirs.medianServerCpuNanosPerOperation()),
                        ours.medianServerCpuNanosPerOperation() / theirs.medianServerCpuNanosPerOperation(), false,
                        Double.NaN);
            }
        }
        for (Map.Entry<String, Interleaved.Result> e : results.entrySet()) {
            Samples l = e.getValue().latencies();
            Results.figure(e.getKey() + ": latency p50 / p90 / p99 of " + l.size() + " ops",
                    Results.millis(l.median()) + " / " + Results.millis(l.percentile(90)) + " / "
                            + Results.millis(l.percentile(99)), "", true);
        }
    }
}
