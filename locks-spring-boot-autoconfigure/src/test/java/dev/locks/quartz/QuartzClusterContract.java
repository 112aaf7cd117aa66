package dev.locks.quartz;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.quartz.Job;
import org.quartz.JobBuilder;
import org.quartz.JobDetail;
import org.quartz.JobExecutionContext;
import org.quartz.SimpleScheduleBuilder;
import org.quartz.Trigger;
import org.quartz.TriggerBuilder;
import org.quartz.listeners.TriggerListenerSupport;

import dev.locks.testing.TestDatabase;

/**
 * A cluster of Quartz nodes, each with its own in-memory job store, thread pool and lock service on its
 * own connection pool, all scheduling the same jobs: each fire of a guarded job runs exactly once.
 */
abstract class QuartzClusterContract {

    private static final long SECOND = 1000;

    private final String prefix = TestDatabase.uniquePrefix();

    private final List<QuartzNode> nodes = new ArrayList<>();

    private FireLog log;

    protected abstract TestDatabase database();

    @BeforeEach
    void newLog() {
        log = FireLog.create();
        log.work(context -> {
            if (context.getJobDetail().getJobClass() == TestJobs.GuardedJob.class) {
                // long enough for the other nodes to vote while the run holds its fire
                Thread.sleep(150);
            }
        });
    }

    @AfterEach
    void closeNodes() {
        QuartzNode.closeAll(nodes);
        if (!nodes.isEmpty()) {
            try (var pool = database().newPool(1)) {
                TestDatabase.dropTables(pool, prefix);
            }
        }
        log.forget();
    }

    @Test
    void everyFireTimeOfAGuardedJobRunsExactlyOnceWhileANodeStopsMidRun() throws Exception {
        int fires = 22;
        Instant start = Instant.now().truncatedTo(ChronoUnit.SECONDS).plusSeconds(2);
        Instant stopB = start.plusMillis(10 * SECOND + 500);
        for (String id : List.of("node-a", "node-b", "node-c")) {
            QuartzNode node = node(id);
            node.schedule(job(TestJobs.GuardedJob.class, "ldap-import", id), everySecond("guarded", start, fires));
            node.schedule(job(TestJobs.PlainJob.class, "plain", id), everySecond("plain", start, fires));
            node.start();
        }
        sleepUntil(stopB);
        nodes.get(1).stop();
        sleepUntil(start.plusMillis((fires - 1) * SECOND + 1500));

        TreeMap<Long, List<String>> guarded = log.nodesByFireTime("ldap-import");
        assertThat(guarded.keySet()).as("every fire time ran, none skipped").isEqualTo(fireTimes(start, fires));
        assertThat(guarded).allSatisfy((time, ranOn) -> assertThat(ranOn).as("nodes that ran %s", Instant.ofEpochMilli(time))
                .hasSize(1));
        assertThat(guarded.values().stream().flatMap(List::stream).distinct()).as("the fires spread over nodes")
                .hasSizeGreaterThan(1);
        assertThat(guarded.tailMap(stopB.toEpochMilli()).values()).allSatisfy(ranOn -> assertThat(ranOn)
                .doesNotContain("node-b"));
        // the unguarded job beside it shows that every node fired every time while it was up
        TreeMap<Long, List<String>> plain = log.nodesByFireTime("plain");
        assertThat(plain.keySet()).isEqualTo(fireTimes(start, fires));
        assertThat(plain.headMap(stopB.toEpochMilli())).allSatisfy((time, ranOn) -> assertThat(ranOn)
                .containsExactlyInAnyOrder("node-a", "node-b", "node-c"));
        assertThat(plain.tailMap(stopB.toEpochMilli())).allSatisfy((time, ranOn) -> assertThat(ranOn)
                .containsExactlyInAnyOrder("node-a", "node-c"));
    }

    @Test
    void aNodeThatFiresTheSameTimesLateIsVetoed() throws Exception {
        int fires = 3;
        Instant start = Instant.now().truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
        QuartzNode onTime = node("node-a");
        onTime.schedule(job(TestJobs.GuardedJob.class, "ldap-import", onTime.id), everySecond("guarded", start, fires))
                .start();
        sleepUntil(start.plusMillis((fires - 1) * SECOND + 500));
        // a node whose clock is behind, or that starts late, fires the same scheduled times now
        QuartzNode late = node("node-late");
        AtomicInteger lateFires = new AtomicInteger();
        late.scheduler.getListenerManager().addTriggerListener(new TriggerListenerSupport() {
            @Override
            public String getName() {
                return "count-fires";
            }

            @Override
            public void triggerFired(Trigger trigger, JobExecutionContext context) {
                lateFires.incrementAndGet();
            }
        });
        late.schedule(job(TestJobs.GuardedJob.class, "ldap-import", late.id), everySecond("guarded", start, fires))
                .start();
        waitFor(() -> lateFires.get() == fires, Duration.ofSeconds(5));
        Thread.sleep(300);

        assertThat(log.nodesByFireTime("ldap-import")).isEqualTo(expected(start, fires, "node-a"));
    }

    @Test
    void aJobWithTwoTriggersRunsEachTriggersFireOnceAcrossTheCluster() throws Exception {
        int fires = 2;
        Instant start = Instant.now().truncatedTo(ChronoUnit.SECONDS).plusSeconds(2);
        for (String id : List.of("node-a", "node-b", "node-c")) {
            QuartzNode node = node(id);
            // the same fire times, each trigger with its own job data
            node.scheduler.scheduleJob(job(TestJobs.GuardedJob.class, "report", id), Set.of(
                    everySecond("hourly", start, fires).getTriggerBuilder().usingJobData("customer", "acme").build(),
                    everySecond("daily", start, fires).getTriggerBuilder().usingJobData("customer", "globex").build()),
                    false);
            node.start();
        }
        sleepUntil(start.plusMillis((fires - 1) * SECOND + 1000));

        assertThat(log.nodesByTriggerAndFireTime("report")).containsOnlyKeys("daily", "hourly")
                .allSatisfy((trigger, byTime) -> assertThat(byTime).as("fires of %s", trigger)
                        .containsOnlyKeys(fireTimes(start, fires))
                        .allSatisfy((time, ranOn) -> assertThat(ranOn).hasSize(1)));
    }

    private QuartzNode node(String id) {
        QuartzNode node = QuartzNode.create(database(), prefix, id);
        nodes.add(node);
        return node;
    }

    private JobDetail job(Class<? extends Job> type, String name, String node) {
        return JobBuilder.newJob(type).withIdentity(name, "cluster").usingJobData(log.data(node)).build();
    }

    private static Trigger everySecond(String name, Instant start, int fires) {
        return TriggerBuilder.newTrigger().withIdentity(name, "cluster").startAt(Date.from(start))
                .withSchedule(SimpleScheduleBuilder.simpleSchedule().withIntervalInMilliseconds(SECOND)
                        .withRepeatCount(fires - 1))
                .build();
    }

    private static Set<Long> fireTimes(Instant start, int fires) {
        return expected(start, fires, "any").keySet();
    }

    private static TreeMap<Long, List<String>> expected(Instant start, int fires, String node) {
        TreeMap<Long, List<String>> times = new TreeMap<>();
        for (int i = 0; i < fires; i++) {
            times.put(start.toEpochMilli() + i * SECOND, List.of(node));
        }
        return times;
    }

    static void sleepUntil(Instant when) throws InterruptedException {
        long millis = Duration.between(Instant.now(), when).toMillis();
        if (millis > 0) {
            Thread.sleep(millis);
        }
    }

    static void waitFor(java.util.function.BooleanSupplier condition, Duration atMost) throws InterruptedException {
        waitFor(condition, atMost, () -> "");
    }

    /** As {@link #waitFor(java.util.function.BooleanSupplier, Duration)}, saying what was seen when it gives up. */
    static void waitFor(java.util.function.BooleanSupplier condition, Duration atMost,
            java.util.function.Supplier<String> seen) throws InterruptedException {
        long deadline = System.nanoTime() + atMost.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Condition not met within " + atMost + "; " + seen.get());
            }
            Thread.sleep(20);
        }
    }
}
