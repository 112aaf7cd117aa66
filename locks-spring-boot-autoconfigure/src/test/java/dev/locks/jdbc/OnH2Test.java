package dev.locks.jdbc;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/** The engine's contract on embedded H2. */
@ContractsOn(TestDatabase.H2)
class OnH2Test {

    @Nested
    class PathSemantics extends PathSemanticsContract {
    }

    @Nested
    class Leases extends LeaseContract {
    }

    @Nested
    class CallersTransactions extends CallersTransactionContract {
    }

    @Nested
    class Waiting extends WaitingContract {
    }

    @Nested
    class HandOffs extends HandOffContract {
    }

    @Nested
    class Concurrency extends ConcurrencyContract {
    }

    @Nested
    class FairWaiting extends FairWaitingContract {
    }

    @Nested
    class RowLockWaits extends RowLockWaitContract {
    }
}
