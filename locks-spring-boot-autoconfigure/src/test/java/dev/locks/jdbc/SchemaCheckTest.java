package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import dev.locks.LockSettings;
import dev.locks.testing.TestDatabase;
import dev.locks.testing.TrappingDataSource;

/** The start-up check of the tables judges only the database's answer that a table is missing or forbidden. */
class SchemaCheckTest {

    private final HikariDataSource pool = TestDatabase.H2.newPool(2);

    @AfterEach
    void close() {
        pool.close();
    }

    @Test
    void aCheckThatFailsForAnotherReasonDoesNotFailTheStart() {
        TrappingDataSource dropping = new TrappingDataSource(pool, sql -> sql.startsWith("SELECT 1 FROM "));
        dropping.failNext("connection reset", 3);

        try (JdbcLockService locks = JdbcLockService.builder(dropping.dataSource()).dialect(new H2Dialect())
                .tablePrefix(TestDatabase.uniquePrefix()).settings(LockSettings.builder().nodeId("x").build()).build()) {
            assertThat(locks).isNotNull();
        }
    }

    @Test
    void tablesTheDatabaseUserMayNotReadFailTheStartNamingThem() throws SQLException {
        String prefix = TestDatabase.uniquePrefix();
        try (HikariDataSource postgres = TestDatabase.POSTGRESQL.newPool(2)) {
            JdbcLockService.builder(postgres).tablePrefix(prefix).createSchema(true).build().close();
            try {
                try (Connection connection = postgres.getConnection(); Statement statement = connection.createStatement()) {
                    statement.execute("DO $$ BEGIN CREATE ROLE locks_no_access; "
                            + "EXCEPTION WHEN duplicate_object THEN NULL; END $$");
                }
                DataSource withoutGrants = new DelegatingDataSource(postgres) {
                    @Override
                    public Connection getConnection() throws SQLException {
                        Connection connection = super.getConnection();
                        try (Statement statement = connection.createStatement()) {
                            statement.execute("SET ROLE locks_no_access");
                        }
                        return connection;
                    }
                };

                assertThatThrownBy(() -> JdbcLockService.builder(withoutGrants).dialect(new PostgresDialect())
                        .tablePrefix(prefix).settings(LockSettings.builder().nodeId("x").build()).build())
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("The lock tables [" + prefix + "held, " + prefix + "wait]")
                        .hasMessageContaining("permission denied");
            }
            finally {
                // its connections keep the role: a fresh pool drops the tables as their owner
                postgres.close();
                try (HikariDataSource owner = TestDatabase.POSTGRESQL.newPool(1)) {
                    TestDatabase.dropTables(owner, prefix);
                }
            }
        }
    }
}
