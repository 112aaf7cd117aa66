package dev.locks.aop;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.quartz.Job;
import org.quartz.JobExecutionContext;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.ConfigurableApplicationContext;

import dev.locks.LockKind;
import dev.locks.annotation.ClusterSingleton;
import dev.locks.annotation.PathLocked;
import dev.locks.annotation.Semaphore;
import dev.locks.testing.TestDatabase;

/**
 * Lock annotations on a class that is a Quartz job: its {@code @ClusterSingleton} belongs to the
 * Quartz trigger listener, every other annotation to the proxy, as on any bean.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QuartzJobAnnotationsTest {

    /** The nodes of the running test, for a job to look at the store while it runs. */
    private static volatile LockTestNodes current;

    private LockTestNodes nodes;

    private ConfigurableApplicationContext node;

    @BeforeAll
    void start() {
        nodes = new LockTestNodes(TestDatabase.H2);
        current = nodes;
        node = nodes.node("node-jobs", ExportJob.class, NightlyJob.class);
    }

    @AfterAll
    void stop() {
        nodes.close();
    }

    @Test
    void aSemaphoreOnAJobClassHoldsAPermitWhileTheJobRuns() throws Exception {
        ExportJob job = node.getBean(ExportJob.class);

        job.execute(null);

        assertThat(ExportJob.permitsHeldDuringTheRun.get()).isEqualTo(1);
    }

    @Test
    void aPathLockedMethodOfAJobClassRunsLocked() {
        ExportJob job = node.getBean(ExportJob.class);

        assertThat(job.service(() -> nodes.isLocked("/job-service"))).isTrue();
    }

    @Test
    void aJobClassWithOnlyAClusterSingletonIsLeftToTheQuartzListener() {
        assertThat(AopUtils.isAopProxy(node.getBean(NightlyJob.class))).isFalse();
    }

    @Semaphore(name = "exports", max = 1)
    public static class ExportJob implements Job {

        /** Static: the bean is a class proxy, whose own fields stay unset. */
        static final AtomicInteger permitsHeldDuringTheRun = new AtomicInteger(-1);

        @Override
        public void execute(JobExecutionContext context) {
            permitsHeldDuringTheRun.set(QuartzJobAnnotationsTest.current.holders(LockKind.SEMAPHORE, null, "exports"));
        }

        @PathLocked(paths = "'/job-service'")
        public boolean service(java.util.function.BooleanSupplier inside) {
            return inside.getAsBoolean();
        }
    }

    @ClusterSingleton(name = "nightly")
    public static class NightlyJob implements Job {

        @Override
        public void execute(JobExecutionContext context) {
        }
    }
}
