package dev.locks.scheduling;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/** {@code @Scheduled} and start-up singletons on MariaDB and PostgreSQL clusters of three contexts. */
class ScheduledClusterTest {

    @Nested
    class OnMySql extends ScheduledClusterContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }
    }

    @Nested
    class OnPostgres extends ScheduledClusterContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.POSTGRESQL;
        }
    }
}
