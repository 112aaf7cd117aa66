package dev.locks.jdbc;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/**
 * The engine's contract through the MySQL dialect, which MySQL servers get: the grant as a
 * transaction of several statements. Run on the MariaDB test server, which detects as
 * {@link MariaDbDialect} and would otherwise grant in one compound statement.
 */
class OnMySqlProtocolTest {

    @Nested
    class PathSemantics extends PathSemanticsContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }

        @Override
        protected SqlDialect dialect() {
            return new MySqlDialect();
        }
    }

    @Nested
    class Waiting extends WaitingContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }

        @Override
        protected SqlDialect dialect() {
            return new MySqlDialect();
        }
    }

    @Nested
    class HandOffs extends HandOffContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }

        @Override
        protected SqlDialect dialect() {
            return new MySqlDialect();
        }
    }

    @Nested
    class Concurrency extends ConcurrencyContract {
        @Override
        protected TestDatabase database() {
            return TestDatabase.MYSQL;
        }

        @Override
        protected SqlDialect dialect() {
            return new MySqlDialect();
        }
    }
}
