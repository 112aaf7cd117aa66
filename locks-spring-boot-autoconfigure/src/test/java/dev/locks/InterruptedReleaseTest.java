package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.locks.jdbc.JdbcLockStore;
import dev.locks.jdbc.SqlDialect;
import dev.locks.testing.H2Store;
import dev.locks.testing.TestDatabase;

/**
 * Work cancelled with {@code Future.cancel(true)} releases its lock in a finally block with its
 * interrupt flag set; the release must still reach the store.
 */
class InterruptedReleaseTest {

    private final HikariDataSource pool = TestDatabase.H2.newPool(1);

    private final String prefix = TestDatabase.uniquePrefix();

    private DefaultLockService locks;

    @BeforeEach
    void start() {
        JdbcLockStore store = new JdbcLockStore(pool, SqlDialect.detect(pool), prefix);
        store.createSchema();
        locks = new DefaultLockService(store, H2Store.quietNode("n").build(), null);
    }

    @AfterEach
    void stop() {
        locks.close();
        TestDatabase.dropTables(pool, prefix);
        pool.close();
    }

    @Test
    void anInterruptedThreadReleasesThoughItMustWaitForAPooledConnection() throws Exception {
        LockHandle handle = locks.acquire(LockRequest.paths("/cancelled").build());
        Connection borrowed = pool.getConnection();
        // the pool's only connection comes back while the release waits for it
        CompletableFuture<Void> giveBack = CompletableFuture.runAsync(() -> {
            try {
                TimeUnit.MILLISECONDS.sleep(200);
                borrowed.close();
            }
            catch (InterruptedException | SQLException ex) {
                throw new IllegalStateException(ex);
            }
        });

        Thread.currentThread().interrupt();
        boolean released;
        boolean stillInterrupted;
        try {
            released = handle.release();
        }
        finally {
            stillInterrupted = Thread.interrupted();
        }

        giveBack.get(5, TimeUnit.SECONDS);
        assertThat(released).isTrue();
        assertThat(stillInterrupted).as("the caller's interrupt flag is kept").isTrue();
        assertThat(locks.pendingReleaseCount()).isZero();
    }
}
