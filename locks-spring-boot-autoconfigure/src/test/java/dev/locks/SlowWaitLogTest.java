package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;

/** A slow wait logs, once, who holds the lock it waits for. */
class SlowWaitLogTest {

    private final String prefix = TestDatabase.uniquePrefix();

    private final String tenant = "t-" + UUID.randomUUID();

    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    private final Logger engineLog = (Logger) LoggerFactory.getLogger(DefaultLockService.class);

    private HikariDataSource pool;

    private JdbcLockService holderNode;

    private JdbcLockService waiterNode;

    @BeforeEach
    void start() {
        pool = TestDatabase.H2.newPool(8);
        holderNode = node("node-b", null);
        waiterNode = node("node-a", Duration.ofMillis(200));
        appender.start();
        engineLog.addAppender(appender);
    }

    @AfterEach
    void stop() {
        engineLog.detachAppender(appender);
        waiterNode.close();
        holderNode.close();
        TestDatabase.dropTables(pool, prefix);
        pool.close();
    }

    private JdbcLockService node(String id, Duration slowWaitLog) {
        return JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true)
                .settings(LockSettings.builder().nodeId(id).slowWaitLog(slowWaitLog).build()).build();
    }

    /** Takes the lock on a thread with a recognisable name, as another node's worker would. */
    private LockHandle holdOnThread(String threadName, LockRequest request) throws Exception {
        ThreadFactory named = r -> new Thread(r, threadName);
        var executor = Executors.newSingleThreadExecutor(named);
        try {
            return CompletableFuture.supplyAsync(() -> holderNode.acquire(request), executor).get(10, TimeUnit.SECONDS);
        }
        finally {
            executor.shutdown();
        }
    }

    private List<ILoggingEvent> slowWaitEvents() {
        return appender.list.stream().filter(e -> e.getFormattedMessage().startsWith("Still waiting")).toList();
    }

    @Test
    void aWaitLongerThanTheThresholdLogsTheHolderOnceAtInfo() throws Exception {
        LockHandle held = holdOnThread("export-worker-7",
                LockRequest.paths("/Shared/marketing/Dallas").exclusive().tenant(tenant).build());
        LockRequest wanted = LockRequest.paths("/Shared/marketing").shared().tenant(tenant)
                .waitAtMost(Duration.ofMillis(1200)).build();

        assertThatThrownBy(() -> waiterNode.acquire(wanted)).isInstanceOf(LockTimeoutException.class);

        List<ILoggingEvent> events = slowWaitEvents();
        assertThat(events).hasSize(1);
        ILoggingEvent event = events.get(0);
        assertThat(event.getLevel()).isEqualTo(Level.INFO);
        assertThat(event.getFormattedMessage())
                .contains("/Shared/marketing/Dallas")
                .contains("tenant '" + tenant + "'")
                .contains("node node-b")
                .contains("thread export-worker-7")
                .contains("since " + holderNode.holders(tenant, "/Shared/marketing/Dallas").get(0).since());
        held.release();
    }

    @Test
    void theTimeoutExceptionNamesTheSameHolder() throws Exception {
        LockHandle held = holdOnThread("export-worker-8",
                LockRequest.paths("/Shared/QA").exclusive().tenant(tenant).build());

        assertThatThrownBy(() -> waiterNode.acquire(LockRequest.paths("/Shared/QA/reports").exclusive().tenant(tenant)
                .waitAtMost(Duration.ofMillis(300)).build()))
                .isInstanceOf(LockTimeoutException.class)
                .hasMessageContaining("/Shared/QA")
                .hasMessageContaining("tenant '" + tenant + "'")
                .hasMessageContaining("node node-b")
                .hasMessageContaining("thread export-worker-8")
                .hasMessageContaining("since ");
        held.release();
    }

    @Test
    void aWaitShorterThanTheThresholdLogsNothing() throws Exception {
        LockHandle held = holdOnThread("export-worker-9",
                LockRequest.paths("/Shared/HR").exclusive().tenant(tenant).build());

        assertThatThrownBy(() -> waiterNode.acquire(LockRequest.paths("/Shared/HR").exclusive().tenant(tenant)
                .waitAtMost(Duration.ofMillis(100)).build()))
                .isInstanceOf(LockTimeoutException.class);

        assertThat(slowWaitEvents()).isEmpty();
        held.release();
    }
}
