package dev.locks.quartz;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.quartz.JobDetail;
import org.quartz.JobExecutionContext;
import org.quartz.JobExecutionException;
import org.quartz.JobKey;
import org.quartz.JobListener;
import org.quartz.ListenerManager;
import org.quartz.Scheduler;
import org.quartz.SchedulerException;
import org.quartz.SimpleTrigger;
import org.quartz.Trigger;
import org.quartz.Trigger.CompletedExecutionInstruction;
import org.quartz.TriggerListener;
import org.quartz.impl.matchers.GroupMatcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;

import dev.locks.DefaultLockService;
import dev.locks.LockHandle;
import dev.locks.LockHandles;
import dev.locks.LockRequest;
import dev.locks.LockService;
import dev.locks.annotation.ClusterSingleton;

/**
 * Runs each scheduled fire of a guarded Quartz job on exactly one node of the cluster, when every node
 * schedules the job in its own job store (in memory, or a JDBC store that is not clustered). A job is
 * guarded when its class is annotated {@link ClusterSingleton} or its key is configured.
 *
 * <p><b>How.</b> Quartz asks every global trigger listener whether to veto a fire, on the worker
 * thread that will run it. This listener takes the singleton {@code job:<job>@<trigger>@<scheduled
 * fire time in epoch millis>} without waiting, where {@code <job>} is the job key ({@code group.name}),
 * after the annotation's {@code name} and a colon if it sets one, and {@code <trigger>} the trigger's
 * key ({@code #} and its SHA-256 if the name would be too long); the scheduled fire time is the same
 * on every node, so one node gets it and the others veto the fire. Two triggers of a job, or two job
 * details of one class, that fire at the same time are two fires, each run once. The marker is
 * renewed while the job runs and stays until the run ends or until {@code fireMarkerRetention}
 * (default 10 minutes, or the annotation's {@code lockAtLeastFor}) after it was taken, whichever is
 * later, so that a node whose clock or thread pool fires the same time up to that late is vetoed too.
 * Then the store's purge deletes it. No guess about the job's length is needed: each fire has its own
 * name.
 *
 * <p><b>The guarantee.</b> Each scheduled fire time runs at most once across the cluster, and exactly
 * once as long as a node that fires it stays up and reaches the lock store, within the limits below.
 *
 * <p><b>Overlapping runs.</b> A job class marked {@code @DisallowConcurrentExecution} also holds
 * {@code job:<job>} while it runs (lease: the annotation's {@code lockAtMostFor}, else the
 * service's default, renewed): a fire that comes while another node still runs the job is vetoed
 * there. The node running the job fires it after the run, as Quartz does on one node (its own trigger
 * waits), subject to misfire handling; a run that outlasts the next fire time keeps the running lock
 * for those fires ({@link #CATCH_UP_WAIT} at most for the first), so that another node's later fire
 * cannot take the lock in between and make this node veto, and lose, the fires it held back. Without
 * that annotation, fires run once each but may overlap
 * across nodes, as they may overlap on one node.
 *
 * <p><b>The same fire times on every node.</b> Deduplication needs every node to compute the same
 * scheduled times: a cron trigger with the same expression and time zone, or a simple trigger whose
 * start time is fixed or aligned to its interval. A trigger that starts "now" (a one-shot, a simple
 * or a calendar-interval trigger) fires at times that depend on when each node scheduled it, and each
 * node runs its own fires; {@link #checkJobs} warns when a first fire time is on an odd millisecond,
 * as {@code startNow()} gives. A start that differs between nodes by whole seconds is not seen.
 *
 * <p><b>Misfires.</b> A fire a node could not start within {@code org.quartz.jobStore.misfireThreshold}
 * (default 5 s in Quartz's in-memory store, Spring Boot's default, and 60 s in its JDBC stores) of its
 * time follows the trigger's misfire instruction on that node. A fire started late but within the
 * threshold keeps its time, so the marker retention should be longer than the threshold. Instructions
 * that keep the schedule's times are deduplicated against the other nodes like any fire: a repeat-forever
 * simple trigger's default ({@code RESCHEDULE_NEXT_WITH_REMAINING_COUNT}: skip to the next time), a cron
 * trigger's {@code withMisfireHandlingInstructionDoNothing()}, and {@code IGNORE_MISFIRE_POLICY} (fire the
 * missed times with their own times). The others use this node's current time: the cron default
 * {@code FIRE_ONCE_NOW} and a one-shot simple trigger's {@code FIRE_NOW} give one catch-up fire, run on
 * each node that misfired even when another node ran the missed time; a simple trigger with a finite
 * repeat count defaults to {@code RESCHEDULE_NOW_WITH_EXISTING_REPEAT_COUNT}, which moves that node's
 * whole schedule so that its later fires no longer match the other nodes'. For jobs that must never
 * run twice, use cron triggers with do-nothing, or repeat-forever simple triggers.
 *
 * <p><b>A node that dies mid-job.</b> Its fire is not run again by another node: the others vetoed
 * it when it came and will not fire that time again (at most once, never twice). A fire that Quartz
 * recovers ({@code JobExecutionContext.isRecovering()}: a non-clustered JDBC job store refiring, at its
 * restart, a job that requests recovery) passes the marker check, which the failed run's marker would
 * fail; a {@code @DisallowConcurrentExecution} job's recovery still takes the running lock, waiting up
 * to the job's lease (plus two seconds) for the failed run's lock to lapse. A scheduler with a
 * clustered job store is not guarded at all ({@link #hasClusteredJobStore}). Its locks lapse
 * without renewal: the marker after its retention, and the running lock of a
 * {@code @DisallowConcurrentExecution} job after its lease. Until then the other nodes veto that job's
 * fires, and the fires they vetoed while it ran are lost with the dead node, which would have run
 * them after its run; later fires run on the other nodes.
 *
 * <p><b>Failures.</b> If the lock store cannot be reached, or the annotation cannot be understood, the
 * fire is vetoed and logged: a guarded job never runs unguarded. A job that asks to be re-executed at
 * once ({@code JobExecutionException.setRefireImmediately}) keeps its locks for the re-run. Another
 * listener's veto of a fire this one took cancels the fire for the whole cluster: its marker stays.
 *
 * <p>With Spring Boot the auto-configuration registers it; with plain Quartz call
 * {@link #registerWith(Scheduler)} before starting the scheduler. It is both a trigger listener (the
 * veto and the end of the run) and a job listener (a fire that another listener vetoed after this
 * one took it), and {@code registerWith} adds a scheduler listener for the fires Quartz abandons
 * without a word to either: when a listener throws, Quartz stops the fire where it is and reports
 * only to the scheduler listeners, and the fire's locks are freed then.
 */
public class ClusterSingletonTriggerListener implements TriggerListener, JobListener, AutoCloseable {

    /** The name under which it is registered with Quartz. */
    public static final String NAME = ClusterSingletonTriggerListener.class.getName();

    /** How long a fire's marker is kept after it was taken, unless configured otherwise. */
    public static final Duration DEFAULT_FIRE_MARKER_RETENTION = Duration.ofMinutes(10);

    // why a scheduler with a clustered job store is not guarded, for the logs
    private static final String CLUSTERED_STORE = "its job store is clustered, so Quartz itself runs each fire on one node "
            + "of the cluster (and recovers the fires of a node that died); its jobs are not guarded by the lock service";

    private static final Logger log = LoggerFactory.getLogger(ClusterSingletonTriggerListener.class);

    /**
     * How long a running lock kept after a run waits for the fire Quartz held back meanwhile. Quartz
     * starts that fire once the run ends and a worker thread is free; a fire it skips as misfired, or
     * that waits longer for a worker, finds the lock free for any node.
     */
    static final Duration CATCH_UP_WAIT = Duration.ofSeconds(5);

    /** Beyond the lease of a failed run's running lock, how long its recovery waits for the lock to lapse. */
    private static final Duration RECOVERY_WAIT_MARGIN = Duration.ofSeconds(2);

    private final LockService locks;

    // the engine behind locks, whose handles have owners of their own and may be released on any
    // thread; null for another LockService, whose scoped handles stay on the thread that took them
    private final DefaultLockService engine;

    private final GuardedJobs jobs;

    // one fire at a time per worker thread: Quartz calls veto, run and completion on the same thread
    private final Map<Thread, HeldFire> held = new ConcurrentHashMap<>();

    // running locks kept after a run that outlasted the job's next fire time, for that fire
    private final Map<String, HeldFire> keptForCatchUp = new ConcurrentHashMap<>();

    // frees a kept lock whose fire never came: a release waits for the database, and must not hold up
    // the common pool (CompletableFuture's timer runs there on more than two cores), which the whole
    // application shares
    private final ScheduledThreadPoolExecutor catchUpExpiry = catchUpExpiry();

    /** Jobs whose fires were refused for their annotations or settings, reported once each. */
    private final Set<JobKey> refusedJobs = ConcurrentHashMap.newKeySet();

    /**
     * Guards the job classes annotated {@link ClusterSingleton}, with the default marker retention.
     *
     * @param locks the lock service shared by the cluster's nodes
     */
    public ClusterSingletonTriggerListener(LockService locks) {
        this(locks, Set.of(), DEFAULT_FIRE_MARKER_RETENTION);
    }

    /**
     * @param locks the lock service shared by the cluster's nodes
     * @param jobKeys keys of jobs to guard even without the annotation: {@code group.name}, or {@code name}
     *                for the {@code DEFAULT} group
     * @param fireMarkerRetention how long a fire's marker is kept after it was taken (the annotation's
     *                            {@code lockAtLeastFor} overrides it per job); positive
     */
    public ClusterSingletonTriggerListener(LockService locks, Collection<String> jobKeys, Duration fireMarkerRetention) {
        this.locks = Objects.requireNonNull(locks, "locks");
        this.engine = locks instanceof DefaultLockService service ? service : null;
        this.jobs = new GuardedJobs(jobKeys, fireMarkerRetention,
                engine != null ? engine.settings().shortestWatchedLease() : Duration.ZERO);
    }

    /**
     * Adds this listener to a scheduler for all its triggers and jobs, with a scheduler listener that frees
     * the locks of a fire Quartz abandons when another listener fails, and checks jobs scheduled after the
     * scheduler was checked or started; call it before the scheduler starts, and {@link #checkJobs}
     * once its jobs are added (triggers scheduled before that are checked there). Adding it again changes
     * nothing, and keeps matchers set on it. A scheduler with a clustered job store is left alone (see
     * {@link #hasClusteredJobStore}).
     *
     * @param scheduler a Quartz scheduler
     * @return true if added; false for a scheduler with a clustered job store
     * @throws SchedulerException if Quartz refuses the listener
     */
    public boolean registerWith(Scheduler scheduler) throws SchedulerException {
        if (hasClusteredJobStore(scheduler)) {
            log.info("Did not add the cluster-singleton listener to Quartz scheduler '{}': {}", scheduler.getSchedulerName(),
                    CLUSTERED_STORE);
            return false;
        }
        ListenerManager listeners = scheduler.getListenerManager();
        // added only where missing, so that matchers a caller set on them stay
        if (listeners.getTriggerListener(NAME) != this) {
            listeners.addTriggerListener(this);
        }
        if (listeners.getJobListener(NAME) != this) {
            listeners.addJobListener(this);
        }
        if (ownSchedulerListener(scheduler).isEmpty()) {
            listeners.addSchedulerListener(new GuardSchedulerListener(this, scheduler));
        }
        return true;
    }

    private Optional<GuardSchedulerListener> ownSchedulerListener(Scheduler scheduler) throws SchedulerException {
        return scheduler.getListenerManager().getSchedulerListeners().stream()
                .filter(listener -> listener instanceof GuardSchedulerListener own && own.serves(this))
                .map(GuardSchedulerListener.class::cast)
                .findFirst();
    }

    /**
     * Whether the scheduler has a clustered (JDBC) job store. Quartz then runs each fire once in the
     * cluster itself, and recovers the fires of a node that died; a guard would add nothing but vetoes
     * of those recoveries, so such a scheduler is not guarded.
     *
     * @param scheduler a Quartz scheduler
     * @return true if its job store is clustered
     * @throws SchedulerException if Quartz cannot describe the scheduler
     */
    public static boolean hasClusteredJobStore(Scheduler scheduler) throws SchedulerException {
        return scheduler.getMetaData().isJobStoreClustered();
    }

    /**
     * The first job of a scheduler that a listener would guard, for a check that finds no lock
     * service to guard it with: such a job would run every fire on every node.
     *
     * @param scheduler a Quartz scheduler; one with a clustered job store guards nothing
     * @param configuredKeys the keys listed in configuration ({@code locks.quartz.jobs})
     * @return a job whose class is annotated {@code @ClusterSingleton} or whose key is listed
     * @throws SchedulerException if Quartz cannot list the jobs
     */
    public static Optional<JobKey> firstGuardedJob(Scheduler scheduler, Collection<String> configuredKeys)
            throws SchedulerException {
        if (hasClusteredJobStore(scheduler)) {
            return Optional.empty();
        }
        for (String group : scheduler.getJobGroupNames()) {
            for (JobKey key : scheduler.getJobKeys(GroupMatcher.jobGroupEquals(group))) {
                JobDetail job = scheduler.getJobDetail(key);
                if (job != null && (AnnotatedElementUtils.hasAnnotation(job.getJobClass(), ClusterSingleton.class)
                        || configuredKeys.stream().anyMatch(configured -> GuardedJobs.names(configured, key)))) {
                    return Optional.of(key);
                }
            }
        }
        return Optional.empty();
    }

    /**
     * Whether the fires of a job are guarded.
     *
     * @param job a job
     * @return true if the job's class is annotated or its key configured
     * @throws IllegalArgumentException if its {@code @ClusterSingleton} has an invalid attribute or a lease the
     *         watchdog cannot keep, or it carries a lock annotation a Quartz job cannot honour
     */
    public boolean isGuarded(JobDetail job) {
        return jobs.guardOf(job).isPresent();
    }

    /**
     * Checks a scheduler's jobs now rather than at their first fire: fails on a job whose
     * {@code @ClusterSingleton} cannot be understood, logs the guarded jobs, and warns about configured
     * keys that name none of the scheduler's jobs (a typo would leave a job unguarded). A scheduler
     * with a clustered job store has no job guarded; its jobs are still checked for lock annotations
     * that would do nothing.
     *
     * @param scheduler a scheduler with its jobs added
     * @return the keys of its guarded jobs; none for a clustered job store
     * @throws SchedulerException if Quartz cannot list the jobs
     * @throws IllegalArgumentException naming the job whose annotations or leases cannot be honoured
     */
    public List<JobKey> checkJobs(Scheduler scheduler) throws SchedulerException {
        if (hasClusteredJobStore(scheduler)) {
            checkUnguardedJobs(scheduler);
            log.info("Quartz scheduler '{}': {}", scheduler.getSchedulerName(), CLUSTERED_STORE);
            return List.of();
        }
        List<JobKey> guarded = new ArrayList<>();
        Set<String> unknown = new LinkedHashSet<>(jobs.configuredKeys());
        for (JobKey key : scheduler.getJobKeys(GroupMatcher.anyJobGroup())) {
            JobDetail job = scheduler.getJobDetail(key);
            if (job == null) {
                continue;
            }
            unknown.removeIf(configured -> GuardedJobs.names(configured, key));
            if (jobs.guardOf(job).isPresent()) {
                guarded.add(key);
                for (Trigger trigger : scheduler.getTriggersOfJob(key)) {
                    warnIfNodeSpecific(trigger);
                }
            }
        }
        if (!guarded.isEmpty()) {
            log.info("Quartz scheduler '{}' runs each fire of these jobs on one node of the cluster: {}",
                    scheduler.getSchedulerName(), guarded);
        }
        if (!unknown.isEmpty()) {
            log.warn("Configured Quartz job keys {} name no job of scheduler '{}' (yet): expected group.name, or name "
                    + "for the DEFAULT group", unknown, scheduler.getSchedulerName());
        }
        // from now on the scheduler listener checks each trigger as it is scheduled
        ownSchedulerListener(scheduler).ifPresent(GuardSchedulerListener::checked);
        return guarded;
    }

    /** Jobs are not proxied whether or not they are guarded: their other lock annotations would do nothing. */
    private static void checkUnguardedJobs(Scheduler scheduler) throws SchedulerException {
        for (JobKey key : scheduler.getJobKeys(GroupMatcher.anyJobGroup())) {
            JobDetail job = scheduler.getJobDetail(key);
            if (job != null) {
                GuardedJobs.checkNoProxyAnnotations(job.getJobClass(), "Quartz job " + key + " ("
                        + job.getJobClass().getName() + ")");
            }
        }
    }

    /**
     * Checks a trigger scheduled after {@link #checkJobs} or the scheduler's start: logs at once, rather
     * than at its first fire, that its job cannot be guarded, and warns about fire times that depend on
     * this node. Quartz cannot be made to refuse the trigger from a listener.
     */
    void checkScheduledLater(Scheduler scheduler, Trigger trigger) {
        JobKey key = trigger.getJobKey();
        if (isManualRun(trigger)) {
            // Scheduler.triggerJob: one run now, on this node only, which no other node fires
            return;
        }
        try {
            JobDetail job = scheduler.getJobDetail(key);
            if (job != null && jobs.guardOf(job).isPresent()) {
                warnIfNodeSpecific(trigger);
            }
        }
        catch (IllegalArgumentException ex) {
            if (refusedJobs.add(key)) {
                log.error("Quartz job {} was scheduled after the start-up check but cannot be guarded, so each of its fires "
                        + "will be vetoed: {}", key, ex.getMessage());
            }
        }
        catch (SchedulerException ex) {
            log.debug("Could not check trigger {} of job {}: {}", trigger.getKey(), key, ex.toString());
        }
    }

    /** The trigger {@code Scheduler.triggerJob} makes: {@code MT_} and a random name, in the default group. */
    private static boolean isManualRun(Trigger trigger) {
        return Scheduler.DEFAULT_GROUP.equals(trigger.getKey().getGroup()) && trigger.getKey().getName().startsWith("MT_");
    }

    private static void warnIfNodeSpecific(Trigger trigger) {
        Date next = firstFireTime(trigger);
        if (next != null && nodeSpecific(trigger, next.getTime())) {
            log.warn("Trigger {} of guarded job {} fires at {}, which looks like the moment this node scheduled "
                    + "it (startNow()): its fire times will differ from the other nodes' and each node will run "
                    + "its own fires. Start it at a fixed time or one aligned to its interval, or use a cron trigger",
                    trigger.getKey(), trigger.getJobKey(), next.toInstant());
        }
    }

    private static Date firstFireTime(Trigger trigger) {
        return trigger.getNextFireTime() != null ? trigger.getNextFireTime() : trigger.getStartTime();
    }

    /**
     * A fire time on an odd millisecond, which is not on a simple trigger's interval either, is what
     * {@code startNow()} gives any trigger whose times follow its start (simple and calendar-interval
     * triggers, one-shots included); cron and daily-time-interval times fall on whole seconds.
     */
    private static boolean nodeSpecific(Trigger trigger, long fireTime) {
        if (fireTime % 1000 == 0) {
            return false;
        }
        return !(trigger instanceof SimpleTrigger simple && simple.getRepeatInterval() > 0
                && fireTime % simple.getRepeatInterval() == 0);
    }

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public void triggerFired(Trigger trigger, JobExecutionContext context) {
    }

    @Override
    public boolean vetoJobExecution(Trigger trigger, JobExecutionContext context) {
        if (stillHeldFor(context)) {
            // the same fire re-executed at the job's request: it keeps the locks it has
            return false;
        }
        Optional<JobGuard> guard;
        try {
            guard = jobs.guardOf(context.getJobDetail());
        }
        catch (RuntimeException ex) {
            // once at ERROR per job: the same reason refuses every fire
            if (refusedJobs.add(context.getJobDetail().getKey())) {
                log.error("Vetoed {}: {}", describe(context), ex.getMessage());
            }
            else {
                log.debug("Vetoed {}: {}", describe(context), ex.getMessage());
            }
            return true;
        }
        return guard.isPresent() && !take(guard.get(), context);
    }

    @Override
    public void triggerMisfired(Trigger trigger) {
    }

    @Override
    public void triggerComplete(Trigger trigger, JobExecutionContext context,
            CompletedExecutionInstruction instruction) {
        if (instruction != CompletedExecutionInstruction.RE_EXECUTE_JOB) {
            finish(context);
        }
    }

    @Override
    public void jobToBeExecuted(JobExecutionContext context) {
    }

    @Override
    public void jobExecutionVetoed(JobExecutionContext context) {
        // another listener vetoed a fire this one had taken: the fire counts as handled
        finish(context);
    }

    @Override
    public void jobWasExecuted(JobExecutionContext context, JobExecutionException jobException) {
    }

    private boolean take(JobGuard guard, JobExecutionContext context) {
        String fire = describe(context);
        boolean recovering = context.isRecovering();
        LockHandle running = null;
        String runningKey = null;
        try {
            if (guard.oneRunAtATime()) {
                LockRequest request = guard.runningLock(context);
                runningKey = context.getJobDetail().getKey() + " in " + request.tenant();
                running = keptRunningLock(runningKey);
                if (running == null) {
                    running = recovering ? lockWaiting(request, recoveryWait(guard)) : tryLock(request).orElse(null);
                }
                if (running == null) {
                    log.debug("Vetoed {}: the job is still running on another node", fire);
                    return false;
                }
            }
            if (recovering) {
                // Quartz refires a run its node's death cut short, with the fire's own time: the marker is that run's
                log.info("Let {} run: Quartz recovers it after the run that took it failed", fire);
                held.put(Thread.currentThread(),
                        new HeldFire(context, fire, running, runningKey, null));
                return true;
            }
            Optional<LockHandle> marker = tryLock(guard.fireLock(context));
            if (marker.isEmpty()) {
                log.debug("Vetoed {}: another node took this fire", fire);
                releaseQuietly(running);
                return false;
            }
            held.put(Thread.currentThread(), new HeldFire(context, fire, running, runningKey,
                    marker.get()));
            return true;
        }
        catch (RuntimeException ex) {
            releaseQuietly(running);
            log.warn("Vetoed {}: could not lock it, and a guarded job never runs unguarded: {}", fire, ex.toString());
            return false;
        }
    }

    /** Without waiting, renewed by the watchdog until released. */
    private Optional<LockHandle> tryLock(LockRequest request) {
        if (engine != null) {
            // a fresh owner, independent of any lock the job itself takes on this thread
            return engine.tryAcquire(request).map(engine::keepRenewed);
        }
        // the scoped form renews too; Quartz releases it on this same thread (such a lock is never kept
        // for a held-back fire)
        return locks.tryEnter(request);
    }

    /** Waiting at most {@code wait} (null: the service's default), renewed by the watchdog until released. */
    private LockHandle lockWaiting(LockRequest request, Duration wait) {
        LockRequest waiting = wait == null ? request : request.withWaitAtMost(wait);
        if (engine != null) {
            return engine.keepRenewed(engine.acquire(waiting));
        }
        return locks.enter(waiting);
    }

    /**
     * How long a recovered fire waits for the running lock: the failed run's lock lapses at most its
     * lease after its last renewal, which came before the failure; a little more for the store's polls.
     */
    private Duration recoveryWait(JobGuard guard) {
        Duration lease = guard.lease() != null ? guard.lease() : engine != null ? engine.settings().defaultLease() : null;
        if (lease == null) {
            return null;
        }
        Duration wait = lease.plus(RECOVERY_WAIT_MARGIN);
        return wait.compareTo(LockRequest.MAX_DURATION) > 0 ? LockRequest.MAX_DURATION : wait;
    }

    /**
     * Whether this thread still holds the locks of this very fire (a re-execution). Locks this thread
     * holds for an earlier fire are released: that run ended without Quartz telling (a listener failed).
     */
    private boolean stillHeldFor(JobExecutionContext context) {
        held.forEach((thread, fire) -> {
            if (!thread.isAlive() && held.remove(thread, fire)) {
                log.warn("Released the locks of {}: its worker thread {} is gone", fire.description(), thread.getName());
                fire.release();
            }
        });
        Thread current = Thread.currentThread();
        HeldFire fire = held.get(current);
        if (fire == null) {
            return false;
        }
        if (fire.isOf(context)) {
            return true;
        }
        held.remove(current, fire);
        log.warn("Released the locks of {}: it ended without Quartz reporting its completion (a listener failed where "
                + "the guard was added without registerWith, which adds the listener that hears of it)",
                fire.description());
        fire.release();
        return false;
    }

    /**
     * Quartz reported an error on this thread. When a listener fails, Quartz abandons the fire without the
     * completion callbacks, so its locks are freed now rather than renewed until the thread's next fire
     * (a running lock renewed that long would veto the job's fires on every node). A job that threw is
     * reported the same way just before its completion, which then finds nothing left to free. The
     * locks go even when the job had asked to be re-executed: Quartz abandons that re-execution too
     * when a listener fails, and only a JTA job's failed commit would let it come, to be vetoed by its
     * own marker (at most once).
     */
    void releaseAfterError() {
        HeldFire fire = held.get(Thread.currentThread());
        if (fire != null) {
            log.debug("Ended {} after Quartz reported an error on its worker thread", fire.description());
            finish(fire.context());
        }
    }

    private void finish(JobExecutionContext context) {
        Thread current = Thread.currentThread();
        HeldFire fire = held.get(current);
        if (fire != null && fire.isOf(context) && held.remove(current, fire)) {
            // only the engine's handles: a scoped one must be released on the thread that took it
            if (fire.running() != null && engine != null && catchUpDue(context)) {
                keepForCatchUp(fire);
            }
            else {
                fire.release();
            }
        }
    }

    /**
     * Whether a fire time of the job passed during the run. Quartz held that fire back on this node,
     * as it does for a job that disallows concurrent runs, and starts it now; the other nodes vetoed
     * it while the job ran. Were the running lock freed, another node's fire of a later time could
     * take it first and this node would veto, and so lose, the fires it held back. Every trigger of
     * the job counts but a paused one; without the scheduler, the trigger of this fire.
     */
    private static boolean catchUpDue(JobExecutionContext context) {
        Date now = new Date();
        Scheduler scheduler = context.getScheduler();
        if (scheduler != null) {
            try {
                if (scheduler.isShutdown() || scheduler.isInStandbyMode()) {
                    // no held-back fire will start: a lock kept for it would only outlast the shutdown
                    return false;
                }
                for (Trigger trigger : scheduler.getTriggersOfJob(context.getJobDetail().getKey())) {
                    // the state second: a JDBC job store reads it from its tables, and most runs end in time
                    if (passed(trigger, now) && scheduler.getTriggerState(trigger.getKey()) != Trigger.TriggerState.PAUSED) {
                        return true;
                    }
                }
                return false;
            }
            catch (SchedulerException ex) {
                log.debug("Judged only the trigger of {}: {}", describe(context), ex.toString());
            }
        }
        return passed(context.getTrigger(), now);
    }

    private static boolean passed(Trigger trigger, Date now) {
        Date next = trigger.getNextFireTime();
        return next != null && !next.after(now);
    }

    /** Keeps the running lock for this node's next fire of the job, for {@link #CATCH_UP_WAIT} at most. */
    private void keepForCatchUp(HeldFire fire) {
        fire.releaseMarker();
        HeldFire earlier = keptForCatchUp.put(fire.runningKey(), fire);
        if (earlier != null && earlier.running() != fire.running()) {
            earlier.releaseRunning();
        }
        // keyed by this keep, so that a later keep of the same handle is not released early
        Runnable expire = () -> {
            if (keptForCatchUp.remove(fire.runningKey(), fire)) {
                fire.releaseRunning();
            }
        };
        try {
            catchUpExpiry.schedule(expire, CATCH_UP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (RejectedExecutionException closed) {
            // the listener is closed: no fire will come for it
            expire.run();
        }
    }

    /**
     * Frees the running locks kept for fires Quartz held back, and stops the thread that would free
     * them later; call it once the schedulers it guards have shut down, before the lock service closes
     * (Spring does, as the bean is destroyed). A run that ends afterwards keeps nothing for later.
     */
    @Override
    public void close() {
        catchUpExpiry.shutdownNow();
        keptForCatchUp.forEach((key, fire) -> {
            if (keptForCatchUp.remove(key, fire)) {
                fire.releaseRunning();
            }
        });
    }

    /** One daemon thread, there only while a kept lock waits for its fire. */
    private static ScheduledThreadPoolExecutor catchUpExpiry() {
        ScheduledThreadPoolExecutor expiry = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "locks-quartz-catch-up");
            thread.setDaemon(true);
            return thread;
        });
        expiry.setKeepAliveTime(CATCH_UP_WAIT.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS);
        expiry.allowCoreThreadTimeOut(true);
        return expiry;
    }

    /** The running lock a run of the job left for this fire, if it is still held. */
    private LockHandle keptRunningLock(String runningKey) {
        HeldFire kept = keptForCatchUp.remove(runningKey);
        if (kept == null) {
            return null;
        }
        if (!kept.running().isValid()) {
            // says that the lease was lost, and so that another node may have run the job meanwhile
            kept.releaseRunning();
            return null;
        }
        return kept.running();
    }

    private static void releaseQuietly(LockHandle handle) {
        if (handle == null) {
            return;
        }
        LockHandles.releaseAfterWork(handle, null);
    }

    private static String describe(JobExecutionContext context) {
        return "the fire of job " + context.getJobDetail().getKey() + " scheduled at "
                + (context.getScheduledFireTime() == null ? "?" : context.getScheduledFireTime().toInstant())
                + " (trigger " + context.getTrigger().getKey() + ")";
    }
}
