package dev.locks.jdbc;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/** The engine's contract on embedded H2. */
class OnH2Test {

    @Nested
    class PathSemantics extends PathSemanticsContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class Leases extends LeaseContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class Waiting extends WaitingContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class HandOffs extends HandOffContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class Concurrency extends ConcurrencyContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class FairWaiting extends FairWaitingContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class RowLockWaits extends RowLockWaitContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.H2;
        }
    }
}
