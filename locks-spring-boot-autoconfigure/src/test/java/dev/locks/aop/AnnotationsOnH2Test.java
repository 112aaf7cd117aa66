package dev.locks.aop;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/** The lock annotations on embedded H2. */
class AnnotationsOnH2Test {

    @Nested
    class PathLockedOnH2 extends PathLockedContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class ClusterSingletonOnH2 extends ClusterSingletonContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class SemaphoreOnH2 extends SemaphoreContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class ReentryOnH2 extends ReentryContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class TransactionBoundaryOnH2 extends TransactionBoundaryContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class WrongInputOnH2 extends WrongInputContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.H2;
        }
    }
}
