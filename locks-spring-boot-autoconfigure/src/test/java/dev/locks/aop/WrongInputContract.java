package dev.locks.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.SubmissionPublisher;

import javax.sql.DataSource;

import jakarta.annotation.PostConstruct;

import kotlin.Unit;
import kotlin.coroutines.Continuation;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.ReactiveTypeDescriptor;
import org.springframework.core.env.Environment;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.Scheduled;

import dev.locks.annotation.ClusterSingleton;
import dev.locks.annotation.ClusterSingleton.OnBusy;
import dev.locks.annotation.PathLocked;
import dev.locks.annotation.Semaphore;
import dev.locks.jdbc.JdbcLockService;

/**
 * Annotations that cannot work fail the application's start, naming the annotation, the method,
 * the attribute and the reason; they never leave a method to run unlocked.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
abstract class WrongInputContract extends AnnotationContract {

    private LockTestNodes nodes;

    @BeforeAll
    void start() {
        nodes = new LockTestNodes(database());
    }

    @AfterAll
    void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }

    @Test
    void aPathExpressionThatIsNotSpelFailsTheStart() {
        assertStartFails(BadSpel.class, "@PathLocked on BadSpel.run(String)", "'#src +'", "is not valid SpEL");
    }

    @Test
    void aTenantExpressionThatIsNotSpelFailsTheStart() {
        assertStartFails(BadTenant.class, "@Semaphore on BadTenant.run(String)", "'#'", "is not valid SpEL");
    }

    @Test
    void anUnterminatedStringLiteralFailsTheStart() {
        assertStartFails(Unterminated.class, "@PathLocked on Unterminated.run()", "unterminated string literal");
    }

    @Test
    void anEmptyExpressionBetweenCommasFailsTheStart() {
        assertStartFails(EmptyPart.class, "@PathLocked on EmptyPart.run(String, String)", "empty expression");
    }

    @Test
    void blankPathsFailTheStart() {
        assertStartFails(BlankPaths.class, "@PathLocked on BlankPaths.run()", "paths is empty");
    }

    @Test
    void aReferenceToAMissingBeanFailsTheStart() {
        assertStartFails(UnknownBean.class, "@PathLocked on UnknownBean.run(String)", "bean 'nope'",
                "no such bean");
    }

    @Test
    void anArgumentNameThatIsNoParameterFailsTheStartNamingTheParameters() {
        assertStartFails(UnknownArgument.class, "@PathLocked on UnknownArgument.move(String, String)",
                "expression '#source' refers to #source, which is no parameter of the method",
                "(its parameters: src, dst; by position #p0, #p1, ...)");
    }

    @Test
    void anUnknownNameOnTheFallbackSideOfAnElvisStillFailsTheStart() {
        assertStartFails(UnknownFallback.class, "expression '#id ?: #fallback' refers to #fallback");
    }

    @Test
    void argumentsByPositionTheRootObjectAssignedAndNullTestedVariablesPassTheStart() {
        assertThat(nodes.node("node-known", KnownReferences.class).getBean(KnownReferences.class)).isNotNull();
    }

    @Test
    void tenParsecsIsNoLease() {
        assertStartFails(Parsecs.class, "@PathLocked on Parsecs.run(String)", "lease = \"10 parsecs\"",
                "is not a duration");
    }

    @Test
    void tenParsecsIsNoLockAtLeastFor() {
        assertStartFails(ParsecsSingleton.class, "@ClusterSingleton on ParsecsSingleton.run()",
                "lockAtLeastFor = \"10 parsecs\"");
    }

    @Test
    void aNegativeWaitFailsTheStart() {
        assertStartFails(NegativeWait.class, "@Semaphore on NegativeWait.run()", "waitAtMost must be zero or positive");
    }

    @Test
    void skipOnAMethodReturningAPrimitiveFailsTheStart() {
        assertStartFails(SkipPrimitive.class, "@ClusterSingleton on SkipPrimitive.count()",
                "onBusy = SKIP cannot be used on a method returning int");
    }

    @Test
    void waitAtMostWithoutOnBusyWaitFailsTheStart() {
        assertStartFails(WaitWithSkip.class, "@ClusterSingleton on WaitWithSkip.run()",
                "waitAtMost applies only to onBusy = WAIT");
    }

    @Test
    void lockAtLeastForLongerThanLockAtMostForFailsTheStart() {
        assertStartFails(AtLeastBeyondAtMost.class, "@ClusterSingleton on AtLeastBeyondAtMost.run()",
                "lockAtLeastFor (PT1M) is longer than the lease (PT10S)");
    }

    @Test
    void aLockAtMostForTheWatchdogCannotKeepFailsTheStart() {
        assertStartFails(ShortSingleton.class, "@ClusterSingleton on ShortSingleton.run()", "lockAtMostFor = 200ms",
                "shorter than the 300ms");
    }

    @Test
    void aLeaseTheWatchdogCannotKeepFailsTheStart() {
        assertStartFails(ShortLease.class, "@PathLocked on ShortLease.run(String)", "lease = 100ms",
                "shorter than the 300ms");
    }

    @Test
    void overloadsThatWouldShareADefaultSingletonNameFailTheStart() {
        assertStartFails(Overloads.class, "Overloads.export", "its default name 'Overloads.export' is also that of",
                "set name on one of them");
    }

    @Test
    void classesOfOneSimpleNameThatWouldShareADefaultSemaphoreNameFailTheStart() {
        assertStartFails(SameSimpleNames.class, "@Semaphore on Jobs.export()", "its default name 'Jobs.export'",
                "WrongInputContract$Reports$Jobs.export()");
    }

    @Test
    void classesOfOneSimpleNameInheritingOneAnnotatedMethodFailTheStart() {
        assertStartFails(SameSimpleNamesInheriting.class, "@ClusterSingleton on Job.run()", "its default name 'Job.run'",
                "WrongInputContract$Reports$Job.run()");
    }

    @Test
    void twoBeansOfOneClassShareTheirDefaultNameAndStart() {
        assertThat(nodes.node("node-twins", Twins.class).getBeansOfType(Overloads.Single.class)).hasSize(2);
    }

    @Test
    void aLeaseThePrimaryLockServiceCannotKeepFailsTheStartBesideASecondService() {
        assertStartFails(TwoLockServices.class, "@PathLocked on ShortLease.run(String)", "lease = 100ms",
                "shorter than the 300ms");
    }

    @Test
    void aSemaphoreWithoutPermitsFailsTheStart() {
        assertStartFails(NoPermits.class, "@Semaphore on NoPermits.run()", "at least 1 permit");
    }

    @Test
    void aClassAnnotationMeetingAScheduledMethodThatIsNotPublicFailsTheStart() {
        assertStartFails(NightlyJobs.class, "@ClusterSingleton on class NightlyJobs covers its public methods only",
                "NightlyJobs.cleanup()", "make it public");
    }

    @Test
    void aClassAnnotationMeetingAMethodScheduledTwiceThatIsNotPublicFailsTheStart() {
        assertStartFails(TwiceNightlyJobs.class, "@ClusterSingleton on class TwiceNightlyJobs covers its public methods only",
                "TwiceNightlyJobs.cleanup()", "make it public");
    }

    @Test
    void aClassAnnotationLeavesAHelperMethodThatIsNotPublicAlone() {
        assertThat(nodes.node("node-helper", JobsWithHelper.class).getBean(JobsWithHelper.class)).isNotNull();
    }

    @Test
    void anAnnotatedPrivateMethodFailsTheStart() {
        assertStartFails(PrivateMethod.class, "@PathLocked on PrivateMethod.hidden()", "never called through the proxy");
    }

    @Test
    void anAnnotatedPostConstructMethodFailsTheStart() {
        assertStartFails(PostConstructMethod.class, "@ClusterSingleton on PostConstructMethod.bootstrap()",
                "init method", "ApplicationRunner");
    }

    @Test
    void anAnnotatedAfterPropertiesSetFailsTheStart() {
        assertStartFails(InitializingMethod.class, "@ClusterSingleton on InitializingMethod.afterPropertiesSet()",
                "init method");
    }

    @Test
    void aClassLevelAnnotationLeavesTheInitMethodOutAndStarts() {
        ClassLevelWithInit.initialised = false;
        assertThat(AopUtils.isAopProxy(nodes.node("node-class-init", ClassLevelWithInit.class).getBean(ClassLevelWithInit.class)))
                .as("its other methods are locked").isTrue();
        assertThat(ClassLevelWithInit.initialised).isTrue();
    }

    @Test
    void aReactiveMethodFailsTheStart() {
        assertStartFails(Reactive.class, "Reactive.stream()", "reactive return types are not supported");
    }

    @Test
    void aMethodReturningACompletableFutureFailsTheStart() {
        assertStartFails(FutureResult.class, "FutureResult.later()", "returning CompletableFuture",
                "after the release");
    }

    @Test
    void aMethodReturningACallableFailsTheStart() {
        assertStartFails(CallableResult.class, "CallableResult.later()", "returning Callable", "after the release");
    }

    @Test
    void anAsyncMethodReturningACallableFailsTheStartToo() {
        assertStartFails(AsyncCallableResult.class, "AsyncCallableResult.later()", "returning Callable",
                "lock inside that work");
    }

    @Test
    void aMethodReturningAFlowPublisherFailsTheStart() {
        assertStartFails(FlowResult.class, "FlowResult.items()", "reactive return types are not supported");
    }

    @Test
    void aMethodReturningAReactiveTypeSpringAdaptsFailsTheStart() {
        LazyValue.registerWithSpring();
        assertStartFails(LazyResult.class, "LazyResult.later()", "reactive return types are not supported",
                "LazyValue is returned");
    }

    @Test
    void aKotlinSuspendFunctionFailsTheStart() {
        assertStartFails(SuspendingWork.class, "SuspendingWork.write(String, Continuation)",
                "suspend functions are not supported");
    }

    @Test
    void anAsyncMethodReturningAFutureStarts() {
        assertThat(nodes.node("node-async", AsyncFutureResult.class).getBean(AsyncFutureResult.class)).isNotNull();
    }

    @Test
    void anAnnotatedFinalMethodFailsTheStart() {
        assertStartFails(FinalMethod.class, "@PathLocked on FinalMethod.run()", "final method", "run unlocked");
    }

    @Test
    void aFinalPublicMethodOfAnAnnotatedClassFailsTheStart() {
        assertStartFails(FinalMethodInAnnotatedClass.class, "@Semaphore on FinalMethodInAnnotatedClass.helper()",
                "final method");
    }

    private void assertStartFails(Class<?> bean, String... messageParts) {
        assertThatThrownBy(() -> nodes.node("node-wrong", bean)).satisfies(ex -> {
            InvalidLockAnnotationException cause = find(ex);
            assertThat(cause).as("InvalidLockAnnotationException in the causes of %s", ex).isNotNull();
            for (String part : messageParts) {
                assertThat(cause.getMessage()).contains(part);
            }
        });
    }

    private static InvalidLockAnnotationException find(Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof InvalidLockAnnotationException invalid) {
                return invalid;
            }
        }
        return null;
    }

    public static class Overloads {
        @ClusterSingleton
        public void export() {
        }

        @ClusterSingleton
        public void export(String what) {
        }

        public static class Single {
            @ClusterSingleton
            public void export() {
            }
        }
    }

    public static class RunsOnce {
        @ClusterSingleton
        public void run() {
        }
    }

    static class Reports {
        public static class Job extends RunsOnce {
        }

        public static class Jobs {
            @Semaphore(max = 2)
            public void export() {
            }
        }
    }

    static class Invoices {
        public static class Job extends RunsOnce {
        }

        public static class Jobs {
            @Semaphore(max = 2)
            public void export() {
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class SameSimpleNames {
        @Bean
        Reports.Jobs reportJobs() {
            return new Reports.Jobs();
        }

        @Bean
        Invoices.Jobs invoiceJobs() {
            return new Invoices.Jobs();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class SameSimpleNamesInheriting {
        @Bean
        Reports.Job reportJob() {
            return new Reports.Job();
        }

        @Bean
        Invoices.Job invoiceJob() {
            return new Invoices.Job();
        }
    }

    /** Two lock services, the annotations' the primary one. */
    @Configuration(proxyBeanMethods = false)
    static class TwoLockServices {
        @Bean(destroyMethod = "close")
        @Primary
        JdbcLockService primaryLocks(DataSource dataSource, Environment environment) {
            return JdbcLockService.builder(dataSource).tablePrefix(environment.getProperty("locks.jdbc.table-prefix"))
                    .createSchema(true).build();
        }

        @Bean(destroyMethod = "close")
        JdbcLockService otherLocks(DataSource dataSource, Environment environment) {
            return JdbcLockService.builder(dataSource).tablePrefix(environment.getProperty("locks.jdbc.table-prefix"))
                    .createSchema(true).build();
        }

        @Bean
        ShortLease shortLease() {
            return new ShortLease();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Twins {
        @Bean
        Overloads.Single first() {
            return new Overloads.Single();
        }

        @Bean
        Overloads.Single second() {
            return new Overloads.Single();
        }
    }

    public static class ShortSingleton {
        @ClusterSingleton(lockAtMostFor = "200ms")
        public void run() {
        }
    }

    public static class ShortLease {
        @PathLocked(paths = "#path", lease = "100ms")
        public void run(String path) {
        }
    }

    public static class BadSpel {
        @PathLocked(paths = "#src +")
        public void run(String src) {
        }
    }

    public static class BadTenant {
        @Semaphore(max = 2, tenant = "#")
        public void run(String tenant) {
        }
    }

    public static class Unterminated {
        @PathLocked(paths = "'/reports")
        public void run() {
        }
    }

    public static class EmptyPart {
        @PathLocked(paths = "#a,,#b")
        public void run(String a, String b) {
        }
    }

    public static class BlankPaths {
        @PathLocked(paths = " ")
        public void run() {
        }
    }

    public static class UnknownBean {
        @PathLocked(paths = "@nope.pathOf(#id)")
        public void run(String id) {
        }
    }

    public static class UnknownArgument {
        @PathLocked(paths = "#source, #dst")
        public void move(String src, String dst) {
        }
    }

    public static class UnknownFallback {
        @PathLocked(paths = "#id ?: #fallback")
        public void run(String id) {
        }
    }

    public static class KnownReferences {
        @PathLocked(paths = "#p0 + #a1, #root.args[0] + '/x', (#base = '/b') + #base, #moved ?: '/all'",
                tenant = "#this.args[1]")
        public void run(String folder, String file) {
        }
    }

    public static class Parsecs {
        @PathLocked(paths = "#path", lease = "10 parsecs")
        public void run(String path) {
        }
    }

    public static class ParsecsSingleton {
        @ClusterSingleton(lockAtLeastFor = "10 parsecs")
        public void run() {
        }
    }

    public static class NegativeWait {
        @Semaphore(max = 1, waitAtMost = "-5s")
        public void run() {
        }
    }

    public static class SkipPrimitive {
        @ClusterSingleton(onBusy = OnBusy.SKIP)
        public int count() {
            return 1;
        }
    }

    public static class WaitWithSkip {
        @ClusterSingleton(waitAtMost = "5s")
        public void run() {
        }
    }

    public static class AtLeastBeyondAtMost {
        @ClusterSingleton(lockAtMostFor = "10s", lockAtLeastFor = "1m")
        public void run() {
        }
    }

    public static class NoPermits {
        @Semaphore(max = 0)
        public void run() {
        }
    }

    @ClusterSingleton
    public static class NightlyJobs {

        @Scheduled(cron = "0 0 2 * * *")
        void cleanup() {
        }
    }

    @ClusterSingleton
    public static class TwiceNightlyJobs {

        @Scheduled(cron = "0 0 2 * * *")
        @Scheduled(cron = "0 0 14 * * *")
        void cleanup() {
        }
    }

    /** A lazy result type of a library Spring adapts to Reactive Streams, as it does RxJava's or Mutiny's. */
    public static final class LazyValue {

        /** Once per JVM: the registry is shared, and every contract of this class runs the test. */
        static synchronized void registerWithSpring() {
            if (ReactiveAdapterRegistry.getSharedInstance().getAdapter(LazyValue.class) != null) {
                return;
            }
            ReactiveAdapterRegistry.getSharedInstance().registerReactiveType(
                    ReactiveTypeDescriptor.singleOptionalValue(LazyValue.class, LazyValue::new),
                    source -> subscriber -> { },
                    publisher -> new LazyValue());
        }
    }

    public static class LazyResult {
        @PathLocked(paths = "'/lazy'")
        public LazyValue later() {
            return new LazyValue();
        }
    }

    /** What the Kotlin compiler makes of {@code suspend fun write(path: String)}: a Kotlin class, a Continuation last. */
    @kotlin.Metadata
    public static class SuspendingWork {
        @PathLocked(paths = "#path")
        public Object write(String path, Continuation<? super Unit> continuation) {
            return Unit.INSTANCE;
        }
    }

    @ClusterSingleton
    public static class JobsWithHelper {

        public void run() {
            helper();
        }

        void helper() {
        }
    }

    public static class PrivateMethod {

        public void visible() {
            hidden();
        }

        @PathLocked(paths = "'/hidden'")
        private void hidden() {
        }
    }

    public static class PostConstructMethod {

        @PostConstruct
        @ClusterSingleton
        public void bootstrap() {
        }
    }

    public static class InitializingMethod implements InitializingBean {

        @Override
        @ClusterSingleton
        public void afterPropertiesSet() {
        }
    }

    @Semaphore(max = 2)
    public static class ClassLevelWithInit {

        // static: the bean the context hands out is a class proxy with fields of its own
        static volatile boolean initialised;

        @PostConstruct
        public void init() {
            initialised = true;
        }

        public void export() {
        }
    }

    public static class FutureResult {
        @PathLocked(paths = "'/later'")
        public CompletableFuture<String> later() {
            return CompletableFuture.supplyAsync(() -> "done");
        }
    }

    public static class CallableResult {
        @PathLocked(paths = "'/callable'")
        public Callable<String> later() {
            return () -> "done";
        }
    }

    public static class AsyncCallableResult {
        @Async
        @PathLocked(paths = "'/async-callable'")
        public Callable<String> later() {
            return () -> "done";
        }
    }

    public static class FlowResult {
        @PathLocked(paths = "'/items'")
        public Flow.Publisher<String> items() {
            return new SubmissionPublisher<>();
        }
    }

    public static class AsyncFutureResult {
        @Async
        @PathLocked(paths = "'/async'")
        public CompletableFuture<String> later() {
            return CompletableFuture.completedFuture("done");
        }
    }

    public static class FinalMethod {
        @PathLocked(paths = "'/final'")
        public final void run() {
        }
    }

    @Semaphore(max = 2)
    public static class FinalMethodInAnnotatedClass {
        public void run() {
        }

        public final void helper() {
        }
    }

    public static class Reactive {
        @PathLocked(paths = "'/stream'")
        public Publisher<String> stream() {
            return Subscriber::onComplete;
        }
    }
}
