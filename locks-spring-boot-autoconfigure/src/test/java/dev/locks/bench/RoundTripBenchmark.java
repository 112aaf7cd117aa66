package dev.locks.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.function.ToIntFunction;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
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
import dev.locks.LockSettings;
import dev.locks.testing.CountingDataSource;
import dev.locks.testing.TestDatabase;

/**
 * Round trips per operation for all three contenders: the statements each JDBC call sequence
 * makes (commits included), and on MariaDB also what the server counted for the session
 * ({@code Questions}), which adds the driver's own {@code SET autocommit} statements.
 */
class RoundTripBenchmark {

    private static final Duration LEASE = Duration.ofSeconds(30);

    @BeforeAll
    static void quiet() {
        BenchSetup.quietLogging();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(TestDatabase.class)
    void statementsPerOperation(TestDatabase database) throws Exception {
        try (BenchDatabase db = new BenchDatabase(database)) {
            CountingDataSource counting = new CountingDataSource(db.poolA());
            // PostgreSQL's release listener talks to the database in the background: not counted
            Map<String, Integer> statements = measure(db, counting.dataSource(), op -> {
                counting.reset();
                op.run();
                return counting.operationStatements();
            });
            Map<String, Integer> onTheWire = new LinkedHashMap<>();
            if (database == TestDatabase.MYSQL) {
                // one connection, so that the session's counter sees every statement of every contender
                try (HikariDataSource single = database.newPool(1, BenchDatabase.driverProperties(database))) {
                    onTheWire = measure(db, single, op -> {
                        long before = questions(single);
                        op.run();
                        // minus the SHOW STATUS that reads the counter
                        return (int) (questions(single) - before - 1);
                    });
                }
            }
            Results.heading("round trips per operation (" + db.describe() + ")");
            Results.line("| operation | statements (JDBC) |" + (onTheWire.isEmpty() ? "" : " statements the server received |")
                    + "\n|---|---|" + (onTheWire.isEmpty() ? "" : "---|"));
            for (Map.Entry<String, Integer> e : statements.entrySet()) {
                Results.line("| " + e.getKey() + " | " + e.getValue() + " |"
                        + (onTheWire.isEmpty() ? "" : " " + onTheWire.get(e.getKey()) + " |"));
            }
        }
    }

    /** Runs every contender's operations once to warm up, then counts each. */
    private static Map<String, Integer> measure(BenchDatabase db, DataSource dataSource, ToIntFunction<Runnable> count) {
        var ours = db.ours(dataSource, LockSettings.builder().nodeId("round-trips").purgeInterval(null));
        LockProvider shedLock = db.shedLock(dataSource);
        JdbcLockRegistry registry = db.registry(dataSource);
        String run = UUID.randomUUID().toString().substring(0, 8);
        ours.acquire(LockRequest.paths("/warm/" + run).exclusive().build()).release();
        shedLock(shedLock, "warm-" + run).unlock();
        registryLock(registry, "warm-" + run).unlock();

        Map<String, Integer> counts = new LinkedHashMap<>();
        AtomicReference<LockHandle> handle = new AtomicReference<>();
        counts.put("locks: acquire, a path never used", count.applyAsInt(() -> handle.set(ours.acquire(
                LockRequest.paths("/rt/" + run + "/file").exclusive().lease(LEASE).build()))));
        counts.put("locks: release", count.applyAsInt(() -> handle.get().release()));
        counts.put("locks: acquire, a path used before", count.applyAsInt(() -> handle.set(ours.acquire(
                LockRequest.paths("/rt/" + run + "/file").exclusive().lease(LEASE).build()))));
        handle.get().release();
        AtomicReference<SimpleLock> simple = new AtomicReference<>();
        counts.put("ShedLock: lock, a name never used", count.applyAsInt(() -> simple.set(shedLock(shedLock, "rt-" + run))));
        counts.put("ShedLock: unlock", count.applyAsInt(() -> simple.get().unlock()));
        counts.put("ShedLock: lock, a name used before", count.applyAsInt(() -> simple.set(shedLock(shedLock, "rt-" + run))));
        simple.get().unlock();
        AtomicReference<Lock> lock = new AtomicReference<>();
        counts.put("JdbcLockRegistry: lock", count.applyAsInt(() -> lock.set(registryLock(registry, "rt-" + run))));
        counts.put("JdbcLockRegistry: unlock", count.applyAsInt(() -> lock.get().unlock()));
        return counts;
    }

    private static SimpleLock shedLock(LockProvider provider, String name) {
        return provider.lock(new LockConfiguration(ClockProvider.now(), name, LEASE, Duration.ZERO))
                .orElseThrow(() -> new IllegalStateException("ShedLock did not grant the free lock " + name));
    }

    private static Lock registryLock(JdbcLockRegistry registry, String key) {
        Lock lock = registry.obtain(key);
        lock.lock();
        return lock;
    }

    private static long questions(DataSource single) {
        try (Connection c = single.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SHOW SESSION STATUS LIKE 'Questions'")) {
            rs.next();
            return rs.getLong(2);
        }
        catch (SQLException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
