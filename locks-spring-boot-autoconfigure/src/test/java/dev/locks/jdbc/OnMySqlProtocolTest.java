package dev.locks.jdbc;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/**
 * The engine's contract through the MySQL dialect, which MySQL servers get: the grant as a
 * transaction of several statements. Run on the MariaDB test server, which detects as
 * {@link MariaDbDialect} and would otherwise grant in one compound statement.
 */
@ContractsOn(value = TestDatabase.MYSQL, dialect = MySqlDialect.class)
class OnMySqlProtocolTest {

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
}
