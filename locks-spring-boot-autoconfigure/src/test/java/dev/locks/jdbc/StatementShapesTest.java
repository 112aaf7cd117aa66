package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

import dev.locks.LockKind;
import dev.locks.LockMode;
import dev.locks.LockPath;
import dev.locks.PathNormalizer;
import dev.locks.store.GrantRequest;

/**
 * Grant statements' texts kept by shape: a text is built once per shape, and the shape says
 * everything the text depends on, so a kept text is the one a request would have built itself.
 */
class StatementShapesTest {

    private static final PathNormalizer PATHS = new PathNormalizer(true, 4000);

    private static final int REQUESTS = 20_000;

    @Test
    void requestsOfOneShapeBuildOneUnlessConflictingText() {
        JdbcLockStore store = store(new H2Dialect());
        assertOneTextPerShape(StatementShapes.Form.UNLESS_CONFLICTING, (request, keys, releasing) ->
                store.unlessConflictingSql(request, waitersBefore(request)));
    }

    @Test
    void requestsOfOneShapeBuildOnePipelinedText() {
        JdbcLockStore store = store(new PostgresDialect());
        assertOneTextPerShape(StatementShapes.Form.PIPELINED, (request, keys, releasing) ->
                store.pipelinedSql(request, waitersBefore(request), releasing));
    }

    @Test
    void requestsOfOneShapeBuildOneBlockText() {
        JdbcLockStore store = store(new MariaDbDialect());
        assertOneTextPerShape(StatementShapes.Form.BLOCK, (request, keys, releasing) ->
                store.blockSql(request, locks(request, keys), waitersBefore(request), releasing));
    }

    @Test
    void aShapeIsBuiltOnceAndThenKept() {
        StatementShapes shapes = new StatementShapes();
        AtomicInteger builds = new AtomicInteger();
        StatementShapes.Shape shape = new StatementShapes.Shape(StatementShapes.Form.BLOCK, LockKind.PATH,
                LockMode.EXCLUSIVE, 1, 3, 2, 0, false, false);

        String first = shapes.text(shape, () -> "text " + builds.incrementAndGet());
        String second = shapes.text(shape, () -> "text " + builds.incrementAndGet());

        assertThat(second).isSameAs(first);
        assertThat(builds).hasValue(1);
    }

    @Test
    void moreShapesThanTheBoundAreBuiltAgainRatherThanKeptWithoutEnd() {
        StatementShapes shapes = new StatementShapes();
        for (int keys = 1; keys <= StatementShapes.MAX_SHAPES * 3; keys++) {
            int k = keys;
            StatementShapes.Shape shape = new StatementShapes.Shape(StatementShapes.Form.BLOCK, LockKind.PATH,
                    LockMode.EXCLUSIVE, 1, k, k - 1, 0, false, false);
            assertThat(shapes.text(shape, () -> "keys " + k)).isEqualTo("keys " + k);
            assertThat(shapes.size()).isLessThanOrEqualTo(StatementShapes.MAX_SHAPES);
        }
    }

    @Test
    void aTextLongerThanTheBoundIsBuiltEachTime() {
        StatementShapes shapes = new StatementShapes();
        AtomicInteger builds = new AtomicInteger();
        StatementShapes.Shape shape = new StatementShapes.Shape(StatementShapes.Form.BLOCK, LockKind.PATH,
                LockMode.EXCLUSIVE, 500, 1000, 500, 0, false, false);
        String longText = "x".repeat(StatementShapes.MAX_KEPT_LENGTH + 1);

        shapes.text(shape, () -> longText + builds.incrementAndGet());
        String second = shapes.text(shape, () -> longText + builds.incrementAndGet());

        assertThat(second).endsWith("2");
        assertThat(shapes.size()).isZero();
    }

    @FunctionalInterface
    private interface Builder {
        String build(GrantRequest request, RequestKeys keys, boolean releasing);
    }

    /** Random requests of every kind, mode, path count, depth and place in the queue. */
    private static void assertOneTextPerShape(StatementShapes.Form form, Builder builder) {
        Random random = new Random(20261128);
        Map<StatementShapes.Shape, String> texts = new HashMap<>();
        int repeats = 0;
        for (int n = 0; n < REQUESTS; n++) {
            GrantRequest request = randomRequest(random);
            RequestKeys keys = RequestKeys.of(request);
            boolean releasing = form != StatementShapes.Form.UNLESS_CONFLICTING && random.nextBoolean();
            StatementShapes.Shape shape = StatementShapes.Shape.of(form, request, keys,
                    form == StatementShapes.Form.UNLESS_CONFLICTING ? null : locks(request, keys),
                    waitersBefore(request), releasing);
            String text = builder.build(request, keys, releasing);
            String earlier = texts.putIfAbsent(shape, text);
            if (earlier != null) {
                repeats++;
                assertThat(text).as("the text of %s for %s", shape, request).isEqualTo(earlier);
            }
        }
        // the shapes must repeat, or nothing was compared
        assertThat(repeats).isGreaterThan(REQUESTS / 2);
        assertThat(texts.size()).isGreaterThan(100);
    }

    private static GrantRequest randomRequest(Random random) {
        LockKind kind = LockKind.values()[random.nextInt(LockKind.values().length)];
        List<LockPath> paths = new ArrayList<>();
        if (kind == LockKind.PATH) {
            int count = 1 + random.nextInt(3);
            for (int i = 0; i < count; i++) {
                StringBuilder path = new StringBuilder();
                int depth = random.nextInt(5);
                for (int d = 0; d < depth; d++) {
                    path.append('/').append((char) ('a' + random.nextInt(3)));
                }
                paths.add(PATHS.normalize(path.length() == 0 ? "/" : path.toString()));
            }
            paths = LockPath.merge(paths);
        }
        else {
            paths.add(LockPath.flat("job-" + random.nextInt(5)));
        }
        LockMode mode = kind == LockKind.SEMAPHORE || random.nextBoolean() ? LockMode.EXCLUSIVE : LockMode.SHARED;
        int permits = kind == LockKind.SEMAPHORE ? 1 + random.nextInt(10) : 1;
        long ticket = random.nextBoolean() ? 0 : 1 + random.nextInt(1_000_000);
        return new GrantRequest(kind, "tenant-" + random.nextInt(3), paths, mode, Duration.ofSeconds(30), permits,
                "o".repeat(32), "g".repeat(32), "node", "thread", ticket, random.nextInt(4) == 0);
    }

    private static List<SqlDialect.NodeLock> locks(GrantRequest request, RequestKeys keys) {
        return keys.nodeLocks();
    }

    private static long waitersBefore(GrantRequest request) {
        return JdbcLockStore.waitersBefore(request);
    }

    private static JdbcLockStore store(SqlDialect dialect) {
        JdbcDataSource unused = new JdbcDataSource();
        unused.setURL("jdbc:h2:mem:shapes");
        return new JdbcLockStore(unused, dialect, "locks_");
    }
}
