package dev.locks.jdbc;


import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/**
 * The engine's contract on MariaDB with the Connector/J settings the store recommends: every
 * statement prepared on the server and kept there, where {@link OnMySqlTest} sends text. The grant
 * block's result sets then come back in the binary protocol.
 */
@ContractsOn(value = TestDatabase.MYSQL, serverPrepared = true)
class OnMariaDbServerPreparedTest {

    @Nested
    class PathSemantics extends PathSemanticsContract {
    }

    @Nested
    class Leases extends LeaseContract {
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
