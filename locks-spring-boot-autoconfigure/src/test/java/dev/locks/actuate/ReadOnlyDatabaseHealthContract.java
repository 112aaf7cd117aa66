package dev.locks.actuate;

import org.junit.jupiter.api.Test;

/** The {@code locks} health on a database whose sessions can be made read-only (not H2). */
abstract class ReadOnlyDatabaseHealthContract extends LocksHealthContract {

    /** @return the statement that makes a session of this database read-only */
    protected abstract String readOnlySession();

    @Test
    void isDownWhenTheDatabaseIsReadOnly() {
        assertDownWhenTheDatabaseIsReadOnly(readOnlySession());
    }

    @Test
    void withoutTheLockProbeAReadOnlyDatabaseIsUp() {
        assertUpWithoutTheLockProbeWhenTheDatabaseIsReadOnly(readOnlySession());
    }
}
