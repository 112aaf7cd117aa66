package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** A dialect given instead of detected picks between MySQL's and MariaDB's SQL, not another database's. */
class GivenDialectTest {

    @Test
    void theMariaDbDialectFitsAServerReportedAsMySqlWhatEverItsVersion() {
        assertThatCode(() -> new MariaDbDialect().checkFits("MySQL", "8.4.3")).doesNotThrowAnyException();
    }

    @Test
    void theMySqlDialectFitsAMariaDbServer() {
        assertThatCode(() -> new MySqlDialect().checkFits("MariaDB", "11.4.2-MariaDB")).doesNotThrowAnyException();
    }

    @Test
    void thePostgresDialectDoesNotFitMySql() {
        assertThatThrownBy(() -> new PostgresDialect().checkFits("MySQL", "8.4.3"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("The lock store was given the PostgresDialect, which speaks PostgreSQL, but its database"
                        + " reports 'MySQL 8.4.3': leave the dialect unset (locks.jdbc.dialect with Spring Boot) to detect"
                        + " it from the connection");
    }

    @Test
    void noDialectFitsADatabaseTheLibraryDoesNotSupport() {
        assertThatThrownBy(() -> new H2Dialect().checkFits("Oracle", "23ai")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'Oracle 23ai'");
    }
}
