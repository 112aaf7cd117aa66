package dev.locks.quartz;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/** The Quartz cluster on H2, MariaDB/MySQL and PostgreSQL. */
class QuartzClusterTest {

    @Nested
    class OnH2 extends QuartzClusterContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class OnMySql extends QuartzClusterContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }
    }

    @Nested
    class OnPostgres extends QuartzClusterContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.POSTGRESQL;
        }
    }
}
