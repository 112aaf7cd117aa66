package dev.locks.quartz;

import static dev.locks.quartz.QuartzClusterContract.sleepUntil;
import static dev.locks.quartz.QuartzClusterContract.waitFor;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.Mockito.doReturn;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.quartz.CalendarIntervalScheduleBuilder;
import org.quartz.CronScheduleBuilder;
import org.quartz.DailyTimeIntervalScheduleBuilder;
import org.quartz.Job;
import org.quartz.JobBuilder;
import org.quartz.JobDetail;
import org.quartz.JobExecutionContext;
import org.quartz.JobExecutionException;
import org.quartz.JobKey;
import org.quartz.ListenerManager;
import org.quartz.Scheduler;
import org.quartz.SchedulerException;
import org.quartz.SchedulerMetaData;
import org.quartz.ScheduleBuilder;
import org.quartz.SimpleScheduleBuilder;
import org.quartz.Trigger;
import org.quartz.Trigger.CompletedExecutionInstruction;
import org.quartz.Trigger.TriggerState;
import org.quartz.TriggerBuilder;
import org.quartz.TriggerKey;
import org.quartz.TriggerListener;
import org.quartz.core.ListenerManagerImpl;
import org.quartz.core.QuartzScheduler;
import org.quartz.impl.jdbcjobstore.JobStoreTX;
import org.quartz.impl.matchers.GroupMatcher;
import org.quartz.listeners.JobListenerSupport;
import org.quartz.listeners.TriggerListenerSupport;
import org.quartz.simpl.SimpleThreadPool;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import dev.locks.CheckedCallable;
import dev.locks.HolderQuery;
import dev.locks.LockHandle;
import dev.locks.LockHolder;
import dev.locks.LockKind;
import dev.locks.LockRequest;
import dev.locks.LockService;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;

/** What the listener guards, which locks it takes, and how it behaves when things go wrong (on H2). */
class ClusterSingletonTriggerListenerTest {

    private final String prefix = TestDatabase.uniquePrefix();

    private final List<QuartzNode> nodes = new ArrayList<>();

    private FireLog log;

    @BeforeEach
    void newLog() {
        log = FireLog.create();
    }

    @AfterEach
    void closeNodes() {
        QuartzNode.closeAll(nodes);
        try (var pool = TestDatabase.H2.newPool(1)) {
            TestDatabase.dropTables(pool, prefix);
        }
        log.forget();
    }

    @Test
    void aJobNeitherAnnotatedNorConfiguredIsNotGuarded() throws Exception {
        Instant start = nextSecond();
        for (String id : List.of("node-a", "node-b", "node-c")) {
            node(id).schedule(job(TestJobs.PlainJob.class, "plain", id), every(500, "plain", start, 2)).start();
        }
        sleepUntil(start.plusMillis(1000));

        assertThat(log.nodesByFireTime("plain")).containsOnlyKeys(start.toEpochMilli(), start.toEpochMilli() + 500)
                .allSatisfy((time, ranOn) -> assertThat(ranOn).containsExactlyInAnyOrder("node-a", "node-b", "node-c"));
        assertThat(nodes.get(0).locks.list(new HolderQuery(LockKind.SINGLETON, null, null, null, 10))).isEmpty();
    }

    @Test
    void aConfiguredJobKeyIsGuardedWithoutTheAnnotation() throws Exception {
        Instant start = nextSecond();
        for (String id : List.of("node-a", "node-b", "node-c")) {
            node(id, Set.of("cluster.plain"), null).schedule(job(TestJobs.PlainJob.class, "plain", id),
                    every(500, "plain", start, 2)).start();
        }
        sleepUntil(start.plusMillis(1000));

        assertThat(log.nodesByFireTime("plain")).containsOnlyKeys(start.toEpochMilli(), start.toEpochMilli() + 500)
                .allSatisfy((time, ranOn) -> assertThat(ranOn).hasSize(1));
    }

    @Test
    void aConfiguredKeyNamesAJobByGroupAndNameOrByNameAloneInTheDefaultGroup() {
        JdbcLockService locks = node("node-a").locks;
        ClusterSingletonTriggerListener listener = new ClusterSingletonTriggerListener(locks,
                Set.of("reports.nightly", "cleanup"), Duration.ofMinutes(10));

        assertThat(listener.isGuarded(plainJob("nightly", "reports"))).isTrue();
        assertThat(listener.isGuarded(plainJob("cleanup", "DEFAULT"))).isTrue();
        assertThat(listener.isGuarded(plainJob("cleanup", "reports"))).isFalse();
        assertThat(listener.isGuarded(plainJob("nightly", "DEFAULT"))).isFalse();
    }

    @Test
    void theJobRunsHoldingItsFireMarkerWhichOutlivesTheRunForItsRetentionThenLapses() throws Exception {
        Instant start = nextSecond();
        QuartzNode node = node("node-a");
        String marker = marker("short", "short", start);
        AtomicReference<List<LockHolder>> whileRunning = new AtomicReference<>();
        log.work(context -> whileRunning.set(node.locks.holders(LockKind.SINGLETON, null, marker)));
        node.schedule(job(TestJobs.ShortRetentionJob.class, "short", node.id), every(500, "short", start, 1)).start();
        waitFor(() -> log.runs("short").size() == 1 && log.runs("short").get(0).endedNanos > 0, Duration.ofSeconds(3));

        assertThat(whileRunning.get()).singleElement().satisfies(h -> assertThat(h.node()).isEqualTo("node-a"));
        assertThat(node.locks.holders(LockKind.SINGLETON, null, marker)).as("kept after the run").hasSize(1);
        sleepUntil(start.plusMillis(1500 + 300));
        assertThat(node.locks.holders(LockKind.SINGLETON, null, marker)).as("lapsed after 1500ms").isEmpty();
    }

    @Test
    void theAnnotationsNameLeadsTheLockNamesBeforeTheJobKey() throws Exception {
        Instant start = nextSecond();
        QuartzNode node = node("node-a");
        AtomicReference<List<LockHolder>> whileRunning = new AtomicReference<>();
        log.work(context -> whileRunning.set(node.locks.holders(LockKind.SINGLETON, null,
                "job:nightly-import:cluster.named@cluster.named@" + context.getScheduledFireTime().getTime())));
        node.schedule(job(TestJobs.NamedJob.class, "named", node.id), every(500, "named", start, 1)).start();
        waitFor(() -> whileRunning.get() != null, Duration.ofSeconds(3));

        assertThat(whileRunning.get()).hasSize(1);
    }

    @Test
    void twoJobDetailsOfOneNamedClassEachRunTheirFiresOnceAcrossTheCluster() throws Exception {
        Instant start = nextSecond();
        for (String id : List.of("node-a", "node-b", "node-c")) {
            QuartzNode node = node(id);
            for (String customer : List.of("import-acme", "import-globex")) {
                node.schedule(job(TestJobs.NamedOneAtATimeJob.class, customer, id), every(500, customer, start, 2));
            }
            node.start();
        }
        sleepUntil(start.plusMillis(1300));

        for (String customer : List.of("import-acme", "import-globex")) {
            assertThat(log.nodesByFireTime(customer)).as("fires of %s", customer)
                    .containsOnlyKeys(start.toEpochMilli(), start.toEpochMilli() + 500)
                    .allSatisfy((time, ranOn) -> assertThat(ranOn).hasSize(1));
        }
    }

    @Test
    void aTriggerBuiltWithoutANameStillRunsEachFireOnOneNode() throws Exception {
        Instant start = nextSecond();
        for (String id : List.of("node-a", "node-b", "node-c")) {
            // no withIdentity: Quartz gives the trigger a random key, another on each node
            Trigger unnamed = TriggerBuilder.newTrigger().forJob("guarded", "cluster").startAt(Date.from(start))
                    .withSchedule(SimpleScheduleBuilder.simpleSchedule().withIntervalInMilliseconds(500).withRepeatCount(1))
                    .build();
            node(id).schedule(job(TestJobs.GuardedJob.class, "guarded", id), unnamed).start();
        }
        waitFor(() -> log.nodesByFireTime("guarded").size() == 2, Duration.ofSeconds(10));
        // a second run of either fire, on a node that fired it late, would come within this
        sleepUntil(Instant.now().plusMillis(500));

        assertThat(log.nodesByFireTime("guarded")).containsOnlyKeys(start.toEpochMilli(), start.toEpochMilli() + 500)
                .allSatisfy((time, ranOn) -> assertThat(ranOn).hasSize(1));
    }

    @Test
    void aGuardedJobBuiltWithoutANameFailsTheCheckAndIsVetoed() throws Exception {
        Instant start = nextSecond();
        QuartzNode node = node("node-a");
        JobDetail unnamed = JobBuilder.newJob(TestJobs.GuardedJob.class).usingJobData(log.data(node.id)).build();
        node.schedule(unnamed, TriggerBuilder.newTrigger().withIdentity("unnamed-job", "cluster").forJob(unnamed)
                .startAt(Date.from(start)).build());
        ClusterSingletonTriggerListener listener = new ClusterSingletonTriggerListener(node.locks);

        assertThatThrownBy(() -> listener.checkJobs(node.scheduler)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Quartz job DEFAULT.").hasMessageContaining("built without a name")
                .hasMessageContaining("withIdentity");
        node.start();
        sleepUntil(start.plusMillis(500));
        assertThat(log.runs(unnamed.getKey().getName())).isEmpty();
    }

    @Test
    void onlyANameQuartzMadeUpCountsAsGenerated() {
        assertThat(JobGuard.isGenerated(TriggerBuilder.newTrigger().build().getKey())).isTrue();
        assertThat(JobGuard.isGenerated(new TriggerKey(org.quartz.utils.Key.createUniqueName("reports"), "reports")))
                .isTrue();
        assertThat(JobGuard.isGenerated(JobBuilder.newJob(TestJobs.PlainJob.class).build().getKey())).isTrue();
        assertThat(JobGuard.isGenerated(new TriggerKey("nightly", "reports"))).isFalse();
        assertThat(JobGuard.isGenerated(new TriggerKey(java.util.UUID.randomUUID().toString(), "reports")))
                .as("a UUID of the user's own").isFalse();
    }

    @Test
    void aTriggerKeyTooLongForTheMarkerNameIsHashedIntoIt() throws Exception {
        Instant start = nextSecond();
        QuartzNode node = node("node-a");
        String longName = "t".repeat(990);
        String marker = "job:cluster.guarded@#" + sha256Hex("cluster." + longName) + "@" + start.toEpochMilli();
        AtomicReference<List<LockHolder>> whileRunning = new AtomicReference<>();
        log.work(context -> whileRunning.set(node.locks.holders(LockKind.SINGLETON, null, marker)));
        node.schedule(job(TestJobs.GuardedJob.class, "guarded", node.id), every(500, longName, start, 1)).start();
        waitFor(() -> whileRunning.get() != null, Duration.ofSeconds(3));

        assertThat(whileRunning.get()).hasSize(1);
    }

    @Test
    void theTenantExpressionPutsTheLocksInTheJobsTenant() throws Exception {
        Instant start = nextSecond();
        QuartzNode node = node("node-a");
        String marker = marker("tenant", "tenant", start);
        Map<String, Integer> holdersByTenant = new ConcurrentHashMap<>();
        log.work(context -> {
            holdersByTenant.put("acme", node.locks.holders(LockKind.SINGLETON, "acme", marker).size());
            holdersByTenant.put("default", node.locks.holders(LockKind.SINGLETON, null, marker).size());
        });
        JobDetail job = JobBuilder.newJob(TestJobs.TenantJob.class).withIdentity("tenant", "cluster")
                .usingJobData(log.data(node.id)).usingJobData("tenant", "acme").build();
        node.schedule(job, every(500, "tenant", start, 1)).start();
        waitFor(() -> holdersByTenant.size() == 2, Duration.ofSeconds(3));

        assertThat(holdersByTenant).containsEntry("acme", 1).containsEntry("default", 0);
    }

    @Test
    void aJobWithDisallowConcurrentExecutionNeverOverlapsAcrossNodesAndItsLockIsRenewedPastItsLease() throws Exception {
        Instant start = nextSecond();
        int fires = 6;
        AtomicBoolean first = new AtomicBoolean(true);
        // the first run lasts twice its 1s lease while the other nodes keep firing
        log.work(context -> Thread.sleep(first.getAndSet(false) ? 2000 : 50));
        for (String id : List.of("node-a", "node-b", "node-c")) {
            node(id).schedule(job(TestJobs.OneAtATimeJob.class, "once", id), every(500, "once", start, fires)).start();
        }
        waitFor(() -> log.runs("once").size() == fires && log.runs("once").stream().allMatch(r -> r.endedNanos > 0),
                Duration.ofSeconds(8), () -> "runs seen: " + log.runs("once"));

        List<FireLog.Run> runs = new ArrayList<>(log.runs("once"));
        runs.sort(Comparator.comparingLong(r -> r.startedNanos));
        for (int i = 1; i < runs.size(); i++) {
            assertThat(runs.get(i).startedNanos).as("%s starts after %s ended", runs.get(i), runs.get(i - 1))
                    .isGreaterThanOrEqualTo(runs.get(i - 1).endedNanos);
        }
        assertThat(log.nodesByFireTime("once")).hasSize(fires).allSatisfy((time, ranOn) -> assertThat(ranOn).hasSize(1));
    }

    @Test
    void aNodeThatDiesMidJobIsNotRerunAndTheOthersResumeAfterItsLeaseLapses() throws Exception {
        Instant start = nextSecond();
        int fires = 10;
        CountDownLatch died = new CountDownLatch(1);
        CountDownLatch endOfTest = new CountDownLatch(1);
        AtomicReference<String> dyingNode = new AtomicReference<>();
        log.work(context -> {
            if (dyingNode.compareAndSet(null, context.getMergedJobDataMap().getString("node"))) {
                died.countDown();
                endOfTest.await(20, TimeUnit.SECONDS);
            }
        });
        for (String id : List.of("node-a", "node-b", "node-c")) {
            node(id).schedule(job(TestJobs.OneAtATimeJob.class, "once", id), every(500, "once", start, fires)).start();
        }
        assertThat(died.await(5, TimeUnit.SECONDS)).isTrue();
        Instant death = Instant.now();
        QuartzNode dead = nodes.stream().filter(n -> n.id.equals(dyingNode.get())).findFirst().orElseThrow();
        // cut off from the database, it can no longer renew: its 1s lease lapses
        dead.pool.close();
        sleepUntil(start.plusMillis((fires - 1) * 500L + 700));
        endOfTest.countDown();
        Thread.sleep(500);

        TreeMap<Long, List<String>> ran = log.nodesByFireTime("once");
        assertThat(ran).allSatisfy((time, ranOn) -> assertThat(ranOn).hasSize(1));
        assertThat(ran.firstEntry().getValue()).containsExactly(dead.id);
        assertThat(ran.tailMap(start.toEpochMilli(), false).values()).as("after its death").allSatisfy(
                ranOn -> assertThat(ranOn).doesNotContain(dead.id));
        long resumedBy = death.plusMillis(2000).toEpochMilli();
        for (long time = start.toEpochMilli(); time < start.toEpochMilli() + fires * 500L; time += 500) {
            if (time >= resumedBy) {
                assertThat(ran).as("fire at %s, after the lease lapsed", Instant.ofEpochMilli(time)).containsKey(time);
            }
        }
    }

    @Test
    void aFireIsVetoedWhenTheLockStoreCannotBeReached() throws Exception {
        Instant start = nextSecond();
        QuartzNode node = node("node-a");
        node.schedule(job(TestJobs.GuardedJob.class, "guarded", node.id), every(500, "guarded", start, 1));
        node.schedule(job(TestJobs.PlainJob.class, "plain", node.id), every(500, "plain", start, 1));
        node.pool.close();
        node.start();
        waitFor(() -> log.runs("plain").size() == 1, Duration.ofSeconds(3));
        Thread.sleep(300);

        assertThat(log.runs("guarded")).isEmpty();
    }

    @Test
    void aJobThatAsksToRefireImmediatelyRunsAgainUnderTheSameFire() throws Exception {
        Instant start = nextSecond();
        AtomicBoolean first = new AtomicBoolean(true);
        log.work(context -> {
            if (first.getAndSet(false)) {
                JobExecutionException refire = new JobExecutionException("try again");
                refire.setRefireImmediately(true);
                throw refire;
            }
        });
        for (String id : List.of("node-a", "node-b")) {
            node(id).schedule(job(TestJobs.GuardedJob.class, "guarded", id), every(500, "guarded", start, 1)).start();
        }
        waitFor(() -> log.runs("guarded").size() == 2, Duration.ofSeconds(3));
        Thread.sleep(300);

        TreeMap<Long, List<String>> ran = log.nodesByFireTime("guarded");
        assertThat(ran).containsOnlyKeys(start.toEpochMilli());
        assertThat(ran.get(start.toEpochMilli())).as("two runs on one node").hasSize(2).containsOnly(
                ran.get(start.toEpochMilli()).get(0));
    }

    @Test
    void aFireThatAnotherListenerVetoesLeavesNoRunningLockBehind() throws Exception {
        Instant start = nextSecond();
        QuartzNode node = node("node-a");
        CountDownLatch vetoed = new CountDownLatch(1);
        node.scheduler.getListenerManager().addTriggerListener(new TriggerListenerSupport() {
            @Override
            public String getName() {
                return "maintenance-mode";
            }

            @Override
            public boolean vetoJobExecution(Trigger trigger, JobExecutionContext context) {
                vetoed.countDown();
                return true;
            }
        });
        node.schedule(job(TestJobs.OneAtATimeJob.class, "once", node.id), every(500, "once", start, 1)).start();
        assertThat(vetoed.await(3, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(300);

        assertThat(log.runs("once")).isEmpty();
        assertThat(node.locks.holders(LockKind.SINGLETON, null, "job:cluster.once")).isEmpty();
        assertThat(node.locks.holders(LockKind.SINGLETON, null, marker("once", "once", start)))
                .as("the fire counts as handled").hasSize(1);
        assertThat(node.locks.heldCount()).as("handles the listener still holds").isZero();
    }

    @Test
    void aFireQuartzAbandonsWhenAnotherJobListenerFailsAfterTheRunLeavesNoLockRenewed() throws Exception {
        CountDownLatch failed = new CountDownLatch(1);
        QuartzNode node = node("node-a");
        node.scheduler.getListenerManager().addJobListener(new JobListenerSupport() {
            @Override
            public String getName() {
                return "history";
            }

            @Override
            public void jobWasExecuted(JobExecutionContext context, JobExecutionException jobException) {
                failed.countDown();
                throw new IllegalStateException("history table is gone");
            }
        });
        Instant start = fireOnceUntil(node, failed);

        assertThat(log.runs("once")).hasSize(1);
        assertThat(node.locks.holders(LockKind.SINGLETON, null, marker("once", "once", start)))
                .as("the marker stays for its retention").hasSize(1);
    }

    @Test
    void aFireQuartzAbandonsWhenAnotherTriggerListenerFailsBeforeTheRunLeavesNoLockRenewed() throws Exception {
        CountDownLatch failed = new CountDownLatch(1);
        QuartzNode node = node("node-a");
        node.scheduler.getListenerManager().addTriggerListener(new TriggerListenerSupport() {
            @Override
            public String getName() {
                return "maintenance-mode";
            }

            @Override
            public boolean vetoJobExecution(Trigger trigger, JobExecutionContext context) {
                failed.countDown();
                throw new IllegalStateException("maintenance table is gone");
            }
        });
        fireOnceUntil(node, failed);

        assertThat(log.runs("once")).as("Quartz does not run a fire whose listeners failed").isEmpty();
    }

    /**
     * Fires the one-at-a-time job {@code once} on the node, waits until a listener has failed, and checks
     * that the guard then holds no lock for the fire: Quartz skips the completion callbacks, and before
     * the guard heard of the error the running lock stayed renewed, vetoing the job on every node.
     */
    private Instant fireOnceUntil(QuartzNode node, CountDownLatch failed) throws InterruptedException {
        Instant start = nextSecond();
        node.schedule(job(TestJobs.OneAtATimeJob.class, "once", node.id), every(500, "once", start, 1)).start();
        assertThat(failed.await(3, TimeUnit.SECONDS)).isTrue();

        waitFor(() -> node.locks.heldCount() == 0, Duration.ofSeconds(2));
        assertThat(node.locks.holders(LockKind.SINGLETON, null, "job:cluster.once")).isEmpty();
        return start;
    }

    @Test
    void aJobThatThrowsEndsItsFireAndFreesItsRunningLock() throws Exception {
        Instant start = nextSecond();
        QuartzNode node = node("node-a");
        log.work(context -> {
            throw new IllegalStateException("report failed");
        });
        node.schedule(job(TestJobs.OneAtATimeJob.class, "once", node.id), every(500, "once", start, 1)).start();
        waitFor(() -> log.runs("once").size() == 1, Duration.ofSeconds(3));

        waitFor(() -> node.locks.heldCount() == 0, Duration.ofSeconds(2));
        assertThat(node.locks.holders(LockKind.SINGLETON, null, "job:cluster.once")).isEmpty();
    }

    @Test
    void aReExecutionQuartzAbandonsWhenAListenerBeforeTheGuardFailsLeavesNoLockRenewed() throws Exception {
        log.work(context -> {
            if (context.getRefireCount() == 0) {
                JobExecutionException refire = new JobExecutionException("try again");
                refire.setRefireImmediately(true);
                throw refire;
            }
        });
        CountDownLatch failed = new CountDownLatch(1);
        QuartzNode node = node("node-a");
        ListenerManager listeners = node.scheduler.getListenerManager();
        TriggerListener guard = listeners.getTriggerListener(ClusterSingletonTriggerListener.NAME);
        listeners.removeTriggerListener(ClusterSingletonTriggerListener.NAME);
        listeners.addTriggerListener(new TriggerListenerSupport() {
            @Override
            public String getName() {
                return "maintenance-mode";
            }

            @Override
            public boolean vetoJobExecution(Trigger trigger, JobExecutionContext context) {
                if (context.getRefireCount() > 0) {
                    failed.countDown();
                    throw new IllegalStateException("maintenance table is gone");
                }
                return false;
            }
        });
        // after the failing listener, which Quartz then asks first
        listeners.addTriggerListener(guard);
        fireOnceUntil(node, failed);

        assertThat(log.runs("once")).as("the first run; Quartz abandons the re-execution").hasSize(1);
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void aTriggerScheduledAfterStartUpIsCheckedWhenItIsScheduled(CapturedOutput output) throws Exception {
        QuartzNode node = node("node-a").start();
        Instant later = nextSecond().plusSeconds(3600);
        node.schedule(job(TestJobs.BadLeaseJob.class, "bad", node.id), every(500, "bad", later, 1));
        node.schedule(job(TestJobs.GuardedJob.class, "started-now", node.id),
                every(60_000, "started-now", later.plusMillis(1234), 2));

        node.scheduler.triggerJob(JobKey.jobKey("started-now", "cluster"));

        assertThat(output.getOut())
                .contains("Quartz job cluster.bad was scheduled after the start-up check but cannot be guarded")
                .contains("lockAtMostFor")
                .contains("Trigger cluster.started-now of guarded job cluster.started-now")
                .as("a manual run starts now on this node alone").doesNotContain("Trigger DEFAULT.MT_");
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void aTriggerScheduledAfterTheCheckButBeforeTheStartIsCheckedWhenItIsScheduled(CapturedOutput output)
            throws Exception {
        QuartzNode node = node("node-a");
        ClusterSingletonTriggerListener guard = (ClusterSingletonTriggerListener) node.scheduler.getListenerManager()
                .getTriggerListener(ClusterSingletonTriggerListener.NAME);
        guard.checkJobs(node.scheduler);
        node.schedule(job(TestJobs.BadLeaseJob.class, "bad", node.id), every(500, "bad", nextSecond().plusSeconds(3600), 1));

        assertThat(output.getOut()).contains("Quartz job cluster.bad was scheduled after the start-up check");
    }

    @Test
    void registeringTheListenerTwiceAddsItOnce() throws Exception {
        QuartzNode node = node("node-a");
        ClusterSingletonTriggerListener listener = new ClusterSingletonTriggerListener(node.locks);
        listener.registerWith(node.scheduler);
        int schedulerListeners = node.scheduler.getListenerManager().getSchedulerListeners().size();

        listener.registerWith(node.scheduler);

        assertThat(node.scheduler.getListenerManager().getSchedulerListeners()).hasSize(schedulerListeners);
        assertThat(node.scheduler.getListenerManager().getTriggerListeners()).filteredOn(l -> l == listener).hasSize(1);
        assertThat(node.scheduler.getListenerManager().getJobListeners()).filteredOn(l -> l == listener).hasSize(1);
    }

    @Test
    void registeringTheListenerAgainKeepsTheMatchersSetOnIt() throws Exception {
        QuartzNode node = node("node-a");
        ListenerManager listeners = node.scheduler.getListenerManager();
        ClusterSingletonTriggerListener listener = new ClusterSingletonTriggerListener(node.locks);
        listener.registerWith(node.scheduler);
        GroupMatcher<TriggerKey> triggers = GroupMatcher.triggerGroupEquals("cluster");
        GroupMatcher<JobKey> jobs = GroupMatcher.jobGroupEquals("cluster");
        listeners.setTriggerListenerMatchers(ClusterSingletonTriggerListener.NAME, List.of(triggers));
        listeners.setJobListenerMatchers(ClusterSingletonTriggerListener.NAME, List.of(jobs));

        listener.registerWith(node.scheduler);

        assertThat(listeners.getTriggerListenerMatchers(ClusterSingletonTriggerListener.NAME)).containsExactly(triggers);
        assertThat(listeners.getJobListenerMatchers(ClusterSingletonTriggerListener.NAME)).containsExactly(jobs);
    }

    @Test
    void locksOfAFireQuartzNeverReportedCompleteAreReleasedAtTheThreadsNextFire() {
        ClusterSingletonTriggerListener listener = new ClusterSingletonTriggerListener(node("node-a").locks);
        JobDetail job = JobBuilder.newJob(TestJobs.OneAtATimeJob.class).withIdentity("once", "cluster").build();
        Instant start = nextSecond();
        JobExecutionContext first = fire(job, "fire-1", start);
        JobExecutionContext second = fire(job, "fire-2", start.plusSeconds(1));

        // Quartz skips the completion callbacks when another listener throws: the first fire never ends
        assertThat(listener.vetoJobExecution(first.getTrigger(), first)).isFalse();
        assertThat(listener.vetoJobExecution(second.getTrigger(), second)).as("vetoed by its own running lock").isFalse();
    }

    @Test
    void aRunThatOutlastsItsNextFireTimeKeepsTheRunningLockForTheFireQuartzHeldBack() {
        ClusterSingletonTriggerListener nodeB = new ClusterSingletonTriggerListener(node("node-b").locks);
        ClusterSingletonTriggerListener nodeA = new ClusterSingletonTriggerListener(node("node-a").locks);
        JobDetail job = oneAtATimeJob();
        Instant start = aWhileAgo();
        runs(nodeB, fire(job, "b-1", start, start.plusMillis(500)));

        // the other node's fire of a later time comes first, as it may when the run ends on the second
        JobExecutionContext later = fire(job, "a-1", start.plusSeconds(1), start.plusMillis(1500));
        assertThat(nodeA.vetoJobExecution(later.getTrigger(), later)).as("the other node's later fire").isTrue();
        runs(nodeB, fire(job, "b-2", start.plusMillis(500), Instant.now().plusSeconds(60)));

        assertThat(runningLockHolders(node("node-c").locks)).as("caught up: the running lock is free").isEmpty();
    }

    @Test
    void aFireHeldBackOnAnotherTriggerOfTheJobKeepsTheRunningLockToo() throws Exception {
        var locks = node("node-b").locks;
        Instant start = aWhileAgo();
        JobExecutionContext run = fire(oneAtATimeJob(), "b-1", start, Instant.now().plusSeconds(60));
        Trigger other = mock(Trigger.class);
        when(other.getKey()).thenReturn(new TriggerKey("other", "cluster"));
        when(other.getNextFireTime()).thenReturn(Date.from(start.plusMillis(500)));
        onScheduler(run, Map.of(run.getTrigger(), TriggerState.BLOCKED, other, TriggerState.BLOCKED));

        runs(new ClusterSingletonTriggerListener(locks), run);

        assertThat(runningLockHolders(locks)).as("kept for the other trigger").hasSize(1);
    }

    @Test
    void aPausedTriggersPassedFireTimeDoesNotKeepTheRunningLock() throws Exception {
        var locks = node("node-b").locks;
        Instant start = aWhileAgo();
        JobExecutionContext run = fire(oneAtATimeJob(), "b-1", start, start.plusMillis(500));
        onScheduler(run, Map.of(run.getTrigger(), TriggerState.PAUSED));

        runs(new ClusterSingletonTriggerListener(locks), run);

        assertThat(runningLockHolders(locks)).as("no fire to wait for").isEmpty();
    }

    @Test
    void aRunEndingWhileTheSchedulerShutsDownKeepsNoRunningLockForAFireThatWillNotCome() throws Exception {
        var locks = node("node-b").locks;
        Instant start = aWhileAgo();
        JobExecutionContext run = fire(oneAtATimeJob(), "b-1", start, start.plusMillis(500));
        onScheduler(run, Map.of(run.getTrigger(), TriggerState.BLOCKED));
        when(run.getScheduler().isShutdown()).thenReturn(true);

        runs(new ClusterSingletonTriggerListener(locks), run);

        assertThat(runningLockHolders(locks)).as("nothing to catch up on a scheduler shut down").isEmpty();
    }

    @Test
    void closingTheListenerFreesTheRunningLocksKeptForHeldBackFiresAndKeepsNoneAfterwards() {
        var locks = node("node-b").locks;
        Instant start = aWhileAgo();
        ClusterSingletonTriggerListener listener = new ClusterSingletonTriggerListener(locks);
        runs(listener, fire(oneAtATimeJob(), "b-1", start, start.plusMillis(500)));
        assertThat(runningLockHolders(locks)).as("kept for the held-back fire").hasSize(1);

        listener.close();
        assertThat(runningLockHolders(locks)).isEmpty();

        runs(listener, fire(oneAtATimeJob(), "b-2", start.plusMillis(500), start.plusMillis(1000)));
        assertThat(runningLockHolders(locks)).as("a run that ends after the close").isEmpty();
        assertThat(locks.heldCount()).as("handles the listener still holds").isZero();
    }

    @Test
    void aRunningLockKeptForAHeldBackFireIsFreedWhenThatFireNeverComes() throws Exception {
        var locks = node("node-b").locks;
        Instant start = aWhileAgo();
        runs(new ClusterSingletonTriggerListener(locks), fire(oneAtATimeJob(), "b-1", start, start.plusMillis(500)));
        assertThat(runningLockHolders(locks)).as("kept for the held-back fire").hasSize(1);

        waitFor(() -> runningLockHolders(locks).isEmpty(), ClusterSingletonTriggerListener.CATCH_UP_WAIT.plusSeconds(5));
        assertThat(locks.heldCount()).as("handles the listener still holds").isZero();
    }

    @Test
    void aFireQuartzRecoversRunsDespiteTheMarkerTheFailedRunTook() {
        JobDetail job = JobBuilder.newJob(TestJobs.GuardedJob.class).withIdentity("guarded", "cluster").build();
        JobExecutionContext failed = fire(job, "fire-1", aWhileAgo());
        ClusterSingletonTriggerListener beforeTheCrash = new ClusterSingletonTriggerListener(node("node-a").locks);
        assertThat(beforeTheCrash.vetoJobExecution(failed.getTrigger(), failed)).isFalse();

        // the node died mid-run; its JDBC job store, started again, fires the same fire once more
        JobExecutionContext recovered = recovering(failed, "fire-2");
        ClusterSingletonTriggerListener afterTheRestart = new ClusterSingletonTriggerListener(node("node-a2").locks);
        assertThat(afterTheRestart.vetoJobExecution(recovered.getTrigger(), recovered)).isFalse();
    }

    @Test
    void aRecoveredFireOfAOneAtATimeJobWaitsForTheFailedRunsRunningLockToLapse() {
        JdbcLockService crashed = node("node-a").locks;
        JobExecutionContext failed = fire(oneAtATimeJob(), "fire-1", aWhileAgo());
        // what the failed run left: its marker and its running lock, no longer renewed
        crashed.tryAcquire(LockRequest.singleton("job:cluster.once").lease(Duration.ofSeconds(1)).build()).orElseThrow();
        crashed.tryAcquire(LockRequest.singleton(failedMarker(failed)).lease(Duration.ofMinutes(10)).build()).orElseThrow();

        JobExecutionContext recovered = recovering(failed, "fire-2");
        ClusterSingletonTriggerListener restarted = new ClusterSingletonTriggerListener(node("node-a2").locks);
        assertThat(restarted.vetoJobExecution(recovered.getTrigger(), recovered)).isFalse();
        assertThat(runningLockHolders(crashed)).singleElement().satisfies(h -> assertThat(h.node()).isEqualTo("node-a2"));
        restarted.triggerComplete(recovered.getTrigger(), recovered, CompletedExecutionInstruction.NOOP);
    }

    @Test
    void aSchedulerWithAClusteredJobStoreIsLeftToQuartz() throws Exception {
        Scheduler scheduler = clusteredScheduler();

        assertThat(new ClusterSingletonTriggerListener(node("node-a").locks).registerWith(scheduler)).isFalse();
        assertThat(scheduler.getListenerManager().getTriggerListeners()).isEmpty();
        assertThat(scheduler.getListenerManager().getJobListeners()).isEmpty();
    }

    /** A scheduler of a clustered JDBC job store, with no jobs. */
    private static Scheduler clusteredScheduler() throws SchedulerException {
        String name = "clustered";
        Scheduler scheduler = mock(Scheduler.class);
        when(scheduler.getSchedulerName()).thenReturn(name);
        when(scheduler.getListenerManager()).thenReturn(new ListenerManagerImpl());
        when(scheduler.getMetaData()).thenReturn(new SchedulerMetaData(name, "node-a",
                QuartzScheduler.class, false, false, true, false, null, 0, JobStoreTX.class, true, true,
                SimpleThreadPool.class, 3, "2.5"));
        return scheduler;
    }

    /** The same fire as {@code failed}, as Quartz's recovery fires it again. */
    private static JobExecutionContext recovering(JobExecutionContext failed, String fireInstanceId) {
        JobExecutionContext context = mock(JobExecutionContext.class);
        JobDetail job = failed.getJobDetail();
        Trigger trigger = failed.getTrigger();
        Date scheduled = failed.getScheduledFireTime();
        when(context.getJobDetail()).thenReturn(job);
        when(context.getFireInstanceId()).thenReturn(fireInstanceId);
        when(context.getScheduledFireTime()).thenReturn(scheduled);
        when(context.getTrigger()).thenReturn(trigger);
        when(context.isRecovering()).thenReturn(true);
        return context;
    }

    private static String failedMarker(JobExecutionContext failed) {
        return "job:" + failed.getJobDetail().getKey() + "@" + failed.getTrigger().getKey() + "@"
                + failed.getScheduledFireTime().getTime();
    }

    /** The listener lets {@code fire} run, and the run ends. */
    private static void runs(ClusterSingletonTriggerListener listener, JobExecutionContext fire) {
        assertThat(listener.vetoJobExecution(fire.getTrigger(), fire)).as("vetoed " + fire.getFireInstanceId()).isFalse();
        listener.triggerComplete(fire.getTrigger(), fire, CompletedExecutionInstruction.NOOP);
    }

    /** Who holds the running lock of {@link #oneAtATimeJob()}. */
    private static List<LockHolder> runningLockHolders(JdbcLockService locks) {
        return locks.holders(LockKind.SINGLETON, null, "job:cluster.once");
    }

    @Test
    void aJobWhoseAnnotationCannotBeUnderstoodFailsTheCheckAndIsVetoed() throws Exception {
        assertCheckFailsAndTheJobNeverRuns(TestJobs.BadLeaseJob.class, "bad", "cluster.bad", "lockAtMostFor", "soon");
    }

    @Test
    void aJobWithASemaphoreAnnotationFailsTheCheckAndIsVetoedRatherThanRunUnlimited() throws Exception {
        assertCheckFailsAndTheJobNeverRuns(TestJobs.SemaphoreJob.class, "export",
                "@Semaphore on Quartz job cluster.export", "is not applied", "LockService.call");
    }

    @Test
    void aJobWithALeaseTooShortForTheWatchdogFailsTheCheckRatherThanBeingVetoedAtEveryFire() throws Exception {
        assertCheckFailsAndTheJobNeverRuns(TestJobs.TooShortLeaseJob.class, "short", "lockAtMostFor", "200 ms",
                "300 ms");
    }

    /** Schedules the job to fire soon: the scheduler's check fails naming it, and its fire is vetoed. */
    private void assertCheckFailsAndTheJobNeverRuns(Class<? extends Job> type, String name, String... messageParts)
            throws Exception {
        Instant start = nextSecond();
        QuartzNode node = node("node-a");
        node.schedule(job(type, name, node.id), every(500, name, start, 1));
        ClusterSingletonTriggerListener listener = new ClusterSingletonTriggerListener(node.locks);

        assertThatThrownBy(() -> listener.checkJobs(node.scheduler)).isInstanceOf(IllegalArgumentException.class)
                .satisfies(ex -> assertThat(ex.getMessage()).contains(messageParts));
        node.start();
        sleepUntil(start.plusMillis(500));
        assertThat(log.runs(name)).isEmpty();
    }

    @Test
    void aClusterSingletonOnTheExecuteMethodFailsTheCheckNamingTheClassAsItsPlace() {
        QuartzNode node = node("node-a");
        ClusterSingletonTriggerListener listener = new ClusterSingletonTriggerListener(node.locks);

        assertThatThrownBy(() -> listener.isGuarded(JobBuilder.newJob(TestJobs.MethodSingletonJob.class)
                .withIdentity("on-method", "cluster").build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("@ClusterSingleton on method execute").hasMessageContaining("put it on the job class");
    }

    @Test
    void checkingASchedulerReportsItsGuardedJobs() throws Exception {
        QuartzNode node = node("node-a");
        Instant later = Instant.now().plusSeconds(3600);
        node.schedule(job(TestJobs.GuardedJob.class, "guarded", node.id), every(500, "guarded", later, 1));
        node.schedule(job(TestJobs.PlainJob.class, "plain", node.id), every(500, "plain", later, 1));
        node.schedule(job(TestJobs.PlainJob.class, "listed", node.id), every(500, "listed", later, 1));
        ClusterSingletonTriggerListener listener = new ClusterSingletonTriggerListener(node.locks,
                Set.of("cluster.listed", "cluster.missing"), Duration.ofMinutes(1));

        assertThat(listener.checkJobs(node.scheduler)).extracting(Object::toString)
                .containsExactlyInAnyOrder("cluster.guarded", "cluster.listed");
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void checkingWarnsAboutASimpleTriggerWhoseTimesDependOnWhenTheNodeScheduledIt(CapturedOutput output)
            throws Exception {
        QuartzNode node = node("node-a");
        Instant aligned = nextSecond().plusSeconds(3600);
        node.schedule(job(TestJobs.GuardedJob.class, "aligned", node.id), every(60_000, "aligned", aligned, 2));
        node.schedule(job(TestJobs.GuardedJob.class, "started-now", node.id),
                every(60_000, "started-now", aligned.plusMillis(1234), 2));
        new ClusterSingletonTriggerListener(node.locks).checkJobs(node.scheduler);

        assertThat(output.getOut()).contains("Trigger cluster.started-now of guarded job cluster.started-now")
                .doesNotContain("Trigger cluster.aligned");
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void checkingWarnsAboutAnyTriggerThatStartsWhenTheNodeSchedulesIt(CapturedOutput output) throws Exception {
        QuartzNode node = node("node-a");
        Map<String, ScheduleBuilder<? extends Trigger>> schedules = Map.of(
                "one-shot", SimpleScheduleBuilder.simpleSchedule(),
                "calendar", CalendarIntervalScheduleBuilder.calendarIntervalSchedule().withIntervalInHours(1),
                "daily", DailyTimeIntervalScheduleBuilder.dailyTimeIntervalSchedule().withIntervalInHours(1),
                "cron", CronScheduleBuilder.cronSchedule("0 0 * * * ?"));
        // an odd millisecond, as startNow() almost always gives
        Date now = Date.from(nextSecond().plusMillis(1234));
        schedules.forEach((name, schedule) -> node.schedule(job(TestJobs.GuardedJob.class, name, node.id),
                TriggerBuilder.newTrigger().withIdentity(name, "cluster").startAt(now).withSchedule(schedule).build()));
        new ClusterSingletonTriggerListener(node.locks).checkJobs(node.scheduler);

        assertThat(output.getOut()).contains("Trigger cluster.one-shot of guarded job cluster.one-shot")
                .contains("Trigger cluster.calendar of guarded job cluster.calendar")
                .as("whole-second times of day and cron times").doesNotContain("Trigger cluster.daily")
                .doesNotContain("Trigger cluster.cron");
    }

    @Test
    void aLockServiceOtherThanTheEngineIsUsedThroughItsScopedFormAndStillRenewed() throws Exception {
        Instant start = nextSecond();
        AtomicReference<List<LockHolder>> pastTheLease = new AtomicReference<>();
        log.work(context -> {
            Thread.sleep(1400);
            pastTheLease.set(nodes.get(0).locks.holders(LockKind.SINGLETON, null, "job:cluster.once"));
        });
        for (String id : List.of("node-a", "node-b")) {
            node(id, Set.of(), Delegating::new).schedule(job(TestJobs.OneAtATimeJob.class, "once", id),
                    every(500, "once", start, 1)).start();
        }
        waitFor(() -> pastTheLease.get() != null, Duration.ofSeconds(4));
        Thread.sleep(300);

        assertThat(pastTheLease.get()).as("the 1s running lock, 1.4s into the run").hasSize(1);
        assertThat(log.nodesByFireTime("once")).containsOnlyKeys(start.toEpochMilli())
                .allSatisfy((time, ranOn) -> assertThat(ranOn).hasSize(1));
    }

    private QuartzNode node(String id) {
        return node(id, Set.of(), null);
    }

    private QuartzNode node(String id, Collection<String> guardedKeys, Function<JdbcLockService, LockService> service) {
        QuartzNode node = QuartzNode.create(TestDatabase.H2, prefix, id, guardedKeys, service);
        nodes.add(node);
        return node;
    }

    private JobDetail job(Class<? extends Job> type, String name, String node) {
        return JobBuilder.newJob(type).withIdentity(name, "cluster").usingJobData(log.data(node)).build();
    }

    private static JobExecutionContext fire(JobDetail job, String fireInstanceId, Instant scheduled) {
        JobExecutionContext context = mock(JobExecutionContext.class);
        when(context.getJobDetail()).thenReturn(job);
        when(context.getFireInstanceId()).thenReturn(fireInstanceId);
        when(context.getScheduledFireTime()).thenReturn(Date.from(scheduled));
        when(context.getTrigger()).thenReturn(every(1000, fireInstanceId, scheduled, 1));
        return context;
    }

    private static JobDetail oneAtATimeJob() {
        return JobBuilder.newJob(TestJobs.OneAtATimeJob.class).withIdentity("once", "cluster").build();
    }

    /** A whole second three seconds ago: fire times from it have passed. */
    private static Instant aWhileAgo() {
        return Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(3);
    }

    /** A fire whose trigger's next fire time is {@code next}, in the past when the run outlasted it. */
    private static JobExecutionContext fire(JobDetail job, String fireInstanceId, Instant scheduled, Instant next) {
        JobExecutionContext context = mock(JobExecutionContext.class);
        Trigger trigger = mock(Trigger.class);
        when(trigger.getNextFireTime()).thenReturn(Date.from(next));
        when(context.getJobDetail()).thenReturn(job);
        when(context.getFireInstanceId()).thenReturn(fireInstanceId);
        when(context.getScheduledFireTime()).thenReturn(Date.from(scheduled));
        when(context.getTrigger()).thenReturn(trigger);
        return context;
    }

    /** The fire's scheduler, with the job's triggers in the given states. */
    private static void onScheduler(JobExecutionContext context, Map<Trigger, TriggerState> triggers)
            throws SchedulerException {
        Scheduler scheduler = mock(Scheduler.class);
        when(context.getScheduler()).thenReturn(scheduler);
        JobKey job = context.getJobDetail().getKey();
        doReturn(List.copyOf(triggers.keySet())).when(scheduler).getTriggersOfJob(job);
        for (Map.Entry<Trigger, TriggerState> entry : triggers.entrySet()) {
            Trigger trigger = entry.getKey();
            TriggerKey key = trigger.getKey();
            if (key == null) {
                key = new TriggerKey(context.getFireInstanceId(), "cluster");
                when(trigger.getKey()).thenReturn(key);
            }
            when(scheduler.getTriggerState(key)).thenReturn(entry.getValue());
        }
    }

    private static JobDetail plainJob(String name, String group) {
        return JobBuilder.newJob(TestJobs.PlainJob.class).withIdentity(name, group).build();
    }

    private static Trigger every(long millis, String name, Instant start, int fires) {
        return TriggerBuilder.newTrigger().withIdentity(name, "cluster").startAt(Date.from(start))
                .withSchedule(SimpleScheduleBuilder.simpleSchedule().withIntervalInMilliseconds(millis)
                        .withRepeatCount(fires - 1))
                .build();
    }

    /** The fire marker of the job {@code cluster.<job>} fired by the trigger {@code cluster.<trigger>}. */
    private static String marker(String job, String trigger, Instant scheduled) {
        return "job:cluster." + job + "@cluster." + trigger + "@" + scheduled.toEpochMilli();
    }

    private static String sha256Hex(String text) throws Exception {
        return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    private static Instant nextSecond() {
        return Instant.now().truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
    }

    /** A lock service that is not the engine itself, as a decorator would be. */
    private record Delegating(LockService target) implements LockService {

        @Override
        public LockHandle acquire(LockRequest request) {
            return target.acquire(request);
        }

        @Override
        public Optional<LockHandle> tryAcquire(LockRequest request) {
            return target.tryAcquire(request);
        }

        @Override
        public <T, E extends Exception> T call(LockRequest request, CheckedCallable<T, E> work) throws E {
            return target.call(request, work);
        }

        @Override
        public void run(LockRequest request, Runnable work) {
            target.run(request, work);
        }

        @Override
        public LockHandle enter(LockRequest request) {
            return target.enter(request);
        }

        @Override
        public Optional<LockHandle> tryEnter(LockRequest request) {
            return target.tryEnter(request);
        }

        @Override
        public List<LockHandle> tryAcquireEach(Collection<LockRequest> requests) {
            return target.tryAcquireEach(requests);
        }

        @Override
        public List<LockHolder> holders(String tenant, String path) {
            return target.holders(tenant, path);
        }
    }
}
