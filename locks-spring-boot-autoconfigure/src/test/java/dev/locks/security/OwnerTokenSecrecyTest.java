package dev.locks.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.read.ListAppender;
import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import dev.locks.DeadlockDetectedException;
import dev.locks.HolderQuery;
import dev.locks.LockHandle;
import dev.locks.LockLostException;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.LockTimeoutException;
import dev.locks.LockUnavailableException;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;

/**
 * Owner tokens and grant ids are capabilities: 128 random bits that nobody can guess, and that
 * never appear in full in a log line or an exception message, whatever goes wrong (timeouts, slow
 * waits, lost leases, force-release, deadlocks, an unreachable store).
 */
class OwnerTokenSecrecyTest {

    private static final Pattern HEX32 = Pattern.compile("(?<![0-9a-fA-F])[0-9a-f]{32}(?![0-9a-fA-F])");

    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);

    private final Logger library = (Logger) LoggerFactory.getLogger("dev.locks");

    private Level previous;

    private HikariDataSource pool;

    private String prefix;

    @BeforeEach
    void capture() {
        previous = library.getLevel();
        library.setLevel(Level.DEBUG);
        appender.start();
        root.addAppender(appender);
        prefix = TestDatabase.uniquePrefix();
        pool = TestDatabase.H2.newPool(8);
        JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true).build().close();
    }

    @AfterEach
    void release() {
        root.detachAppender(appender);
        library.setLevel(previous);
        TestDatabase.dropTables(pool, prefix);
        pool.close();
    }

    private JdbcLockService node(String id, javax.sql.DataSource ds) {
        return JdbcLockService.builder(ds).tablePrefix(prefix).settings(LockSettings.builder().nodeId(id)
                .slowWaitLog(Duration.ofMillis(100)).purgeInterval(Duration.ofMillis(200))
                .deadlockCheckInterval(Duration.ofMillis(100)).build()).build();
    }

    @Test
    void noTokenAppearsInLogsOrExceptionsWhenThingsGoWrong() throws Exception {
        List<String> texts = new ArrayList<>();
        Set<String> secrets = new HashSet<>();
        try (JdbcLockService a = node("node-a", pool); JdbcLockService b = node("node-b", pool)) {
            // a slow wait that times out
            LockHandle held = a.acquire(LockRequest.paths("/secret").build());
            secrets.addAll(secretsInStore());
            LockTimeoutException timeout = org.junit.jupiter.api.Assertions.assertThrows(LockTimeoutException.class,
                    () -> b.acquire(LockRequest.paths("/secret/child").waitAtMost(Duration.ofMillis(400)).build()));
            texts.add(timeout.getMessage());
            texts.add(held.toString());

            // a lease lost to an operator's force-release
            LockHandle doomed = a.keepRenewed(a.acquire(LockRequest.paths("/doomed").lease(Duration.ofMillis(900)).build()));
            secrets.addAll(secretsInStore());
            long lockId = b.list(new HolderQuery(null, null, "/doomed", null, 10)).get(0).lockId();
            assertThat(b.forceRelease(lockId)).isTrue();
            long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (doomed.isValid() && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            LockLostException lost = org.junit.jupiter.api.Assertions.assertThrows(LockLostException.class, doomed::checkValid);
            texts.add(lost.getMessage());
            texts.add(doomed.toString());
            doomed.release();

            // a deadlock between two scoped owners
            texts.add(deadlock(a, b, secrets));
            held.release();
        }
        // an unreachable store
        HikariDataSource closing = TestDatabase.H2.newPool(2);
        try (JdbcLockService c = node("node-c", closing)) {
            closing.close();
            LockUnavailableException unavailable = org.junit.jupiter.api.Assertions.assertThrows(LockUnavailableException.class,
                    () -> c.acquire(LockRequest.paths("/down").build()));
            texts.add(unavailable.getMessage());
        }

        for (ILoggingEvent event : appender.list) {
            texts.add(event.getFormattedMessage());
            for (IThrowableProxy t = event.getThrowableProxy(); t != null; t = t.getCause()) {
                texts.add(t.getClassName() + ": " + t.getMessage());
            }
        }
        assertThat(appender.list).as("the scenario logged something to check").anyMatch(e -> e.getFormattedMessage().contains("Lost lock"));
        assertThat(appender.list).anyMatch(e -> e.getFormattedMessage().contains("Still waiting"));
        assertThat(secrets).as("tokens seen in the store").hasSizeGreaterThanOrEqualTo(4);
        for (String text : texts) {
            if (text == null) {
                continue;
            }
            assertThat(HEX32.matcher(text).find()).as("a full 32-hex token in: %s", text).isFalse();
            for (String secret : secrets) {
                assertThat(text).doesNotContain(secret);
            }
        }
    }

    private String deadlock(JdbcLockService a, JdbcLockService b, Set<String> secrets) throws Exception {
        CountDownLatch bothHold = new CountDownLatch(2);
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> cross(a, "/d1", "/d2", bothHold));
        CompletableFuture<String> second = CompletableFuture.supplyAsync(() -> cross(b, "/d2", "/d1", bothHold));
        bothHold.await(10, TimeUnit.SECONDS);
        Thread.sleep(200);
        secrets.addAll(secretsInStore());
        String one = first.get(30, TimeUnit.SECONDS);
        String two = second.get(30, TimeUnit.SECONDS);
        assertThat(one + two).contains("Deadlock");
        return one + " " + two;
    }

    private static String cross(JdbcLockService locks, String mine, String theirs, CountDownLatch bothHold) {
        try {
            return locks.call(LockRequest.paths(mine).build(), () -> {
                bothHold.countDown();
                bothHold.await(10, TimeUnit.SECONDS);
                try {
                    locks.call(LockRequest.paths(theirs).waitAtMost(Duration.ofSeconds(10)).build(), () -> null);
                    return "";
                }
                catch (DeadlockDetectedException ex) {
                    return ex.getMessage();
                }
            });
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException(ex);
        }
    }

    private List<String> secretsInStore() throws Exception {
        List<String> secrets = new ArrayList<>();
        try (Connection c = pool.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT owner_token, grant_id FROM " + prefix + "held UNION ALL SELECT owner_token,"
                        + " grant_id FROM " + prefix + "wait")) {
            while (rs.next()) {
                secrets.add(rs.getString(1));
                secrets.add(rs.getString(2));
            }
        }
        return secrets;
    }

    @Test
    void ownerTokensAndGrantIdsAre128UniformRandomBits() throws Exception {
        int n = 2000;
        try (JdbcLockService a = node("node-a", pool)) {
            List<LockRequest> requests = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                requests.add(LockRequest.paths("/random/" + i).build());
            }
            List<LockHandle> handles = a.tryAcquireEach(requests);
            List<String> tokens = secretsInStore();
            handles.forEach(LockHandle::release);
            assertThat(tokens).hasSize(2 * n).doesNotHaveDuplicates().allMatch(t -> t.matches("[0-9a-f]{32}"));
            int[] ones = new int[128];
            for (String t : tokens) {
                for (int bit = 0; bit < 128; bit++) {
                    if ((Character.digit(t.charAt(bit / 4), 16) >> (3 - bit % 4) & 1) == 1) {
                        ones[bit]++;
                    }
                }
            }
            // each bit is a fair coin: within six standard deviations of half (a counter or a clock would fail)
            double sd = Math.sqrt(tokens.size() * 0.25);
            for (int bit = 0; bit < 128; bit++) {
                assertThat(Math.abs(ones[bit] - tokens.size() / 2.0)).as("bit %d set %d times", bit, ones[bit])
                        .isLessThan(6 * sd);
            }
        }
    }

    @Test
    void tokensComeFromSecureRandom() throws Exception {
        String source = java.nio.file.Files.readString(java.nio.file.Path.of("src/main/java/dev/locks/OwnerTokens.java"));
        assertThat(source).contains("new SecureRandom()").contains("new byte[16]").doesNotContain("new Random(")
                .doesNotContain("UUID");
    }

    @Test
    void aHandleShowsOnlyATokenHint() throws Exception {
        try (JdbcLockService a = node("node-a", pool); LockHandle h = a.acquire(LockRequest.paths("/hint").build())) {
            assertThat(h.toString()).containsPattern("owner [0-9a-f]{8}…");
            for (String secret : secretsInStore()) {
                assertThat(h.toString()).doesNotContain(secret);
            }
        }
    }
}
