package dev.locks.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import dev.locks.LockHandle;
import dev.locks.LockHolder;
import dev.locks.LockKind;
import dev.locks.LockRequest;
import dev.locks.LockTimeoutException;
import dev.locks.annotation.ClusterSingleton;
import dev.locks.annotation.ClusterSingleton.OnBusy;
import dev.locks.jdbc.JdbcLockService;

/** {@code @ClusterSingleton}: naming, leases, lockAtLeastFor, tenants and each {@link OnBusy}. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
abstract class ClusterSingletonContract extends AnnotationContract {

    private LockTestNodes nodes;

    private Jobs jobs;

    private Jobs jobsOnNodeB;

    @BeforeAll
    void start() {
        nodes = new LockTestNodes(database());
        jobs = nodes.node("node-a", Application.class).getBean(Jobs.class);
        jobsOnNodeB = nodes.node("node-b", Application.class).getBean(Jobs.class);
    }

    @AfterAll
    void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }

    private LockHandle holdElsewhere(String name) {
        return nodes.probe().tryAcquire(LockRequest.singleton(name).build()).orElseThrow();
    }

    @Test
    void holdsTheSingletonNamedClassNameDotMethodNameWhileRunning() {
        jobs.nightly(() -> assertThat(nodes.holders(LockKind.SINGLETON, null, "Jobs.nightly")).isEqualTo(1));
        assertThat(nodes.holders(LockKind.SINGLETON, null, "Jobs.nightly")).isZero();
    }

    @Test
    void skipReturnsNullWithoutRunningAndLogsTheFirstSkipAtInfoAndLaterOnesAtDebug() {
        ListAppender<ILoggingEvent> log = capture();
        try (LockHandle held = holdElsewhere("report")) {
            int before = jobs.runs();
            assertThat(jobs.report()).isNull();
            assertThat(jobs.report()).isNull();
            assertThat(jobs.runs()).isEqualTo(before);
        }
        finally {
            release(log);
        }
        List<ILoggingEvent> skips = log.list.stream()
                .filter(event -> event.getFormattedMessage().contains("Skipped Jobs.report()")).toList();
        assertThat(skips).extracting(ILoggingEvent::getLevel).containsExactly(Level.INFO, Level.DEBUG);
        assertThat(skips.get(0).getFormattedMessage()).contains("held across restarts")
                .contains("later skips of this method are logged at DEBUG");
        assertThat(jobs.report()).isEqualTo("done");
    }

    @Test
    void skipReturnsAnEmptyOptionalForOptionalMethods() {
        try (LockHandle held = holdElsewhere("optional-report")) {
            assertThat(jobs.optionalReport()).isEmpty();
        }
        assertThat(jobs.optionalReport()).contains("done");
    }

    @Test
    void skipReturnsAnEmptyOptionalThroughAnInterfaceProxyOfAGenericMethod() {
        @SuppressWarnings("unchecked")
        Task<Optional<String>> task = nodes.node("node-jdk", List.of("spring.aop.proxy-target-class=false"),
                InterfaceApplication.class).getBean(Task.class);
        assertThat(AopUtils.isJdkDynamicProxy(task)).isTrue();
        // the proxy sees Task.run() returning Object; the implementation's Optional is what the caller expects
        try (LockHandle held = holdElsewhere("generic-task")) {
            assertThat(task.run()).isEmpty();
        }
        assertThat(task.run()).contains("done");
    }

    @Test
    void aSkippingJobCalledOnTwoNodesAtOnceRunsOnce() throws Exception {
        CyclicBarrier start = new CyclicBarrier(2);
        CountDownLatch running = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        Runnable work = () -> {
            ran.incrementAndGet();
            running.countDown();
            PathLockedContract.sleep(500);
        };
        CompletableFuture<Void> a = CompletableFuture.runAsync(() -> {
            await(start);
            jobs.nightly(work);
        });
        CompletableFuture<Void> b = CompletableFuture.runAsync(() -> {
            await(start);
            jobsOnNodeB.nightly(work);
        });
        CompletableFuture.allOf(a, b).get(20, TimeUnit.SECONDS);
        assertThat(ran).hasValue(1);
    }

    @Test
    void waitRunsOnceTheOtherNodeIsDone() throws Exception {
        LockHandle held = holdElsewhere("bootstrap");
        CompletableFuture<String> waiting = CompletableFuture.supplyAsync(jobs::bootstrap);
        PathLockedContract.sleep(400);
        assertThat(waiting).isNotDone();
        held.release();
        assertThat(waiting.get(10, TimeUnit.SECONDS)).isEqualTo("bootstrapped");
    }

    @Test
    void waitGivesUpAfterWaitAtMost() {
        try (LockHandle held = holdElsewhere("short-wait")) {
            long started = System.nanoTime();
            assertThatThrownBy(jobs::shortWait).isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("short-wait");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(300))
                    .isLessThan(Duration.ofSeconds(5));
        }
    }

    @Test
    void failThrowsATimeoutNamingTheHolderAtOnce() {
        try (LockHandle held = holdElsewhere("strict")) {
            long started = System.nanoTime();
            assertThatThrownBy(jobs::strict).isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("strict")
                    .hasMessageContaining("is busy")
                    .hasMessageContaining("probe");
            // the default wait is 10s: failing well below it means no wait at all
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
        }
        jobs.strict();
    }

    @Test
    void lockAtLeastForKeepsTheSingletonAfterAnEarlyEnd() {
        long started = System.nanoTime();
        jobs.kept();
        assertThat(nodes.isFree(LockRequest.singleton("kept").build())).isFalse();
        while (!nodes.isFree(LockRequest.singleton("kept").build())) {
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
            PathLockedContract.sleep(50);
        }
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThan(Duration.ofMillis(1800));
    }

    @Test
    void lockAtMostForIsTheLease() {
        jobs.bounded(() -> {
            List<LockHolder> holders = nodes.probe().holders(LockKind.SINGLETON, null, "bounded");
            assertThat(holders).hasSize(1);
            assertThat(Duration.between(holders.get(0).since(), holders.get(0).expiresAt()))
                    .isBetween(Duration.ofSeconds(39), Duration.ofSeconds(41));
        });
    }

    @Test
    void tenantExpressionNamesTheSingletonsTenant() {
        jobs.perTenant("acme", () -> {
            assertThat(nodes.holders(LockKind.SINGLETON, "acme", "per-tenant")).isEqualTo(1);
            assertThat(nodes.holders(LockKind.SINGLETON, null, "per-tenant")).isZero();
        });
    }

    @Test
    void aScheduledJobRunsInsideTheSingleton() throws Exception {
        ConfigurableApplicationContext scheduled = nodes.node("node-scheduled", ScheduledApplication.class);
        try {
            Ticker ticker = scheduled.getBean(Ticker.class);
            assertThat(ticker.awaitFirstRun()).isTrue();
            assertThat(ticker.holdersSeen()).isEqualTo(1);
        }
        finally {
            scheduled.close();
        }
    }

    private static ListAppender<ILoggingEvent> capture() {
        Logger logger = (Logger) LoggerFactory.getLogger(LockInterceptor.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        logger.setLevel(Level.DEBUG);
        return appender;
    }

    private static void release(ListAppender<ILoggingEvent> appender) {
        ((Logger) LoggerFactory.getLogger(LockInterceptor.class)).detachAppender(appender);
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await(10, TimeUnit.SECONDS);
        }
        catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** Jobs for each attribute. */
    public static class Jobs {

        private final AtomicInteger runs = new AtomicInteger();

        public int runs() {
            return runs.get();
        }

        @ClusterSingleton
        public void nightly(Runnable inside) {
            inside.run();
        }

        @ClusterSingleton(name = "report")
        public String report() {
            runs.incrementAndGet();
            return "done";
        }

        @ClusterSingleton(name = "optional-report")
        public Optional<String> optionalReport() {
            return Optional.of("done");
        }

        @ClusterSingleton(name = "bootstrap", onBusy = OnBusy.WAIT, waitAtMost = "10s")
        public String bootstrap() {
            return "bootstrapped";
        }

        @ClusterSingleton(name = "short-wait", onBusy = OnBusy.WAIT, waitAtMost = "300ms")
        public void shortWait() {
        }

        @ClusterSingleton(name = "strict", onBusy = OnBusy.FAIL)
        public void strict() {
        }

        @ClusterSingleton(name = "kept", lockAtLeastFor = "2s")
        public void kept() {
        }

        @ClusterSingleton(name = "bounded", lockAtMostFor = "40s")
        public void bounded(Runnable inside) {
            inside.run();
        }

        @ClusterSingleton(name = "per-tenant", tenant = "#tenant")
        public void perTenant(String tenant, Runnable inside) {
            inside.run();
        }
    }

    /** A {@code @Scheduled} job that looks at its own singleton while it runs. */
    public static class Ticker {

        private final JdbcLockService locks;

        private final CountDownLatch ran = new CountDownLatch(1);

        private volatile int holdersSeen = -1;

        public Ticker(JdbcLockService locks) {
            this.locks = locks;
        }

        public boolean awaitFirstRun() throws InterruptedException {
            return ran.await(10, TimeUnit.SECONDS);
        }

        public int holdersSeen() {
            return holdersSeen;
        }

        @Scheduled(fixedDelay = 100)
        @ClusterSingleton(name = "tick")
        public void tick() {
            if (ran.getCount() > 0) {
                holdersSeen = locks.holders(LockKind.SINGLETON, null, "tick").size();
                ran.countDown();
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class ScheduledApplication {

        @Bean
        Ticker ticker(JdbcLockService locks) {
            return new Ticker(locks);
        }
    }

    /** A generic interface, whose method the JDK proxy sees with an erased return type. */
    public interface Task<T> {

        T run();
    }

    public static class OptionalTask implements Task<Optional<String>> {

        @Override
        @ClusterSingleton(name = "generic-task")
        public Optional<String> run() {
            return Optional.of("done");
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class InterfaceApplication {

        @Bean
        Task<Optional<String>> task() {
            return new OptionalTask();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Application {

        @Bean
        Jobs jobs() {
            return new Jobs();
        }
    }
}
