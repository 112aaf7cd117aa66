package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import dev.locks.testing.TestDatabase;

/**
 * A grant's conflict check must see every grant committed before its serialising locks were held,
 * which on PostgreSQL takes READ COMMITTED: at REPEATABLE READ the snapshot would date from before
 * the wait for those locks. Pools may be configured at another level.
 */
class GrantIsolationTest {

    @Test
    void postgresGrantTransactionsRunAtReadCommittedOnARepeatableReadPool() {
        try (HikariDataSource pool = TestDatabase.POSTGRESQL.newPool(2)) {
            StoreTransactions transactions = new StoreTransactions(repeatableRead(pool), new PostgresDialect());
            String level = transactions.inTransaction("read the isolation level", connection -> {
                try (Statement st = connection.createStatement();
                        ResultSet rs = st.executeQuery("SHOW transaction_isolation")) {
                    rs.next();
                    return rs.getString(1);
                }
            });
            assertThat(level).isEqualTo("read committed");
        }
    }

    private static DataSource repeatableRead(DataSource pool) {
        return new DelegatingDataSource(pool) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection connection = super.getConnection();
                connection.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                return connection;
            }
        };
    }
}
