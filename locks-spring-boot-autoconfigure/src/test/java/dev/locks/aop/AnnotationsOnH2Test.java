package dev.locks.aop;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/** The lock annotations on embedded H2. */
@AnnotationsOn(TestDatabase.H2)
class AnnotationsOnH2Test {

    @Nested
    class PathLockedOnH2 extends PathLockedContract {
    }

    @Nested
    class ClusterSingletonOnH2 extends ClusterSingletonContract {
    }

    @Nested
    class SemaphoreOnH2 extends SemaphoreContract {
    }

    @Nested
    class ReentryOnH2 extends ReentryContract {
    }

    @Nested
    class TransactionBoundaryOnH2 extends TransactionBoundaryContract {
    }

    @Nested
    class WrongInputOnH2 extends WrongInputContract {
    }
}
