package dev.locks.actuate;

import dev.locks.jdbc.PostgresDialect;
import dev.locks.jdbc.SqlDialect;
import dev.locks.testing.TestDatabase;

/** The {@code locks} health on PostgreSQL. */
class LocksHealthOnPostgresTest extends ReadOnlyDatabaseHealthContract {

    @Override
    protected String readOnlySession() {
        return "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY";
    }

    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    protected SqlDialect dialect() {
        return new PostgresDialect();
    }

    @Override
    protected String urlOnClosedPort(int port) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/test?connectTimeout=2";
    }
}
