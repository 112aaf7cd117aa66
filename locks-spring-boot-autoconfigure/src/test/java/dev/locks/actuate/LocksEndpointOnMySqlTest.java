package dev.locks.actuate;

import dev.locks.testing.TestDatabase;

/** The {@code locks} endpoint on MySQL and MariaDB. */
class LocksEndpointOnMySqlTest extends LocksEndpointContract {

    @Override
    protected TestDatabase database() {
        return TestDatabase.MYSQL;
    }
}
