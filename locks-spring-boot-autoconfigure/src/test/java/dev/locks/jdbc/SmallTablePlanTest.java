package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.locks.LockKind;
import dev.locks.PathNormalizer;
import dev.locks.testing.TestDatabase;

/**
 * On MySQL/MariaDB the conflict count is a locking read, so its plan decides which rows a grant
 * locks. With a handful of live grants, the common case, MariaDB 10.11 preferred scanning the table
 * to looking up a path's four keys: every grant then locked every live grant's row and waited for
 * any grant or release still being written (BENCHMARKS.md, twenty-first pass). QueryPlanContract
 * checks the plans on 50,000 rows; this checks them on seven.
 */
class SmallTablePlanTest {

    private final String prefix = TestDatabase.uniquePrefix();

    private final LockTables tables = new LockTables(prefix);

    private HikariDataSource pool;

    @BeforeEach
    void sevenLiveGrantsOnSiblingPaths() throws SQLException {
        pool = TestDatabase.MYSQL.newPool(2);
        JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true).build().close();
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            for (int n = 1; n <= 7; n++) {
                st.execute("INSERT INTO " + tables.held() + " (grant_id, owner_token, kind, tenant, path, lock_key,"
                        + " scope_key, lock_mode, permits, node, thread, acquired_at, expires_at) VALUES (MD5(" + n
                        + "), MD5(" + n + "), 'P', 't', '/t/folder-" + n + "/file', UNHEX(SHA2(" + n + ", 256)),"
                        + " UNHEX(SHA2('t', 256)), 'X', 0, 'n', 't', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)");
            }
            st.execute("ANALYZE TABLE " + tables.held());
        }
    }

    @AfterEach
    void dropTables() {
        TestDatabase.dropTables(pool, prefix);
        pool.close();
    }

    @Test
    void theConflictQueryLooksUpKeysAndSubtreesOnASmallTableInsteadOfScanningIt() throws SQLException {
        PathConflictQuery query = new PathConflictQuery(new MySqlDialect(), tables);
        List<String> plan;
        try (Connection c = pool.getConnection()) {
            plan = query.explain(c, LockKind.PATH, "t", List.of(new PathNormalizer(true, 4000).normalize("/t/folder-3/file")), Instant.now(),
                    "0".repeat(32), false, PathConflictQuery.ALL_WAITERS);
        }

        assertThat(plan).filteredOn(row -> row.contains("table=" + prefix)).isNotEmpty()
                .allSatisfy(row -> assertThat(row).doesNotContain("type=ALL").doesNotContain("key=null"));
    }
}
