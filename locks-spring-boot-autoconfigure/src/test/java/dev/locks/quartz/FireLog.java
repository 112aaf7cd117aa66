package dev.locks.quartz;

import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;

import org.quartz.JobDataMap;
import org.quartz.JobExecutionContext;

/**
 * What the test jobs of one test did, across all its nodes: each run with its job, scheduled fire
 * time, node and timing. Jobs find their log through the job data ({@code log}, {@code node}).
 */
final class FireLog {

    private static final Map<String, FireLog> LOGS = new ConcurrentHashMap<>();

    private final String id = UUID.randomUUID().toString();

    private final Queue<Run> runs = new ConcurrentLinkedQueue<>();

    private volatile JobWork work = context -> {
    };

    private FireLog() {
    }

    static FireLog create() {
        FireLog log = new FireLog();
        LOGS.put(log.id, log);
        return log;
    }

    static FireLog of(JobExecutionContext context) {
        return LOGS.get(context.getMergedJobDataMap().getString("log"));
    }

    /** @param work what every test job of this log does while it runs */
    void work(JobWork work) {
        this.work = work;
    }

    JobWork work() {
        return work;
    }

    /** @return the job data that ties a job of {@code node} to this log */
    JobDataMap data(String node) {
        JobDataMap data = new JobDataMap();
        data.put("log", id);
        data.put("node", node);
        return data;
    }

    Run started(JobExecutionContext context) {
        Run run = new Run(context.getJobDetail().getKey().getName(), context.getTrigger().getKey().getName(),
                context.getScheduledFireTime().getTime(), context.getMergedJobDataMap().getString("node"),
                System.nanoTime());
        runs.add(run);
        return run;
    }

    List<Run> runs(String job) {
        return runs.stream().filter(r -> r.job.equals(job)).toList();
    }

    /** @return for each scheduled fire time of {@code job}, the nodes that ran it */
    TreeMap<Long, List<String>> nodesByFireTime(String job) {
        return runs(job).stream().collect(Collectors.groupingBy(r -> r.fireTime, TreeMap::new,
                Collectors.mapping(r -> r.node, Collectors.toList())));
    }

    /** @return for each trigger of {@code job} and its scheduled fire times, the nodes that ran them */
    TreeMap<String, TreeMap<Long, List<String>>> nodesByTriggerAndFireTime(String job) {
        return runs(job).stream().collect(Collectors.groupingBy(r -> r.trigger, TreeMap::new,
                Collectors.groupingBy(r -> r.fireTime, TreeMap::new, Collectors.mapping(r -> r.node, Collectors.toList()))));
    }

    void forget() {
        LOGS.remove(id);
    }

    /** One run of a job on one node. */
    static final class Run {

        final String job;

        final String trigger;

        final long fireTime;

        final String node;

        final long startedNanos;

        volatile long endedNanos = -1;

        Run(String job, String trigger, long fireTime, String node, long startedNanos) {
            this.job = job;
            this.trigger = trigger;
            this.fireTime = fireTime;
            this.node = node;
            this.startedNanos = startedNanos;
        }

        @Override
        public String toString() {
            return job + "/" + trigger + "@" + fireTime + " on " + node + (endedNanos < 0 ? " (still running)" : "");
        }
    }

    /** What a test job does while it runs. */
    @FunctionalInterface
    interface JobWork {
        void run(JobExecutionContext context) throws Exception;
    }
}
