package dev.locks.jdbc;

import java.util.Map;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/**
 * The engine's contract on MariaDB with the Connector/J settings the store recommends: every
 * statement prepared on the server and kept there, where {@link OnMySqlTest} sends text. The grant
 * block's result sets then come back in the binary protocol.
 */
class OnMariaDbServerPreparedTest {

    @Nested
    class PathSemantics extends PathSemanticsContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }

        @Override
        protected Map<String, String> driverProperties() {
            return ConnectorJTuning.RECOMMENDED;
        }
    }

    @Nested
    class Leases extends LeaseContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }

        @Override
        protected Map<String, String> driverProperties() {
            return ConnectorJTuning.RECOMMENDED;
        }
    }

    @Nested
    class Waiting extends WaitingContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }

        @Override
        protected Map<String, String> driverProperties() {
            return ConnectorJTuning.RECOMMENDED;
        }
    }

    @Nested
    class HandOffs extends HandOffContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }

        @Override
        protected Map<String, String> driverProperties() {
            return ConnectorJTuning.RECOMMENDED;
        }
    }

    @Nested
    class Concurrency extends ConcurrencyContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }

        @Override
        protected Map<String, String> driverProperties() {
            return ConnectorJTuning.RECOMMENDED;
        }
    }

    @Nested
    class FairWaiting extends FairWaitingContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }

        @Override
        protected Map<String, String> driverProperties() {
            return ConnectorJTuning.RECOMMENDED;
        }
    }

    @Nested
    class RowLockWaits extends RowLockWaitContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }

        @Override
        protected Map<String, String> driverProperties() {
            return ConnectorJTuning.RECOMMENDED;
        }
    }
}
