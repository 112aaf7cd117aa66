package dev.locks.aop;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.annotation.Scheduled;

import dev.locks.annotation.ClusterSingleton;

/**
 * Every node's scheduler fires a {@code @Scheduled} singleton: without {@code lockAtLeastFor} a short
 * run frees the lock before a node whose clock is a little late fires the same tick, which then runs
 * again. The start-up says so.
 */
class ScheduledSingletonWarningTest {

    private final Logger logger = (Logger) LoggerFactory.getLogger(AnnotationLockOperationSource.class);

    private final ListAppender<ILoggingEvent> warnings = new ListAppender<>();

    @BeforeEach
    void capture() {
        warnings.start();
        logger.addAppender(warnings);
        logger.setLevel(Level.WARN);
    }

    @AfterEach
    void release() {
        logger.detachAppender(warnings);
    }

    @Test
    void aScheduledSingletonWithoutLockAtLeastForIsWarnedAbout() throws Exception {
        parse(Unbounded.class);

        assertThat(warnings.list).singleElement().extracting(ILoggingEvent::getFormattedMessage).asString()
                .contains("Unbounded.run()").contains("without lockAtLeastFor");
    }

    @Test
    void aScheduledSingletonWithLockAtLeastForIsNot() throws Exception {
        parse(Bounded.class);

        assertThat(warnings.list).isEmpty();
    }

    @Test
    void aSingletonThatIsNotScheduledIsNot() throws Exception {
        parse(Unscheduled.class);

        assertThat(warnings.list).isEmpty();
    }

    private static void parse(Class<?> jobs) throws NoSuchMethodException {
        Method run = jobs.getMethod("run");
        assertThat(new AnnotationLockOperationSource(null).getLockOperations(run, jobs)).hasSize(1);
    }

    public static class Unbounded {

        @Scheduled(fixedRate = 60_000)
        @ClusterSingleton
        public void run() {
        }
    }

    public static class Bounded {

        @Scheduled(fixedRate = 60_000)
        @ClusterSingleton(lockAtLeastFor = "50s")
        public void run() {
        }
    }

    public static class Unscheduled {

        @ClusterSingleton(onBusy = ClusterSingleton.OnBusy.WAIT)
        public void run() {
        }
    }
}
