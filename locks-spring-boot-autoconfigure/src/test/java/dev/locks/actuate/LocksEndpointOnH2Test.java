package dev.locks.actuate;

import dev.locks.testing.TestDatabase;

/** The {@code locks} endpoint on H2. */
class LocksEndpointOnH2Test extends LocksEndpointContract {

    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
