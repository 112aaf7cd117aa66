package dev.locks.actuate;

import org.junit.jupiter.api.Test;

import dev.locks.jdbc.H2Dialect;
import dev.locks.jdbc.SqlDialect;
import dev.locks.testing.TestDatabase;

/** The {@code locks} health on H2. */
class LocksHealthOnH2Test extends LocksHealthContract {

    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }

    @Override
    protected SqlDialect dialect() {
        return new H2Dialect();
    }

    @Override
    protected String urlOnClosedPort(int port) {
        return "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:locks";
    }

    @Test
    void isDownWhenTheTableOnlyGrantsUseIsMissing() throws Exception {
        assertDownWhenTheTableOnlyGrantsUseIsMissing();
    }
}
