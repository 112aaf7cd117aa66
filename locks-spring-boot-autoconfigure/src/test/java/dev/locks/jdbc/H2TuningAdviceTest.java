package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.util.UUID;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import dev.locks.LockSettings;

/** What the H2 dialect says about a database's statement cache, and that a built service says it. */
class H2TuningAdviceTest {

    @Test
    void aDatabaseWithH2sDefaultQueryCacheIsToldToEnlargeIt() throws Exception {
        try (Connection connection = DriverManager.getConnection("jdbc:h2:mem:" + UUID.randomUUID(), "sa", "")) {
            assertThat(new H2Dialect().tuningAdvice(connection)).contains("H2 keeps 8 parsed statements")
                    .contains(";QUERY_CACHE_SIZE=64");
        }
    }

    @Test
    void aServiceBuiltWithANamedDialectLogsTheAdviceToo() {
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        Logger dialectLog = (Logger) LoggerFactory.getLogger(SqlDialect.class);
        appender.start();
        dialectLog.addAppender(appender);
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        dataSource.setUser("sa");
        try {
            JdbcLockService.builder(dataSource).dialect(new H2Dialect()).createSchema(true)
                    .settings(LockSettings.builder().nodeId("advice").purgeInterval(null).build()).build().close();

            assertThat(appender.list).extracting(ILoggingEvent::getFormattedMessage)
                    .anyMatch(message -> message.contains(";QUERY_CACHE_SIZE=64"));
        }
        finally {
            dialectLog.detachAppender(appender);
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
