package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.stream.IntStream;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import dev.locks.LockHandle;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.testing.TestDatabase;

/**
 * MariaDB's renewal gathers the ids it locked with {@code JSON_ARRAYAGG}, which the server cuts at
 * {@code group_concat_max_len}: many servers keep MySQL's 1024 bytes, about 90 ids. A renewal must
 * extend every row of every grant whatever that limit, and never call a grant renewed when one of
 * its rows was left to lapse.
 */
class GroupConcatLimitTest {

    @Test
    void aRenewalExtendsEveryRowOfAGrantOfManyPathsUnderASmallGroupConcatLimit() throws Exception {
        String prefix = TestDatabase.uniquePrefix();
        try (HikariDataSource pool = TestDatabase.MYSQL.newPool(4, Map.of("sessionVariables", "group_concat_max_len=64"))) {
            JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true).build().close();
            try (JdbcLockService locks = JdbcLockService.builder(pool).tablePrefix(prefix)
                    .settings(LockSettings.builder().nodeId("node-a").slowWaitLog(null).build()).build()) {
                // MySQL has no such block: its renewal binds the ids from the client
                assumeTrue(locks.store().dialect() instanceof MariaDbDialect, "a MariaDB server");
                String[] paths = IntStream.range(0, 40).mapToObj(i -> "/many/" + i).toArray(String[]::new);
                LockHandle held = locks.acquire(LockRequest.paths(paths).lease(Duration.ofSeconds(2)).build());

                assertThat(held.renew(Duration.ofMinutes(10))).as("renewed").isTrue();
                assertThat(rowsLastingAtLeast(pool, prefix, Duration.ofMinutes(5))).as("rows extended").isEqualTo(40);
                held.release();
            }
            finally {
                TestDatabase.dropTables(pool, prefix);
            }
        }
    }

    private static int rowsLastingAtLeast(HikariDataSource pool, String prefix, Duration left) throws Exception {
        try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM "
                + prefix + "held WHERE expires_at > UTC_TIMESTAMP(6) + INTERVAL ? SECOND")) {
            ps.setLong(1, left.toSeconds());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
