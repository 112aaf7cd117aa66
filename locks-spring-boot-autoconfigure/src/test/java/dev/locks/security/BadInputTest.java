package dev.locks.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.function.ThrowingConsumer;

import dev.locks.InvalidLockPathException;
import dev.locks.LockHandle;
import dev.locks.LockHolder;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;

/**
 * Hostile and mistaken input: each request is refused with an exception that names the input and
 * the reason, and the lock tables are exactly as before (a lock is held throughout, so that
 * "unchanged" means something). SQL-looking paths and LIKE wildcards are not bad input: they are
 * locked as ordinary paths and the tables stay intact.
 */
class BadInputTest {

    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    abstract static class Contract {

        private HikariDataSource pool;

        private String prefix;

        private JdbcLockService locks;

        private String tenant;

        private LockHandle bystander;

        abstract TestDatabase database();

        @BeforeAll
        void createSchema() {
            prefix = TestDatabase.uniquePrefix();
            pool = database().newPool(4);
            JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true).build().close();
        }

        @AfterAll
        void dropSchema() {
            TestDatabase.dropTables(pool, prefix);
            pool.close();
        }

        @BeforeEach
        void holdALock() {
            tenant = "t-" + UUID.randomUUID();
            locks = JdbcLockService.builder(pool).tablePrefix(prefix)
                    .settings(LockSettings.builder().nodeId("bad-input").slowWaitLog(null).purgeInterval(null).build()).build();
            bystander = locks.acquire(LockRequest.paths("/bystander").tenant(tenant).build());
        }

        @AfterEach
        void release() {
            bystander.release();
            locks.close();
        }

        /** Runs {@code call} on the service and checks it throws {@code type} mentioning {@code words}, changing nothing. */
        private void refused(ThrowingConsumer<JdbcLockService> call, Class<? extends Exception> type, String... words)
                throws Exception {
            List<String> before = StoreSnapshot.of(pool, prefix);
            assertThatThrownBy(() -> call.accept(locks)).isInstanceOf(type).satisfies(ex -> {
                for (String w : words) {
                    assertThat(ex.getMessage()).contains(w);
                }
            });
            assertThat(StoreSnapshot.of(pool, prefix)).as("lock tables after a refused request").isEqualTo(before);
        }

        private LockRequest path(String p) {
            return LockRequest.paths(p).tenant(tenant).build();
        }

        @Test
        void aNullPathIsRefused() throws Exception {
            refused(l -> l.acquire(LockRequest.paths((String) null).build()), InvalidLockPathException.class, "null");
            refused(l -> l.acquire(LockRequest.paths(new ArrayList<>(Collections.singletonList((String) null))).build()),
                    InvalidLockPathException.class, "null");
        }

        @Test
        void anEmptyPathIsRefused() throws Exception {
            refused(l -> l.acquire(path("")), InvalidLockPathException.class, "empty");
        }

        @Test
        void anEmptyRequestIsRefused() throws Exception {
            refused(l -> l.acquire(LockRequest.paths(List.of()).build()), IllegalArgumentException.class, "at least one path");
        }

        @Test
        void aRelativePathIsRefused() throws Exception {
            refused(l -> l.acquire(path("Shared/marketing")), InvalidLockPathException.class, "Shared/marketing", "relative");
        }

        @Test
        void dotAndDotDotSegmentsAreRefused() throws Exception {
            for (String p : List.of("/a/./b", "/a/../b", "/..", "/.", "/a/..")) {
                refused(l -> l.acquire(path(p)), InvalidLockPathException.class, p, "segments are not allowed");
            }
        }

        @Test
        void nulAndControlCharactersAreRefused() throws Exception {
            refused(l -> l.acquire(path("/a\u0000b")), InvalidLockPathException.class, "NUL");
            for (String p : List.of("/a\tb", "/a\nb", "/a\rb", "/a\u007Fb", "/a\u0085b", "/a\u009Bb", "/a\u001Bb")) {
                refused(l -> l.acquire(path(p)), InvalidLockPathException.class, "control character");
            }
        }

        @Test
        void aPathLongerThan4000CharactersIsRefused() throws Exception {
            String p = "/" + "a".repeat(4000);
            refused(l -> l.acquire(path(p)), InvalidLockPathException.class, "longer than 4000");
            refused(l -> l.acquire(path("/" + "a".repeat(10_000_000))), InvalidLockPathException.class, "longer than 4000");
        }

        @Test
        void invalidUtf16IsRefused() throws Exception {
            for (String p : List.of("/a\uD800", "/a\uDC00b", "/\uDBFF\uDBFF", "/\uDFFF\uD800")) {
                refused(l -> l.acquire(path(p)), InvalidLockPathException.class, "surrogate");
            }
        }

        @Test
        void tenThousandPathsInOneRequestAreRefused() throws Exception {
            List<String> paths = new ArrayList<>();
            for (int i = 0; i < 10_000; i++) {
                paths.add("/bulk/" + i);
            }
            refused(l -> l.acquire(LockRequest.paths(paths).tenant(tenant).build()), IllegalArgumentException.class,
                    "at most 256 paths", "10000");
        }

        @Test
        void aRequestCoveringTooManyPathsAndAncestorsTogetherIsRefused() throws Exception {
            List<String> paths = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                paths.add("/deep-" + i + "/d".repeat(29));
            }
            refused(l -> l.acquire(LockRequest.paths(paths).tenant(tenant).build()), IllegalArgumentException.class,
                    "at most 4096 paths and ancestors together", "6001");
        }

        @Test
        void aRequestWhosePathsHaveTooManyCharactersTogetherIsRefused() throws Exception {
            List<String> paths = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                paths.add("/long-" + i + "/" + "c".repeat(2990));
            }
            refused(l -> l.acquire(LockRequest.paths(paths).tenant(tenant).build()), IllegalArgumentException.class,
                    "at most 262144 characters together");
        }

        @Test
        void negativeZeroAndAbsurdLeasesAndWaitsAreRefused() throws Exception {
            refused(l -> LockRequest.paths("/a").lease(Duration.ofSeconds(-1)), IllegalArgumentException.class, "lease", "positive");
            refused(l -> LockRequest.paths("/a").lease(Duration.ZERO), IllegalArgumentException.class, "lease", "positive");
            refused(l -> LockRequest.paths("/a").waitAtMost(Duration.ofMillis(-1)), IllegalArgumentException.class, "waitAtMost");
            refused(l -> LockRequest.paths("/a").lease(Duration.ofDays(365)), IllegalArgumentException.class, "longer than the maximum");
            refused(l -> LockRequest.paths("/a").waitAtMost(Duration.ofSeconds(Long.MAX_VALUE)), IllegalArgumentException.class,
                    "longer than the maximum");
            refused(l -> LockRequest.paths("/a").lease(null), NullPointerException.class, "lease");
            refused(l -> LockRequest.singleton("job").lease(Duration.ofSeconds(1)).lockAtLeastFor(Duration.ofSeconds(2)).build(),
                    IllegalArgumentException.class, "lockAtLeastFor", "job");
            refused(l -> LockRequest.semaphore("exports", 0), IllegalArgumentException.class, "at least 1 permit", "exports");
        }

        @Test
        void aRenewalWithANegativeZeroOrAbsurdLeaseIsRefusedAndKeepsTheLock() throws Exception {
            refused(l -> bystander.renew(Duration.ofSeconds(-5)), IllegalArgumentException.class, "lease", "positive");
            refused(l -> bystander.renew(Duration.ZERO), IllegalArgumentException.class, "lease", "positive");
            refused(l -> bystander.renew(Duration.ofDays(365)), IllegalArgumentException.class, "longer than the maximum");
            assertThat(bystander.isValid()).isTrue();
        }

        @Test
        void aLeaseTooShortForTheWatchdogIsRefusedForScopedLocks() throws Exception {
            // the watchdog looks every 100 ms by default: it could not renew a 250 ms lease in time
            refused(l -> l.enter(LockRequest.paths("/short").tenant(tenant).lease(Duration.ofMillis(250)).build()),
                    IllegalArgumentException.class, "/short", "250 ms", "at least 300 ms");
            refused(l -> l.run(LockRequest.paths("/short").tenant(tenant).lease(Duration.ofMillis(250)).build(), () -> { }),
                    IllegalArgumentException.class, "/short", "too short for the watchdog");
        }

        @Test
        void keepRenewedRefusesALeaseTooShortForTheWatchdogAndGivesTheLockBack() {
            LockHandle h = locks.acquire(LockRequest.paths("/short-kept").tenant(tenant).lease(Duration.ofMillis(250)).build());

            assertThatThrownBy(() -> locks.keepRenewed(h)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("/short-kept").hasMessageContaining("at least 300 ms");
            assertThat(locks.holders(tenant, "/short-kept")).isEmpty();
        }

        @Test
        void badTenantsAndNamesAreRefused() throws Exception {
            refused(l -> LockRequest.paths("/a").tenant(null), IllegalArgumentException.class, "tenant", "null");
            refused(l -> LockRequest.paths("/a").tenant(" "), IllegalArgumentException.class, "tenant", "blank");
            refused(l -> LockRequest.paths("/a").tenant("acme\u0000"), IllegalArgumentException.class, "tenant", "U+0000");
            refused(l -> LockRequest.paths("/a").tenant("acme\n"), IllegalArgumentException.class, "tenant", "U+000A");
            refused(l -> LockRequest.paths("/a").tenant("acme\uD800"), IllegalArgumentException.class, "tenant", "U+D800");
            refused(l -> LockRequest.paths("/a").tenant("t".repeat(191)), IllegalArgumentException.class, "tenant", "longer");
            refused(l -> l.holders("acme\u0007", "/a"), IllegalArgumentException.class, "tenant");
            refused(l -> LockRequest.singleton(null).build(), IllegalArgumentException.class, "name");
            refused(l -> LockRequest.singleton("job\u0000").build(), IllegalArgumentException.class, "singleton name");
        }

        @Test
        void sqlLookingPathsAreLockedAsOrdinaryPathsAndTheTablesSurvive() throws Exception {
            String sql = "/'; DROP TABLE " + prefix + "held; --";
            String quoted = "/x\"; DELETE FROM " + prefix + "held WHERE '1'='1";
            try (LockHandle a = locks.acquire(path(sql)); LockHandle b = locks.acquire(path(quoted))) {
                assertThat(locks.holders(tenant, sql)).extracting(LockHolder::path).containsExactly(sql);
                assertThat(locks.holders(tenant, quoted)).extracting(LockHolder::path).containsExactly(quoted);
                assertThat(locks.tryAcquire(path(sql))).isEmpty();
                assertThat(locks.holders(tenant, "/bystander")).hasSize(1);
            }
            // the table is still there and still holds the bystander's row
            assertThat(StoreSnapshot.of(pool, prefix)).anyMatch(row -> row.startsWith("held:") && row.contains("/bystander"));
            assertThat(locks.holders(tenant, "/bystander")).hasSize(1);
        }

        @Test
        void likeWildcardsMatchOnlyThemselves() {
            try (LockHandle percent = locks.acquire(path("/w%")); LockHandle underscore = locks.acquire(path("/w_"))) {
                assertThat(locks.tryAcquire(path("/wx"))).isPresent().get().satisfies(LockHandle::release);
                assertThat(locks.tryAcquire(path("/w%x"))).isPresent().get().satisfies(LockHandle::release);
                assertThat(locks.tryAcquire(path("/w%/child"))).isEmpty();
                assertThat(locks.tryAcquire(path("/w_/child"))).isEmpty();
                assertThat(locks.holders(tenant, "/w%")).extracting(LockHolder::path).containsExactly("/w%");
            }
        }
    }

    @Nested
    class OnH2 extends Contract {
        @Override
        TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class OnMariaDb extends Contract {
        @Override
        TestDatabase database() {
            return TestDatabase.MYSQL;
        }
    }

    @Nested
    class OnPostgres extends Contract {
        @Override
        TestDatabase database() {
            return TestDatabase.POSTGRESQL;
        }
    }
}
