package dev.locks.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;

import dev.locks.InvalidLockPathException;
import dev.locks.LockHandle;
import dev.locks.LockHolder;
import dev.locks.LockMode;
import dev.locks.LockRequest;
import dev.locks.LockTimeoutException;
import dev.locks.annotation.PathLocked;

/** {@code @PathLocked} in a running application: every attribute and every SpEL form. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
abstract class PathLockedContract extends AnnotationContract {

    private LockTestNodes nodes;

    private FileService files;

    private ClassLevelService classLevel;

    private Archive archive;

    private FileService filesWithCountingParser;

    private CountingEvaluator parser;

    @BeforeAll
    void start() {
        nodes = new LockTestNodes(database());
        ConfigurableApplicationContext node = nodes.node("node-a", Application.class);
        files = node.getBean(FileService.class);
        classLevel = node.getBean(ClassLevelService.class);
        archive = nodes.node("node-jdk", List.of("spring.aop.proxy-target-class=false"), InterfaceApplication.class)
                .getBean(Archive.class);
        ConfigurableApplicationContext counted = nodes.node("node-counted", Application.class, CountingParser.class);
        filesWithCountingParser = counted.getBean(FileService.class);
        parser = counted.getBean(CountingEvaluator.class);
    }

    @AfterAll
    void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }

    @Test
    void locksThePathsNamedByArgumentsWhileTheMethodRuns() {
        files.move("/src/a", "/dst/b", () -> {
            assertThat(nodes.isLocked("/src/a")).isTrue();
            assertThat(nodes.isLocked("/dst/b")).isTrue();
            assertThat(nodes.isLocked("/src/other")).isFalse();
        });
        assertThat(nodes.isLocked("/src/a")).isFalse();
        assertThat(nodes.isLocked("/dst/b")).isFalse();
    }

    @Test
    void aLockOnAPathCoversItsSubtreeAndAncestors() {
        files.move("/tree/mid", "/elsewhere", () -> {
            assertThat(nodes.isLocked("/tree/mid/leaf")).isTrue();
            assertThat(nodes.isLocked("/tree")).isTrue();
            assertThat(nodes.isLocked("/tree/middle")).isFalse();
        });
    }

    @Test
    void readsArgumentsByPositionWithP0AndA1() {
        files.copy("/pos/from", "/pos/to", () -> {
            assertThat(nodes.isLocked("/pos/from")).isTrue();
            assertThat(nodes.isLocked("/pos/to")).isTrue();
        });
    }

    @Test
    void resolvesBeansWithTheAtSign() {
        files.editHome("kpatel", () -> assertThat(nodes.isLocked("/home/kpatel")).isTrue());
    }

    @Test
    void seesRootMethodAndRootTarget() {
        files.rootForms(() -> assertThat(nodes.isLocked("/methods/rootForms/suffix")).isTrue());
    }

    @Test
    void locksEveryElementOfAnArray() {
        files.lockArray(new String[] { "/arr/1", "/arr/2" }, () -> {
            assertThat(nodes.isLocked("/arr/1")).isTrue();
            assertThat(nodes.isLocked("/arr/2")).isTrue();
        });
    }

    @Test
    void locksEveryElementOfACollection() {
        files.lockCollection(Set.of("/coll/1", "/coll/2"), () -> {
            assertThat(nodes.isLocked("/coll/1")).isTrue();
            assertThat(nodes.isLocked("/coll/2")).isTrue();
        });
    }

    @Test
    void locksTheToStringOfAnyOtherObject() {
        files.lockObject(new Folder("/obj/report"), () -> assertThat(nodes.isLocked("/obj/report")).isTrue());
    }

    @Test
    void splitsExpressionsOnlyAtTopLevelCommas() {
        files.commas("/c", () -> {
            assertThat(nodes.isLocked("/quoted,comma")).isTrue();
            assertThat(nodes.isLocked("/list/a")).isTrue();
            assertThat(nodes.isLocked("/list/b")).isTrue();
            assertThat(nodes.isLocked("/c,x")).isTrue();
            assertThat(nodes.isLocked("/quoted")).isFalse();
        });
    }

    @Test
    void sharedModeAdmitsOtherReadersButNoWriter() {
        files.read("/shared/doc", () -> {
            assertThat(nodes.isFree(LockRequest.paths("/shared/doc").shared().build())).isTrue();
            assertThat(nodes.isFree(LockRequest.paths("/shared/doc").exclusive().build())).isFalse();
        });
    }

    @Test
    void exclusiveModeAdmitsNoReader() {
        files.move("/excl/doc", "/excl/other", () ->
                assertThat(nodes.isFree(LockRequest.paths("/excl/doc").shared().build())).isFalse());
    }

    @Test
    void tenantExpressionPutsTheLockInThatTenantOnly() {
        files.inTenant("acme", "/t/file", () -> {
            assertThat(nodes.isLocked("acme", "/t/file")).isTrue();
            assertThat(nodes.isLocked("globex", "/t/file")).isFalse();
            assertThat(nodes.isLocked(null, "/t/file")).isFalse();
        });
    }

    @Test
    void leaseAttributeSetsTheLeaseInDatabaseTime() {
        files.withLease("/lease/file", () -> {
            List<LockHolder> holders = nodes.probe().holders(null, "/lease/file");
            assertThat(holders).hasSize(1);
            Duration lease = Duration.between(holders.get(0).since(), holders.get(0).expiresAt());
            assertThat(lease).isBetween(Duration.ofSeconds(44), Duration.ofSeconds(46));
        });
    }

    @Test
    void waitAtMostBoundsTheWaitAndTheTimeoutNamesTheHolder() {
        try (LockHandle held = nodes.probe().tryAcquire(LockRequest.paths("/busy/file").build()).orElseThrow()) {
            long started = System.nanoTime();
            assertThatThrownBy(() -> files.withShortWait("/busy/file"))
                    .isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("/busy/file")
                    .hasMessageContaining("probe");
            Duration waited = Duration.ofNanos(System.nanoTime() - started);
            assertThat(waited).isGreaterThanOrEqualTo(Duration.ofMillis(300)).isLessThan(Duration.ofSeconds(5));
        }
        assertThat(files.runs("withShortWait")).isZero();
    }

    @Test
    void aThrowingMethodReleasesItsLockAndKeepsItsException() {
        IllegalStateException thrown = new IllegalStateException("disk full");
        assertThatThrownBy(() -> files.fail("/fail/file", thrown)).isSameAs(thrown);
        assertThat(nodes.isLocked("/fail/file")).isFalse();
    }

    @Test
    void aCheckedExceptionPassesUnchanged() {
        IOException thrown = new IOException("gone");
        assertThatThrownBy(() -> files.failChecked("/fail/checked", thrown)).isSameAs(thrown);
        assertThat(nodes.isLocked("/fail/checked")).isFalse();
    }

    @Test
    void aNullPathArgumentFailsBeforeTheMethodRunsNamingMethodAndExpression() {
        int before = files.runs("move");
        assertThatThrownBy(() -> files.move(null, "/dst/n", () -> { }))
                .isInstanceOf(InvalidLockPathException.class)
                .hasMessageContaining("#src")
                .hasMessageContaining("@PathLocked on FileService.move(String, String, Runnable)")
                .hasMessageContaining("null");
        assertThat(files.runs("move")).isEqualTo(before);
        assertThat(nodes.isLocked("/dst/n")).isFalse();
    }

    @Test
    void anEmptyCollectionFailsBeforeTheMethodRuns() {
        int before = files.runs("lockCollection");
        assertThatThrownBy(() -> files.lockCollection(Set.of(), () -> { }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty collection")
                .hasMessageContaining("#paths");
        assertThat(files.runs("lockCollection")).isEqualTo(before);
    }

    @Test
    void aNullElementFailsBeforeTheMethodRuns() {
        assertThatThrownBy(() -> files.lockArray(new String[] { "/ok", null }, () -> { }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("null path");
        assertThat(nodes.isLocked("/ok")).isFalse();
    }

    @Test
    void aBlankPathFailsBeforeTheMethodRuns() {
        assertThatThrownBy(() -> files.move("  ", "/dst/blank", () -> { }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("blank");
    }

    @Test
    void aRelativePathNamesThePathAndTheAnnotation() {
        assertThatThrownBy(() -> files.move("relative/x", "/dst/rel", () -> { }))
                .isInstanceOf(InvalidLockPathException.class)
                .hasMessageContaining("relative/x")
                .hasMessageContaining("@PathLocked on FileService.move");
    }

    @Test
    void anExpressionThatFailsToEvaluateNamesTheExpression() {
        assertThatThrownBy(() -> files.lockObject(null, () -> { }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("#folder");
        assertThatThrownBy(() -> files.evaluationFails(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("#name.toUpperCase()")
                .hasMessageContaining("failed");
        assertThat(files.runs("evaluationFails")).isZero();
    }

    @Test
    void aNullTenantFailsInsteadOfFallingBackToTheDefaultTenant() {
        assertThatThrownBy(() -> files.inTenant(null, "/t/null", () -> { }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tenant expression '#customer' gave null");
    }

    @Test
    void aTenantTheServiceRefusesFailsNamingTheMethodAndTheAttribute() {
        assertThatThrownBy(() -> files.inTenant("t".repeat(191), "/t/long", () -> { }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("@PathLocked on FileService.inTenant(String, String, Runnable)")
                .hasMessageContaining("the tenant expression gave a value the lock service refuses")
                .hasMessageContaining("longer than 190 characters");
    }

    @Test
    void anAsyncMethodHoldsItsLockUntilTheFutureItReturnedCompletes() throws Exception {
        AsyncExports exports = nodes.node("node-async", AsyncApplication.class).getBean(AsyncExports.class);
        CompletableFuture<String> work = new CompletableFuture<>();

        CompletableFuture<String> result = exports.export("/async/report", work);
        await().atMost(Duration.ofSeconds(10)).until(() -> nodes.isLocked("/async/report"));
        // the method has returned its unfinished future: the work it stands for is still under way
        Thread.sleep(300);
        assertThat(nodes.isLocked("/async/report")).as("locked until the work completes").isTrue();

        work.complete("done");
        assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("done");
        await().atMost(Duration.ofSeconds(10)).until(() -> !nodes.isLocked("/async/report"));
    }

    @Test
    void aClassLevelAnnotationLocksEveryPublicMethod() {
        classLevel.first(() -> assertThat(nodes.isLocked("/class-level")).isTrue());
        classLevel.second(() -> assertThat(nodes.isLocked("/class-level")).isTrue());
        assertThat(nodes.isLocked("/class-level")).isFalse();
    }

    @Test
    void aMethodAnnotationReplacesTheClassAnnotation() {
        classLevel.own(() -> {
            assertThat(nodes.isLocked("/own")).isTrue();
            assertThat(nodes.isLocked("/class-level")).isFalse();
        });
    }

    @Test
    void aClassWithoutInterfacesGetsAClassProxy() {
        assertThat(AopUtils.isCglibProxy(files)).isTrue();
    }

    @Test
    void anInterfaceGetsAJdkProxyThatHonoursAnnotationsOnTheInterface() {
        assertThat(AopUtils.isJdkDynamicProxy(archive)).isTrue();
        archive.store("/archive/2024", () -> assertThat(nodes.isLocked("/archive/2024")).isTrue());
        assertThat(nodes.isLocked("/archive/2024")).isFalse();
    }

    @Test
    void aJdkProxyHonoursAnnotationsOnTheImplementationWithItsParameterNames() {
        archive.seal("q3", () -> assertThat(nodes.isLocked("/sealed/q3")).isTrue());
    }

    @Test
    void expressionsAreParsedOnceAtStartUpAndNeverPerCall() {
        int parsedAtStartUp = parser.parsed.get();
        assertThat(parsedAtStartUp).isGreaterThanOrEqualTo(10);
        for (int i = 0; i < 3; i++) {
            filesWithCountingParser.move("/parse/" + i, "/parse-dst/" + i, () -> { });
            filesWithCountingParser.editHome("u" + i, () -> { });
        }
        assertThat(parser.parsed).hasValue(parsedAtStartUp);
    }

    @Test
    void concurrentCallersOnOnePathRunOneAtATime() throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicBoolean overlap = new AtomicBoolean();
        Runnable body = () -> {
            if (inside.incrementAndGet() > 1) {
                overlap.set(true);
            }
            sleep(20);
            inside.decrementAndGet();
        };
        List<Thread> threads = new java.util.ArrayList<>();
        for (int i = 0; i < 6; i++) {
            Thread thread = new Thread(() -> files.move("/serial/x", "/serial-dst", body));
            thread.start();
            threads.add(thread);
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(overlap).isFalse();
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** An object whose toString() is a path. */
    record Folder(String path) {
        @Override
        public String toString() {
            return path;
        }
    }

    /** A bean used in expressions as {@code @folders}. */
    public static class Folders {
        public String home(String user) {
            return "/home/" + user;
        }
    }

    /** Annotated methods, one per attribute and expression form. */
    public static class FileService {

        private final java.util.Map<String, AtomicInteger> runs = new java.util.concurrent.ConcurrentHashMap<>();

        int runs(String method) {
            return runs.computeIfAbsent(method, m -> new AtomicInteger()).get();
        }

        private void ran(String method) {
            runs.computeIfAbsent(method, m -> new AtomicInteger()).incrementAndGet();
        }

        public String getSuffix() {
            return "/suffix";
        }

        @PathLocked(paths = "#src, #dst")
        public void move(String src, String dst, Runnable inside) {
            ran("move");
            inside.run();
        }

        @PathLocked(paths = "#p0,#a1")
        public void copy(String from, String to, Runnable inside) {
            inside.run();
        }

        @PathLocked(paths = "@folders.home(#user)")
        public void editHome(String user, Runnable inside) {
            inside.run();
        }

        @PathLocked(paths = "'/methods/' + #root.method.name + #root.target.suffix")
        public void rootForms(Runnable inside) {
            inside.run();
        }

        @PathLocked(paths = "#paths")
        public void lockArray(String[] paths, Runnable inside) {
            inside.run();
        }

        @PathLocked(paths = "#paths")
        public void lockCollection(Set<String> paths, Runnable inside) {
            ran("lockCollection");
            inside.run();
        }

        @PathLocked(paths = "#folder")
        public void lockObject(Folder folder, Runnable inside) {
            inside.run();
        }

        @PathLocked(paths = "'/quoted,comma', {'/list/a', '/list/b'}, #base.concat(',x')")
        public void commas(String base, Runnable inside) {
            inside.run();
        }

        @PathLocked(paths = "#path", mode = LockMode.SHARED)
        public void read(String path, Runnable inside) {
            inside.run();
        }

        @PathLocked(paths = "#path", tenant = "#customer")
        public void inTenant(String customer, String path, Runnable inside) {
            inside.run();
        }

        @PathLocked(paths = "#path", lease = "45s")
        public void withLease(String path, Runnable inside) {
            inside.run();
        }

        @PathLocked(paths = "#path", waitAtMost = "300ms")
        public void withShortWait(String path) {
            ran("withShortWait");
        }

        @PathLocked(paths = "'/eval/' + #name.toUpperCase()")
        public void evaluationFails(String name) {
            ran("evaluationFails");
        }

        @PathLocked(paths = "#path")
        public void fail(String path, RuntimeException toThrow) {
            throw toThrow;
        }

        @PathLocked(paths = "#path")
        public void failChecked(String path, Exception toThrow) throws Exception {
            throw toThrow;
        }
    }

    /** Every public method locks {@code /class-level} unless it says otherwise. */
    @PathLocked(paths = "'/class-level'")
    public static class ClassLevelService {

        public void first(Runnable inside) {
            inside.run();
        }

        public void second(Runnable inside) {
            inside.run();
        }

        @PathLocked(paths = "'/own'")
        public void own(Runnable inside) {
            inside.run();
        }
    }

    /** Annotated on the interface and on the implementation. */
    public interface Archive {

        @PathLocked(paths = "#path")
        void store(String path, Runnable inside);

        void seal(String name, Runnable inside);
    }

    public static class DefaultArchive implements Archive {

        @Override
        public void store(String path, Runnable inside) {
            inside.run();
        }

        @Override
        @PathLocked(paths = "'/sealed/' + #name")
        public void seal(String name, Runnable inside) {
            inside.run();
        }
    }

    /** Counts how often SpEL is parsed. */
    public static class CountingEvaluator extends LockExpressionEvaluator {

        final AtomicInteger parsed = new AtomicInteger();

        @Override
        protected org.springframework.expression.Expression parseExpression(String expression) {
            parsed.incrementAndGet();
            return super.parseExpression(expression);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CountingParser {

        @Bean
        static CountingEvaluator countingEvaluator() {
            return new CountingEvaluator();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class InterfaceApplication {

        @Bean
        Archive archive() {
            return new DefaultArchive();
        }
    }

    public static class AsyncExports {
        /** Returns at once, with a future that completes when {@code work} does, as a client's async call would. */
        @Async
        @PathLocked(paths = "#path")
        public CompletableFuture<String> export(String path, CompletableFuture<String> work) {
            return work.thenApply(value -> value);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class AsyncApplication {

        @Bean
        AsyncExports asyncExports() {
            return new AsyncExports();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Application {

        @Bean
        FileService fileService() {
            return new FileService();
        }

        @Bean
        ClassLevelService classLevelService() {
            return new ClassLevelService();
        }

        @Bean
        Folders folders() {
            return new Folders();
        }
    }
}
