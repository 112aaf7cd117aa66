package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
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
        assertOneTextPerShape(StatementShapes.Form.UNLESS_CONFLICTING, (request, releasing) ->
                store.unlessConflictingSql(request, waitersBefore(request)));
    }

    @Test
    void requestsOfOneShapeBuildOnePipelinedText() {
        JdbcLockStore store = store(new PostgresDialect());
        assertOneTextPerShape(StatementShapes.Form.PIPELINED, (request, releasing) ->
                store.pipelinedSql(request, waitersBefore(request), releasing));
    }

    @Test
    void requestsOfOneShapeBuildOneBlockText() {
        JdbcLockStore store = store(new MariaDbDialect());
        assertOneTextPerShape(StatementShapes.Form.BLOCK, (request, releasing) ->
                store.blockSql(request, RequestKeys.of(request).nodeLocks(), waitersBefore(request), releasing));
    }

    @Test
    void aShapesTextIsKeptAndServedAgain() {
        StatementShapes shapes = new StatementShapes();
        StatementShapes.Shape shape = shape(3);

        String first = shapes.text(shape, () -> new String("text"));
        String second = shapes.text(shape, () -> new String("text"));

        assertThat(second).isSameAs(first);
    }

    @Test
    void aKeptTextThatARequestWouldNotBuildFailsAnAssertion() {
        // surefire runs with assertions on, as the tests of every store do
        StatementShapes shapes = new StatementShapes();
        shapes.text(shape(3), () -> "text");

        assertThatThrownBy(() -> shapes.text(shape(3), () -> "another text")).isInstanceOf(AssertionError.class)
                .hasMessageContaining("keys=3");
    }

    @Test
    void moreShapesThanTheBoundAreBuiltAgainRatherThanKeptWithoutEnd() {
        StatementShapes shapes = new StatementShapes();
        for (int keys = 1; keys <= StatementShapes.MAX_SHAPES * 3; keys++) {
            int k = keys;
            assertThat(shapes.text(shape(k), () -> "keys " + k)).isEqualTo("keys " + k);
            assertThat(shapes.size()).isLessThanOrEqualTo(StatementShapes.MAX_SHAPES);
        }
        assertThat(shapes.size()).isEqualTo(StatementShapes.MAX_SHAPES);
    }

    @Test
    void aTextLongerThanTheBoundIsBuiltEachTime() {
        StatementShapes shapes = new StatementShapes();
        AtomicInteger builds = new AtomicInteger();
        StatementShapes.Shape shape = shape(1000);
        String longText = "x".repeat(StatementShapes.MAX_KEPT_LENGTH + 1);

        shapes.text(shape, () -> longText + builds.incrementAndGet());
        String second = shapes.text(shape, () -> longText + builds.incrementAndGet());

        assertThat(second).endsWith("2");
        assertThat(shapes.size()).isZero();
    }

    @Test
    void shapesDifferingInAnyOneComponentAreNeitherEqualNorHashedAlike() throws Exception {
        StatementShapes.Shape base = shape(3);
        RecordComponent[] components = StatementShapes.Shape.class.getRecordComponents();
        Constructor<StatementShapes.Shape> canonical = StatementShapes.Shape.class.getDeclaredConstructor(
                Arrays.stream(components).map(RecordComponent::getType).toArray(Class<?>[]::new));
        for (int changed = 0; changed < components.length; changed++) {
            Object[] values = new Object[components.length];
            for (int i = 0; i < components.length; i++) {
                Object value = components[i].getAccessor().invoke(base);
                values[i] = i == changed ? another(value) : value;
            }
            StatementShapes.Shape other = canonical.newInstance(values);
            // a component left out of hashCode would not break look-ups, only crowd them into one bucket
            assertThat(other).as("a shape with another %s", components[changed].getName()).isNotEqualTo(base)
                    .doesNotHaveSameHashCodeAs(base);
        }
    }

    @Test
    void equalShapesHaveEqualHashCodes() {
        assertThat(shape(3)).isEqualTo(shape(3)).hasSameHashCodeAs(shape(3));
    }

    private static Object another(Object value) {
        if (value instanceof Enum<?> e) {
            Object[] constants = e.getDeclaringClass().getEnumConstants();
            return constants[(e.ordinal() + 1) % constants.length];
        }
        if (value instanceof Integer i) {
            return i + 1;
        }
        if (value instanceof Long l) {
            return l + 1;
        }
        if (value instanceof Boolean b) {
            return !b;
        }
        throw new IllegalArgumentException("A shape component of an unknown type: " + value.getClass());
    }

    /** A single-path exclusive block's shape with {@code keys} keys. */
    private static StatementShapes.Shape shape(int keys) {
        return new StatementShapes.Shape(StatementShapes.Form.BLOCK, LockKind.PATH, LockMode.EXCLUSIVE, 1, keys,
                keys - 1, 1, 0, false, false);
    }

    @FunctionalInterface
    private interface Builder {
        String build(GrantRequest request, boolean releasing);
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
                    form == StatementShapes.Form.UNLESS_CONFLICTING ? null : keys.nodeLocks(),
                    waitersBefore(request), releasing);
            String text = builder.build(request, releasing);
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

    private static long waitersBefore(GrantRequest request) {
        return JdbcLockStore.waitersBefore(request);
    }

    private static JdbcLockStore store(SqlDialect dialect) {
        JdbcDataSource unused = new JdbcDataSource();
        unused.setURL("jdbc:h2:mem:shapes");
        return new JdbcLockStore(unused, dialect, "locks_");
    }
}
