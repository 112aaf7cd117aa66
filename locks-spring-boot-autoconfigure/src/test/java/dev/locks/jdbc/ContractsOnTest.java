package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import dev.locks.testing.TestDatabase;

/** What a nested contract class runs on when its enclosing class names it with {@link ContractsOn}. */
@ContractsOn(value = TestDatabase.MYSQL, dialect = MySqlDialect.class, serverPrepared = true)
class ContractsOnTest {

    /** A contract as the On*Test classes nest them; not {@code @Nested}, so it never runs. */
    class Contract extends LockServiceContract {
    }

    @Test
    void aNestedContractRunsOnTheDatabaseDialectAndDriverSettingsOfItsEnclosingClass() {
        Contract contract = new Contract();

        assertThat(contract.database()).isEqualTo(TestDatabase.MYSQL);
        assertThat(contract.dialect()).isInstanceOf(MySqlDialect.class);
        assertThat(contract.driverProperties()).isEqualTo(ConnectorJTuning.RECOMMENDED);
    }
}
