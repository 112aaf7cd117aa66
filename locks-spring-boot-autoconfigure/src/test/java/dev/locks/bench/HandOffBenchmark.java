package dev.locks.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.locks.LockHandle;
import dev.locks.LockRequest;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;

/**
 * Hand-off: the time from the holder's release call until a waiting thread holds the lock, in the
 * same JVM and across two nodes (separate pools, separate services), this library against
 * JdbcLockRegistry measured the same way; and ours in the same JVM where the holder releases inside
 * a transaction of its own on the lock tables' pool, so that the release waits for the commit. The
 * holder keeps the lock for a random 100-300 ms after the waiter started waiting, so that a poller
 * is caught at a random point of its cycle.
 *
 * <p>Each hand-off is a chain of round trips to server processes that sat idle through the hold
 * (the release, on PostgreSQL the notice, the grant). What one such round trip costs on the machine
 * is measured alongside, after the same idle times, on a connection of its own: a {@code SELECT 1}
 * and an auto-committed one-row insert. They bound how close a hand-off can come to its target here.
 */
class HandOffBenchmark {

    private static final int HAND_OFFS = Integer.getInteger("locks.bench.handOffs", 40);

    private static final int WARMUP_HAND_OFFS = 3;

    private static final Duration WAIT = Duration.ofSeconds(10);

    @BeforeAll
    static void quiet() {
        BenchSetup.quietLogging();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(TestDatabase.class)
    void releaseToWaiterHoldingTheLock(TestDatabase database) throws Exception {
        try (BenchDatabase db = new BenchDatabase(database); Connection idle = db.poolA().getConnection()) {
            try (Statement st = idle.createStatement()) {
                st.execute("CREATE TEMPORARY TABLE idle_probe (v INT)");
            }
            JdbcLockService nodeA = db.ours("node-a", db.poolA());
            JdbcLockService nodeB = db.ours("node-b", db.poolB());
            JdbcLockRegistry registryA = db.registry(db.poolA());
            JdbcLockRegistry registryB = db.registry(db.poolB());
            Samples oursSame = new Samples();
            Samples oursInTransaction = new Samples();
            TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(db.poolA()));
            Samples oursAcross = new Samples();
            Samples theirsSame = new Samples();
            Samples theirsAcross = new Samples();
            Samples idleSelect = new Samples();
            Samples idleInsert = new Samples();
            Random random = new Random(42);
            for (int i = 0; i < WARMUP_HAND_OFFS + HAND_OFFS; i++) {
                // the same hold time for all four, so that they face the same poll phases
                long holdMillis = 100 + random.nextInt(200);
                long a = handOff(nodeA, nodeA, "/handoff/same", holdMillis);
                long b = handOff(registryA, registryA, "handoff-same", holdMillis);
                long c = handOff(nodeA, nodeB, "/handoff/across", holdMillis);
                long d = handOff(registryA, registryB, "handoff-across", holdMillis);
                long g = handOff(nodeA, nodeA, "/handoff/transaction", holdMillis, transaction);
                long e = afterIdle(idle, "SELECT 1", holdMillis);
                long f = afterIdle(idle, "INSERT INTO idle_probe (v) VALUES (1)", holdMillis);
                if (i >= WARMUP_HAND_OFFS) {
                    idleSelect.add(e);
                    idleInsert.add(f);
                    oursSame.add(a);
                    oursInTransaction.add(g);
                    theirsSame.add(b);
                    oursAcross.add(c);
                    theirsAcross.add(d);
                }
            }
            Results.section("hand-off, release → waiter holds the lock, median of " + HAND_OFFS + " (" + db.describe() + ")");
            report("same JVM", oursSame, theirsSame, 1.0);
            double acrossTarget = switch (database) {
                case POSTGRESQL -> 2.0;
                case MYSQL -> 10.0;
                case H2 -> Double.NaN;
            };
            report("across nodes", oursAcross, theirsAcross, acrossTarget);
            Results.figure("locks, same JVM, released inside a transaction of the holder's, its commit included:"
                    + " median (p90, max)", Results.millis(oursInTransaction.median()) + " ("
                    + Results.millis(oursInTransaction.percentile(90)) + ", " + Results.millis(oursInTransaction.max()) + ")",
                    "", true);
            Results.figure("the machine's floor: a SELECT 1 after the same idle time, median (p90)",
                    Results.millis(idleSelect.median()) + " (" + Results.millis(idleSelect.percentile(90)) + ")", "", true);
            Results.figure("the machine's floor: an auto-committed one-row INSERT after the same idle time, median (p90)",
                    Results.millis(idleInsert.median()) + " (" + Results.millis(idleInsert.percentile(90)) + ")", "", true);
        }
    }

    /** @return nanoseconds one statement takes on a connection that sat idle for {@code idleMillis} */
    private static long afterIdle(Connection connection, String sql, long idleMillis) throws InterruptedException, SQLException {
        Thread.sleep(idleMillis);
        long started = System.nanoTime();
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            ps.execute();
        }
        return System.nanoTime() - started;
    }

    private static void report(String where, Samples ours, Samples theirs, double targetMillis) {
        boolean hasTarget = !Double.isNaN(targetMillis);
        Results.figure("locks, " + where + ": median (p90, max)", Results.millis(ours.median()) + " ("
                + Results.millis(ours.percentile(90)) + ", " + Results.millis(ours.max()) + ")",
                hasTarget ? "≤ " + Results.format(targetMillis) + " ms" : "", !hasTarget || ours.median() <= targetMillis * 1e6);
        Results.compare(where + ", vs JdbcLockRegistry (median)", Results.millis(ours.median()), Results.millis(theirs.median()),
                ours.median() / theirs.median(), false, hasTarget ? 0.2 : Double.NaN);
    }

    /** @return nanoseconds from the holder's release call to the waiter's acquire returning */
    private static long handOff(JdbcLockService holder, JdbcLockService waiter, String path, long holdMillis)
            throws Exception {
        return handOff(holder, waiter, path, holdMillis, null);
    }

    /**
     * @param transaction where the holder releases, as at the end of an outer transaction: the release waits
     *                    for its commit; null to release outside any
     */
    private static long handOff(JdbcLockService holder, JdbcLockService waiter, String path, long holdMillis,
            TransactionTemplate transaction) throws Exception {
        LockRequest request = LockRequest.paths(path).exclusive().waitAtMost(WAIT).build();
        LockHandle held = holder.acquire(request);
        int waitingBefore = waiter.waitingCount();
        return measure(() -> {
            try (LockHandle got = waiter.acquire(request)) {
                return System.nanoTime();
            }
        }, () -> waiter.waitingCount() > waitingBefore, holdMillis, () -> {
            boolean released = transaction == null ? held.release()
                    : Boolean.TRUE.equals(transaction.execute(status -> held.release()));
            if (!released) {
                throw new IllegalStateException("The held lock on " + path + " was gone before its release");
            }
        });
    }

    private static long handOff(JdbcLockRegistry holder, JdbcLockRegistry waiter, String key, long holdMillis)
            throws Exception {
        Lock held = holder.obtain(key);
        held.lock();
        return measure(() -> {
            Lock lock = waiter.obtain(key);
            if (!lock.tryLock(WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("JdbcLockRegistry's waiter did not get " + key);
            }
            long at = System.nanoTime();
            lock.unlock();
            return at;
        }, () -> true, holdMillis, held::unlock);
    }

    @FunctionalInterface
    private interface Acquisition {
        /** @return System.nanoTime() when the lock was held */
        long acquire() throws Exception;
    }

    @FunctionalInterface
    private interface Release {
        void release() throws Exception;
    }

    private static long measure(Acquisition waiterAcquires, java.util.function.BooleanSupplier waiting, long holdMillis,
            Release holderReleases) throws Exception {
        AtomicLong acquiredAt = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                acquiredAt.set(waiterAcquires.acquire());
            }
            catch (Throwable ex) {
                failure.set(ex);
            }
        }, "bench-waiter");
        waiter.start();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!waiting.getAsBoolean() && failure.get() == null) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("The waiter never started waiting");
            }
            Thread.sleep(1);
        }
        Thread.sleep(holdMillis);
        if (acquiredAt.get() != 0 || failure.get() != null) {
            throw new IllegalStateException("The waiter got the lock while it was held", failure.get());
        }
        long releasedAt = System.nanoTime();
        holderReleases.release();
        waiter.join(WAIT.toMillis() * 2);
        if (failure.get() != null) {
            throw new IllegalStateException("The waiter failed: " + failure.get(), failure.get());
        }
        return acquiredAt.get() - releasedAt;
    }
}
