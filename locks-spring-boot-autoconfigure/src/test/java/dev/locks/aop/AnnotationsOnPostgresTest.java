package dev.locks.aop;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/** The lock annotations on PostgreSQL. */
@AnnotationsOn(TestDatabase.POSTGRESQL)
class AnnotationsOnPostgresTest {

    @Nested
    class PathLockedOnPostgres extends PathLockedContract {
    }

    @Nested
    class ClusterSingletonOnPostgres extends ClusterSingletonContract {
    }

    @Nested
    class SemaphoreOnPostgres extends SemaphoreContract {
    }

    @Nested
    class ReentryOnPostgres extends ReentryContract {
    }

    @Nested
    class TransactionBoundaryOnPostgres extends TransactionBoundaryContract {
    }

    @Nested
    class WrongInputOnPostgres extends WrongInputContract {
    }
}
