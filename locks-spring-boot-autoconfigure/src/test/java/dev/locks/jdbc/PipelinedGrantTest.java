package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.Statement;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import dev.locks.LockKind;
import dev.locks.PathNormalizer;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.LockUnavailableException;
import dev.locks.testing.TestDatabase;

/**
 * PostgreSQL sends a grant as statements that begin and commit their own transaction on a
 * connection in auto-commit: when one of them fails, the pooled connection must not be handed on
 * inside the failed transaction.
 */
class PipelinedGrantTest {

    @Test
    void aGrantThatFailsMidwayLeavesItsPooledConnectionOutsideAnyTransaction() throws Exception {
        String prefix = TestDatabase.uniquePrefix();
        try (HikariDataSource pool = TestDatabase.POSTGRESQL.newPool(1);
                HikariDataSource other = TestDatabase.POSTGRESQL.newPool(1)) {
            JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true).build().close();
            try (JdbcLockService locks = JdbcLockService.builder(pool).tablePrefix(prefix)
                    .settings(LockSettings.builder().nodeId("pipelined").purgeInterval(null).build()).build()) {
                // the pool's one connection gives up on a lock after 100 ms instead of waiting
                try (Connection connection = pool.getConnection(); Statement st = connection.createStatement()) {
                    st.execute("SET lock_timeout = '100ms'");
                }
                long key = LockKeys.numericKey(LockKeys.lockKey(LockKind.PATH, "t", new PathNormalizer(true, 4000).normalize("/a")));
                try (Connection holder = other.getConnection(); Statement st = holder.createStatement()) {
                    st.execute("SELECT pg_advisory_lock(" + key + ")");

                    assertThatThrownBy(() -> locks.tryAcquire(request()))
                            .isInstanceOf(LockUnavailableException.class)
                            .hasMessageContaining("lock timeout");

                    st.execute("SELECT pg_advisory_unlock(" + key + ")");
                }

                // in a failed transaction, every statement on the one connection would fail with 25P02
                assertThat(locks.tryAcquire(request())).isPresent();
            }
            finally {
                TestDatabase.dropTables(pool, prefix);
            }
        }
    }

    private static LockRequest request() {
        return LockRequest.paths("/a").exclusive().tenant("t").build();
    }
}
