package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.util.UUID;

import org.junit.jupiter.api.Test;

/** What the H2 dialect says about a database's statement cache. */
class H2TuningAdviceTest {

    @Test
    void aDatabaseWithH2sDefaultQueryCacheIsToldToEnlargeIt() throws Exception {
        try (Connection connection = DriverManager.getConnection("jdbc:h2:mem:" + UUID.randomUUID(), "sa", "")) {
            assertThat(new H2Dialect().tuningAdvice(connection)).contains("H2 keeps 8 parsed statements")
                    .contains(";QUERY_CACHE_SIZE=64");
        }
    }

    @Test
    void aDatabaseWithALargeEnoughQueryCacheGetsNoAdvice() throws Exception {
        try (Connection connection = DriverManager.getConnection(
                "jdbc:h2:mem:" + UUID.randomUUID() + ";QUERY_CACHE_SIZE=64", "sa", "")) {
            assertThat(new H2Dialect().tuningAdvice(connection)).isNull();
        }
    }
}
