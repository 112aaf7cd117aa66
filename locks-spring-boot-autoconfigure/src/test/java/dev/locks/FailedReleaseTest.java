package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.locks.jdbc.JdbcLockStore;
import dev.locks.jdbc.SqlDialect;
import dev.locks.store.LockStore;
import dev.locks.testing.TestDatabase;

/**
 * {@link LockService#call} when the store cannot take the release: the lease frees the lock, so the
 * failed release must not hide what the work did.
 */
class FailedReleaseTest {

    private HikariDataSource pool;

    private String prefix;

    private DefaultLockService locks;

    @BeforeEach
    void start() {
        prefix = TestDatabase.uniquePrefix();
        pool = TestDatabase.H2.newPool(4);
        JdbcLockStore jdbc = new JdbcLockStore(pool, SqlDialect.detect(pool), prefix);
        jdbc.createSchema();
        locks = new DefaultLockService(failingReleases(jdbc),
                LockSettings.builder().nodeId("n").slowWaitLog(null).purgeInterval(null).build(), null);
    }

    @AfterEach
    void stop() {
        locks.close();
        TestDatabase.dropTables(pool, prefix);
        pool.close();
    }

    @Test
    void theWorksOwnExceptionSurvivesAFailedReleaseWhichItCarriesAsSuppressed() {
        IOException mine = new IOException("the work failed");

        assertThatThrownBy(() -> locks.call(LockRequest.paths("/work").build(), () -> {
            throw mine;
        })).isSameAs(mine);
        assertThat(mine.getSuppressed()).singleElement().isInstanceOf(LockUnavailableException.class);
    }

    @Test
    void aFailedReleaseNamesTheLock() {
        LockHandle handle = locks.acquire(LockRequest.paths("/named/lock").build());

        assertThatThrownBy(handle::release).isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("Could not release EXCLUSIVE /named/lock in tenant 'default'")
                .hasMessageContaining("The store is down (test)");
    }

    @Test
    void workThatSucceededReturnsItsResultThoughTheReleaseFailed() {
        String result = locks.call(LockRequest.paths("/work").build(), () -> "done");

        assertThat(result).isEqualTo("done");
    }

    private static LockStore failingReleases(LockStore store) {
        return (LockStore) Proxy.newProxyInstance(LockStore.class.getClassLoader(), new Class<?>[] { LockStore.class },
                (proxy, method, args) -> {
                    if (method.getName().equals("release") || method.getName().equals("releaseAndGrant")) {
                        throw new LockUnavailableException("The store is down (test)", null);
                    }
                    try {
                        return method.invoke(store, args);
                    }
                    catch (InvocationTargetException ex) {
                        throw ex.getCause();
                    }
                });
    }
}
