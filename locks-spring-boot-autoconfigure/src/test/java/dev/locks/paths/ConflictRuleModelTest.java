package dev.locks.paths;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.TreeSet;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.locks.LockHandle;
import dev.locks.LockHolder;
import dev.locks.LockMode;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;

/**
 * The conflict rule of DESIGN §1 against a model a few lines long: random sequences of
 * {@code tryAcquire} and {@code release} on H2 (several paths, both modes, two tenants, tricky
 * characters) must grant exactly what the model grants, and {@code holders} must list exactly the
 * model's overlapping grants. The seed is in every failure message.
 */
class ConflictRuleModelTest {

    private static final long SEED = Long.getLong("paths.seed", 7_2026L);

    private static final String[] PATHS = { "/", "/a", "/a/b", "/a/bc", "/a/b/c", "/a/b/c/d", "/ab", "/a%", "/a_",
            "/a!", "/a\\b", "/a'b", "/A", "/a b", "/a/b ", "/x", "/x/y", "/é", "/e\u0301/z" };

    private static final String[] TENANTS = { "t1", "t2" };

    private HikariDataSource pool;

    private JdbcLockService locks;

    private String prefix;

    /** One grant the model believes is held. */
    private record Held(int id, String tenant, List<String> paths, LockMode mode, LockHandle handle) {
    }

    @BeforeEach
    void start() {
        prefix = TestDatabase.uniquePrefix();
        pool = TestDatabase.H2.newPool(4);
        locks = JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true)
                .settings(LockSettings.builder().nodeId("model").slowWaitLog(null).purgeInterval(null)
                        .defaultLease(Duration.ofMinutes(10)).build()).build();
    }

    @AfterEach
    void stop() {
        locks.close();
        TestDatabase.dropTables(pool, prefix);
        pool.close();
    }

    @Test
    void tryAcquireGrantsExactlyWhatTheModelGrants() {
        Random random = new Random(SEED);
        List<Held> held = new ArrayList<>();
        int granted = 0;
        int refused = 0;
        for (int step = 0; step < 3000; step++) {
            if (!held.isEmpty() && random.nextInt(3) == 0) {
                Held h = held.remove(random.nextInt(held.size()));
                assertThat(h.handle().release()).as("step %d release (seed %d)", step, SEED).isTrue();
                continue;
            }
            String tenant = TENANTS[random.nextInt(TENANTS.length)];
            List<String> paths = new ArrayList<>();
            for (int i = random.nextInt(3); i >= 0; i--) {
                paths.add(PATHS[random.nextInt(PATHS.length)]);
            }
            LockMode mode = random.nextBoolean() ? LockMode.EXCLUSIVE : LockMode.SHARED;
            boolean expected = held.stream().noneMatch(h -> conflicts(h, tenant, paths, mode));
            Optional<LockHandle> handle = locks.tryAcquire(LockRequest.paths(paths).mode(mode).tenant(tenant).build());
            assertThat(handle.isPresent()).as("step %d (seed %d): %s %s in %s while holding %s", step, SEED, mode, paths,
                    tenant, describe(held)).isEqualTo(expected);
            if (handle.isPresent()) {
                held.add(new Held(step, tenant, merged(paths), mode, handle.get()));
                granted++;
            }
            else {
                refused++;
            }
            if (step % 10 == 0) {
                checkHolders(held, step);
            }
        }
        assertThat(granted).isGreaterThan(300);
        assertThat(refused).isGreaterThan(300);
    }

    private void checkHolders(List<Held> held, int step) {
        String tenant = TENANTS[step % TENANTS.length];
        String path = PATHS[(step / 10) % PATHS.length];
        TreeSet<String> expected = new TreeSet<>();
        for (Held h : held) {
            for (String p : h.paths()) {
                String n = normal(p);
                if (h.tenant().equals(tenant) && overlaps(n, normal(path))) {
                    expected.add(h.mode() + " " + n);
                }
            }
        }
        List<LockHolder> actual = new ArrayList<>(locks.holders(tenant, path));
        actual.sort(Comparator.comparing(LockHolder::path));
        TreeSet<String> seen = new TreeSet<>();
        actual.forEach(a -> seen.add(a.mode() + " " + a.path()));
        assertThat(seen).as("step %d (seed %d): holders of %s in %s", step, SEED, path, tenant).isEqualTo(expected);
    }

    /** DESIGN §1: same tenant, overlapping paths, at least one exclusive; every tryAcquire is its own owner. */
    private static boolean conflicts(Held h, String tenant, List<String> paths, LockMode mode) {
        if (!h.tenant().equals(tenant) || (h.mode() == LockMode.SHARED && mode == LockMode.SHARED)) {
            return false;
        }
        for (String a : h.paths()) {
            for (String b : paths) {
                if (overlaps(normal(a), normal(b))) {
                    return true;
                }
            }
        }
        return false;
    }

    /** DESIGN §1: overlapping paths of one request are merged, so the store keeps only the outermost. */
    private static List<String> merged(List<String> paths) {
        List<String> kept = new ArrayList<>();
        for (String p : paths) {
            String n = normal(p);
            boolean covered = paths.stream().map(ConflictRuleModelTest::normal).anyMatch(o -> ancestor(o, n));
            if (!covered && !kept.contains(n)) {
                kept.add(n);
            }
        }
        return kept;
    }

    private static String normal(String p) {
        return java.text.Normalizer.normalize(p, java.text.Normalizer.Form.NFC);
    }

    private static boolean overlaps(String a, String b) {
        return a.equals(b) || ancestor(a, b) || ancestor(b, a);
    }

    private static boolean ancestor(String a, String b) {
        if (a.equals("/")) {
            return !b.equals("/");
        }
        return b.length() > a.length() && b.startsWith(a) && b.charAt(a.length()) == '/';
    }

    private static String describe(List<Held> held) {
        return held.stream().map(h -> h.mode() + " " + h.paths() + "@" + h.tenant()).toList().toString();
    }
}
