package dev.locks.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.locks.AcquireOutcome;
import dev.locks.LockListener;
import dev.locks.LockMode;
import dev.locks.LockRequest;
import dev.locks.annotation.PathLocked;

/**
 * Nested annotated calls on one thread share the thread's lock owner: what the outer call covers
 * is re-entered without a new grant, and a nested call that needs more takes and gives back only
 * that.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
abstract class ReentryContract extends AnnotationContract {

    private LockTestNodes nodes;

    private Outer outer;

    private CountingListener grants;

    @BeforeAll
    void start() {
        nodes = new LockTestNodes(database());
        ConfigurableApplicationContext node = nodes.node("node-a", Application.class);
        outer = node.getBean(Outer.class);
        grants = node.getBean(CountingListener.class);
    }

    @AfterAll
    void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }

    @BeforeEach
    void resetCount() {
        grants.acquired.set(0);
    }

    @Test
    void aNestedCallOnACoveredPathMakesNoNewGrant() {
        outer.write("/re/a", inner -> {
            inner.write("/re/a/b", () -> assertThat(nodes.isLocked("/re/a/b")).isTrue());
            inner.read("/re/a", () -> { });
            assertThat(nodes.isLocked("/re/a")).isTrue();
        });
        assertThat(grants.acquired).hasValue(1);
        assertThat(nodes.isLocked("/re/a")).isFalse();
    }

    @Test
    void aNestedCallOnANewPathTakesItAndGivesBackOnlyIt() {
        outer.write("/re2/a", inner -> {
            inner.write("/re2/b", () -> {
                assertThat(nodes.isLocked("/re2/b")).isTrue();
                assertThat(nodes.isLocked("/re2/a")).isTrue();
            });
            assertThat(nodes.isLocked("/re2/b")).isFalse();
            assertThat(nodes.isLocked("/re2/a")).isTrue();
        });
        assertThat(grants.acquired).hasValue(2);
    }

    @Test
    void aNestedWriteInsideAReadTakesTheExclusiveLockAndGivesBackOnlyIt() {
        outer.read("/re3/a", inner -> {
            assertThat(nodes.isFree(LockRequest.paths("/re3/a").shared().build())).isTrue();
            inner.write("/re3/a", () ->
                    assertThat(nodes.isFree(LockRequest.paths("/re3/a").shared().build())).isFalse());
            assertThat(nodes.isFree(LockRequest.paths("/re3/a").shared().build())).isTrue();
            assertThat(nodes.isFree(LockRequest.paths("/re3/a").exclusive().build())).isFalse();
        });
        assertThat(grants.acquired).hasValue(2);
    }

    @Test
    void aMethodFindsItsLockAndItsFencingToken() {
        outer.write("/token/a", inner -> {
            assertThat(AnnotationLocks.current()).singleElement()
                    .satisfies(handle -> assertThat(handle.request().keys()).containsExactly("/token/a"));
            assertThat(AnnotationLocks.fencingToken())
                    .isEqualTo(nodes.probe().holders(null, "/token/a").get(0).lockId());
        });
    }

    @Test
    void aNestedMethodFindsItsOwnLockNotItsCallers() {
        outer.write("/token/outer", inner -> inner.write("/token/inner", () -> assertThat(AnnotationLocks.current())
                .singleElement().satisfies(handle -> assertThat(handle.request().keys()).containsExactly("/token/inner"))));
    }

    @Test
    void outsideAnnotatedMethodsThereIsNoFencingToken() {
        assertThat(AnnotationLocks.current()).isEmpty();
        assertThatThrownBy(AnnotationLocks::fencingToken).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("No method holding locks");
    }

    @Test
    void theReenteredCallSharesTheOuterLease() {
        outer.write("/re4", inner -> inner.write("/re4/x", () -> {
            var holders = nodes.probe().holders(null, "/re4/x");
            assertThat(holders).hasSize(1);
            assertThat(holders.get(0).path()).isEqualTo("/re4");
            assertThat(Duration.between(holders.get(0).since(), holders.get(0).expiresAt()))
                    .isGreaterThan(Duration.ZERO);
        }));
    }

    /** Counts grants that reached the store. */
    public static class CountingListener implements LockListener {

        final AtomicInteger acquired = new AtomicInteger();

        @Override
        public void acquireFinished(LockRequest request, AcquireOutcome outcome, Duration elapsed, boolean waited) {
            if (outcome == AcquireOutcome.ACQUIRED) {
                acquired.incrementAndGet();
            }
        }
    }

    /** The nested bean, called through its proxy. */
    public static class Inner {

        @PathLocked(paths = "#path")
        public void write(String path, Runnable inside) {
            inside.run();
        }

        @PathLocked(paths = "#path", mode = LockMode.SHARED)
        public void read(String path, Runnable inside) {
            inside.run();
        }
    }

    /** Work done inside the outer call, given the inner bean. */
    @FunctionalInterface
    public interface InnerWork {
        void run(Inner inner);
    }

    /** The outer bean. */
    public static class Outer {

        private final Inner inner;

        public Outer(Inner inner) {
            this.inner = inner;
        }

        @PathLocked(paths = "#path")
        public void write(String path, InnerWork inside) {
            inside.run(inner);
        }

        @PathLocked(paths = "#path", mode = LockMode.SHARED)
        public void read(String path, InnerWork inside) {
            inside.run(inner);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Application {

        @Bean
        Inner inner() {
            return new Inner();
        }

        @Bean
        Outer outer(Inner inner) {
            return new Outer(inner);
        }

        @Bean
        CountingListener countingListener() {
            return new CountingListener();
        }
    }
}
