package dev.locks.actuate;

import dev.locks.jdbc.MySqlDialect;
import dev.locks.jdbc.SqlDialect;
import dev.locks.testing.TestDatabase;

/** The {@code locks} health on MySQL and MariaDB. */
class LocksHealthOnMySqlTest extends LocksHealthContract {

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
}
