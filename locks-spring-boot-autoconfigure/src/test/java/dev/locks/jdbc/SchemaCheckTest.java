package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
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

/** The start-up check of the tables judges only the database's answer that a table is missing or forbidden. */
class SchemaCheckTest {

    private final HikariDataSource pool = TestDatabase.H2.newPool(2);

    @AfterEach
    void close() {
        pool.close();
    }

    @Test
    void aQueryThatTimesOutDoesNotFailTheStart() {
        DataSource timingOut = new DelegatingDataSource(pool) {
            @Override
            public Connection getConnection() throws SQLException {
                return failingQueries(super.getConnection(), new SQLException("canceled by timeout", "57014"));
            }
        };

        try (JdbcLockService locks = JdbcLockService.builder(timingOut).dialect(new H2Dialect())
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

    /** A connection whose statements' queries fail with {@code failure}. */
    private static Connection failingQueries(Connection connection, SQLException failure) {
        return (Connection) Proxy.newProxyInstance(SchemaCheckTest.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    Object result = invoke(connection, method, args);
                    if (result instanceof Statement statement) {
                        return Proxy.newProxyInstance(SchemaCheckTest.class.getClassLoader(),
                                new Class<?>[] {Statement.class}, (p, m, a) -> {
                                    if (m.getName().equals("executeQuery")) {
                                        throw failure;
                                    }
                                    return invoke(statement, m, a);
                                });
                    }
                    return result;
                });
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        }
        catch (InvocationTargetException ex) {
            throw ex.getCause();
        }
    }
}
