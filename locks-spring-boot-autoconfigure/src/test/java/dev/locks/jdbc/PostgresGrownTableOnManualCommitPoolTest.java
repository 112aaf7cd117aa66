package dev.locks.jdbc;

import com.zaxxer.hikari.HikariDataSource;

/**
 * {@link PostgresGrownTableTest} for a node whose pool hands out connections not in auto-commit, as
 * some Hibernate set-ups configure it: grants run in JDBC transactions, and the store's other
 * statements in transactions of its own, which must keep to the indexes and leave nothing open.
 */
class PostgresGrownTableOnManualCommitPoolTest extends PostgresGrownTableTest {

    @Override
    protected HikariDataSource poolUnderTest(int connections) {
        return closeAfterTest(database().newPool(connections, driverProperties(), false));
    }
}
