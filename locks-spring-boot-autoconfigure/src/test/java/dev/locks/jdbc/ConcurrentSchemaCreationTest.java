package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.locks.LockHandle;
import dev.locks.LockRequest;
import dev.locks.testing.TestDatabase;

/** Nodes starting together, each creating the lock tables, all start (initialize-schema=always on every replica). */
class ConcurrentSchemaCreationTest {

    private static final int ROUNDS = 10;

    @ParameterizedTest(name = "{0}")
    @EnumSource(TestDatabase.class)
    void nodesCreatingTheSchemaAtTheSameMomentAllStart(TestDatabase database) throws Exception {
        try (HikariDataSource first = database.newPool(2); HikariDataSource second = database.newPool(2)) {
            ExecutorService nodes = Executors.newFixedThreadPool(2);
            try {
                for (int round = 0; round < ROUNDS; round++) {
                    String prefix = TestDatabase.uniquePrefix();
                    CyclicBarrier together = new CyclicBarrier(2);
                    List<Future<?>> starts = new ArrayList<>();
                    for (HikariDataSource pool : List.of(first, second)) {
                        starts.add(nodes.submit(() -> {
                            JdbcLockStore store = new JdbcLockStore(pool, SqlDialect.detect(pool), prefix);
                            together.await();
                            store.createSchema();
                            return null;
                        }));
                    }
                    try {
                        for (Future<?> start : starts) {
                            start.get();
                        }
                        try (JdbcLockService locks = JdbcLockService.builder(first).tablePrefix(prefix).build();
                                LockHandle h = locks.acquire(LockRequest.paths("/created").build())) {
                            assertThat(h.isValid()).isTrue();
                        }
                    }
                    finally {
                        TestDatabase.dropTables(first, prefix);
                    }
                }
            }
            finally {
                nodes.shutdownNow();
            }
        }
    }
}
