package dev.locks.actuate;

import dev.locks.testing.TestDatabase;

/** The {@code locks} endpoint on PostgreSQL. */
class LocksEndpointOnPostgresTest extends LocksEndpointContract {

    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
