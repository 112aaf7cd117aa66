package dev.locks.actuate;

import org.junit.jupiter.api.Test;

import dev.locks.jdbc.MySqlDialect;
import dev.locks.jdbc.SqlDialect;
import dev.locks.testing.TestDatabase;

/** The {@code locks} health on MySQL and MariaDB. */
class LocksHealthOnMySqlTest extends ReadOnlyDatabaseHealthContract {

    @Override
    protected String readOnlySession() {
        return "SET SESSION TRANSACTION READ ONLY";
    }

    @Override
    protected TestDatabase database() {
        return TestDatabase.MYSQL;
    }

    @Override
    protected SqlDialect dialect() {
        return new MySqlDialect();
    }

    @Override
    protected String urlOnClosedPort(int port) {
        return "jdbc:mysql://127.0.0.1:" + port + "/test?connectTimeout=2000";
    }

    @Test
    void isDownWhenTheTableOnlyGrantsUseIsMissing() throws Exception {
        assertDownWhenTheTableOnlyGrantsUseIsMissing();
    }
}
