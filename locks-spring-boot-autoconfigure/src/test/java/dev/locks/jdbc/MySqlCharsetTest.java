package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import dev.locks.LockHandle;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.testing.TestDatabase;

/**
 * The lock tables keep any node and thread name in a database whose default character set is
 * latin1, as upstream MariaDB's was before 11.6 and MySQL's before 8.0.
 */
class MySqlCharsetTest {

    @Test
    void aThreadWithANameOutsideLatin1LocksInALatin1Database() throws Exception {
        String prefix = TestDatabase.uniquePrefix();
        try (HikariDataSource pool = TestDatabase.MYSQL.newPool(4)) {
            String[] original = databaseCharset(pool);
            try {
                execute(pool, "ALTER DATABASE CHARACTER SET latin1 COLLATE latin1_swedish_ci");
                JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true).build().close();
            }
            finally {
                execute(pool, "ALTER DATABASE CHARACTER SET " + original[0] + " COLLATE " + original[1]);
            }
            ExecutorService worker = Executors.newSingleThreadExecutor(r -> new Thread(r, "工作线程-1 🔒"));
            try (JdbcLockService locks = JdbcLockService.builder(pool).tablePrefix(prefix)
                    .settings(LockSettings.builder().nodeId("节点-a").slowWaitLog(null).build()).build()) {
                Optional<LockHandle> held = CompletableFuture
                        .supplyAsync(() -> locks.tryAcquire(LockRequest.paths("/report").build()), worker).get();

                assertThat(held).isPresent();
                assertThat(locks.holders(null, "/report")).singleElement()
                        .satisfies(h -> assertThat(h.thread()).isEqualTo("工作线程-1 🔒"));
                held.get().release();
            }
            finally {
                worker.shutdown();
                TestDatabase.dropTables(pool, prefix);
            }
        }
    }

    private static String[] databaseCharset(HikariDataSource pool) throws SQLException {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT @@character_set_database, @@collation_database")) {
            rs.next();
            return new String[] { rs.getString(1), rs.getString(2) };
        }
    }

    private static void execute(HikariDataSource pool, String sql) throws SQLException {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
