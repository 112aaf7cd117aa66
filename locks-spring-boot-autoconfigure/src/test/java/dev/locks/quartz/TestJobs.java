package dev.locks.quartz;

import org.quartz.DisallowConcurrentExecution;
import org.quartz.Job;
import org.quartz.JobExecutionContext;
import org.quartz.JobExecutionException;

import dev.locks.annotation.ClusterSingleton;
import dev.locks.annotation.Semaphore;

/** The Quartz jobs of the tests: each records its runs in its {@link FireLog} and does the log's work. */
final class TestJobs {

    private TestJobs() {
    }

    /** Records the run, then does the test's work. */
    abstract static class RecordingJob implements Job {

        @Override
        public void execute(JobExecutionContext context) throws JobExecutionException {
            FireLog log = FireLog.of(context);
            FireLog.Run run = log.started(context);
            try {
                log.work().run(context);
            }
            catch (JobExecutionException ex) {
                throw ex;
            }
            catch (Exception ex) {
                throw new JobExecutionException(ex);
            }
            finally {
                run.endedNanos = System.nanoTime();
            }
        }
    }

    /** Guarded by its annotation. */
    @ClusterSingleton
    public static class GuardedJob extends RecordingJob {
    }

    /** Neither annotated nor (unless a test says so) configured. */
    public static class PlainJob extends RecordingJob {
    }

    /** Guarded under a name of its own rather than its job key. */
    @ClusterSingleton(name = "nightly-import")
    public static class NamedJob extends RecordingJob {
    }

    /** Guarded under a name of its own, never two runs at once; one class behind several job details. */
    @ClusterSingleton(name = "import")
    @DisallowConcurrentExecution
    public static class NamedOneAtATimeJob extends RecordingJob {
    }

    /** Guarded, and never two runs at once across the cluster, with a lease shorter than a run. */
    @ClusterSingleton(lockAtMostFor = "1s")
    @DisallowConcurrentExecution
    public static class OneAtATimeJob extends RecordingJob {
    }

    /** Guarded, with a fire marker kept only briefly. */
    @ClusterSingleton(lockAtLeastFor = "1500ms")
    public static class ShortRetentionJob extends RecordingJob {
    }

    /** Guarded in the tenant its job data names. */
    @ClusterSingleton(tenant = "#jobData['tenant']")
    public static class TenantJob extends RecordingJob {
    }

    /** Guarded with an annotation that cannot be understood. */
    @ClusterSingleton(lockAtMostFor = "soon")
    public static class BadLeaseJob extends RecordingJob {
    }

    /** Guarded, never two runs at once, with a lease too short for the watchdog to keep while it runs. */
    @ClusterSingleton(lockAtMostFor = "200ms")
    @DisallowConcurrentExecution
    public static class TooShortLeaseJob extends RecordingJob {
    }

    /** A semaphore the lock annotations' proxy would never apply to a Quartz job. */
    @Semaphore(name = "exports", max = 2)
    public static class SemaphoreJob extends RecordingJob {
    }

    /** A singleton on a method, where the trigger listener would never read it. */
    public static class MethodSingletonJob implements Job {
        @Override
        @ClusterSingleton
        public void execute(JobExecutionContext context) {
        }
    }
}
