package dev.locks.aop;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/** The lock annotations on MySQL and MariaDB. */
@AnnotationsOn(TestDatabase.MYSQL)
class AnnotationsOnMySqlTest {

    @Nested
    class PathLockedOnMySql extends PathLockedContract {
    }

    @Nested
    class ClusterSingletonOnMySql extends ClusterSingletonContract {
    }

    @Nested
    class SemaphoreOnMySql extends SemaphoreContract {
    }

    @Nested
    class ReentryOnMySql extends ReentryContract {
    }

    @Nested
    class TransactionBoundaryOnMySql extends TransactionBoundaryContract {
    }

    @Nested
    class WrongInputOnMySql extends WrongInputContract {
    }
}
