package dev.locks.aop;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/** The lock annotations on MySQL and MariaDB. */
class AnnotationsOnMySqlTest {

    @Nested
    class PathLockedOnMySql extends PathLockedContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }
    }

    @Nested
    class ClusterSingletonOnMySql extends ClusterSingletonContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }
    }

    @Nested
    class SemaphoreOnMySql extends SemaphoreContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }
    }

    @Nested
    class ReentryOnMySql extends ReentryContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }
    }

    @Nested
    class TransactionBoundaryOnMySql extends TransactionBoundaryContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }
    }

    @Nested
    class WrongInputOnMySql extends WrongInputContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }
    }
}
