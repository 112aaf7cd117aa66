package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import dev.locks.LockHandle;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.testing.TestDatabase;

/**
 * The Connector/J settings the store recommends on MySQL and MariaDB: which a pool lacks, and that
 * with them the server prepares each statement shape once per connection.
 */
class ConnectorJTuningTest {

    @Test
    void aPoolWithTheDriversDefaultsLacksEveryRecommendedSetting() throws Exception {
        try (HikariDataSource pool = TestDatabase.MYSQL.newPool(1); Connection connection = pool.getConnection()) {
            assertThat(ConnectorJTuning.missing(connection)).containsExactly("useServerPrepStmts=true",
                    "cachePrepStmts=true", "prepStmtCacheSqlLimit=8192", "prepStmtCacheSize=250");
        }
    }

    @Test
    void aPoolWithTheRecommendedSettingsLacksNothing() throws Exception {
        try (HikariDataSource pool = TestDatabase.MYSQL.newPool(1, ConnectorJTuning.RECOMMENDED);
                Connection connection = pool.getConnection()) {
            assertThat(ConnectorJTuning.missing(connection)).isEmpty();
        }
    }

    @Test
    void aStatementCacheLimitBelowTheRecommendedOneIsReported() throws Exception {
        Map<String, String> settings = new HashMap<>(ConnectorJTuning.RECOMMENDED);
        settings.put("prepStmtCacheSqlLimit", "2048");
        try (HikariDataSource pool = TestDatabase.MYSQL.newPool(1, settings); Connection connection = pool.getConnection()) {
            assertThat(ConnectorJTuning.missing(connection)).containsExactly("prepStmtCacheSqlLimit=8192");
        }
    }

    @Test
    void theMySqlDialectsAdviceNamesTheMissingSettingsAsUrlParameters() throws Exception {
        Map<String, String> settings = new HashMap<>(ConnectorJTuning.RECOMMENDED);
        settings.remove("useServerPrepStmts");
        try (HikariDataSource pool = TestDatabase.MYSQL.newPool(1, settings); Connection connection = pool.getConnection()) {
            assertThat(new MariaDbDialect().tuningAdvice(connection)).contains("Add useServerPrepStmts=true to the JDBC URL");
        }
    }

    @Test
    void theMySqlDialectHasNoAdviceForAPoolWithTheRecommendedSettings() throws Exception {
        try (HikariDataSource pool = TestDatabase.MYSQL.newPool(1, ConnectorJTuning.RECOMMENDED);
                Connection connection = pool.getConnection()) {
            assertThat(new MariaDbDialect().tuningAdvice(connection)).isNull();
        }
    }

    @Test
    void aConnectionOfAnotherDriverLacksNothing() throws Exception {
        try (HikariDataSource pool = TestDatabase.H2.newPool(1); Connection connection = pool.getConnection()) {
            assertThat(ConnectorJTuning.missing(connection)).isEmpty();
        }
    }

    @Test
    void withTheRecommendedSettingsATwoPathGrantTwentyLevelsDeepIsPreparedOnlyTheFirstTime() throws Exception {
        String prefix = TestDatabase.uniquePrefix();
        // one connection, so that the session's counter sees every statement of the store
        try (HikariDataSource pool = TestDatabase.MYSQL.newPool(1, ConnectorJTuning.RECOMMENDED)) {
            JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true).build().close();
            try (JdbcLockService locks = JdbcLockService.builder(pool).tablePrefix(prefix)
                    .settings(LockSettings.builder().nodeId("tuning").purgeInterval(null).build()).build()) {
                // eighteen levels, and two more below each: twenty
                String deep = "/" + String.join("/", List.of("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l",
                        "m", "n", "o", "p", "q", "r"));
                long start = preparedStatements(pool);
                lockTwoPathsAndRelease(locks, deep);
                long before = preparedStatements(pool);

                for (int i = 0; i < 5; i++) {
                    lockTwoPathsAndRelease(locks, deep);
                }

                assertThat(before - start).as("the first grant and release prepared on the server").isPositive();
                assertThat(preparedStatements(pool) - before).isZero();
            }
            finally {
                TestDatabase.dropTables(pool, prefix);
            }
        }
    }

    private static void lockTwoPathsAndRelease(JdbcLockService locks, String deep) {
        String leaf = UUID.randomUUID().toString();
        LockHandle handle = locks.acquire(LockRequest.paths(deep + "/src/" + leaf, deep + "/dst/" + leaf).exclusive()
                .tenant("tuning").build());
        handle.release();
    }

    private static long preparedStatements(HikariDataSource pool) throws Exception {
        try (Connection connection = pool.getConnection(); Statement st = connection.createStatement();
                ResultSet rs = st.executeQuery("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'")) {
            rs.next();
            return rs.getLong(2);
        }
    }
}
