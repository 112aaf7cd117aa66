package dev.locks.jdbc;

import java.util.Map;

/**
 * {@link PostgresGrownTableTest} on a pool whose strings are bound untyped ({@code stringtype=unspecified},
 * a common pgjdbc setting): pgjdbc then describes the store's statements and sends a Sync ahead of
 * those whose rows it cannot size, which must not end what keeps their plans on the indexes.
 */
class PostgresGrownTableWithUntypedStringsTest extends PostgresGrownTableTest {

    @Override
    protected Map<String, String> driverProperties() {
        return Map.of("stringtype", "unspecified");
    }
}
