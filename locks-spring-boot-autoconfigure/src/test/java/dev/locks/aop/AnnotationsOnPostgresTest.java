package dev.locks.aop;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/** The lock annotations on PostgreSQL. */
class AnnotationsOnPostgresTest {

    @Nested
    class PathLockedOnPostgres extends PathLockedContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.POSTGRESQL;
        }
    }

    @Nested
    class ClusterSingletonOnPostgres extends ClusterSingletonContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.POSTGRESQL;
        }
    }

    @Nested
    class SemaphoreOnPostgres extends SemaphoreContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.POSTGRESQL;
        }
    }

    @Nested
    class ReentryOnPostgres extends ReentryContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.POSTGRESQL;
        }
    }

    @Nested
    class TransactionBoundaryOnPostgres extends TransactionBoundaryContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.POSTGRESQL;
        }
    }

    @Nested
    class WrongInputOnPostgres extends WrongInputContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.POSTGRESQL;
        }
    }
}
