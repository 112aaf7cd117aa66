package dev.locks.quartz;

import org.quartz.Scheduler;
import org.quartz.SchedulerException;
import org.quartz.Trigger;
import org.quartz.listeners.SchedulerListenerSupport;

/**
 * What the cluster-singleton guard needs to hear from a scheduler besides its trigger and job
 * callbacks: errors, after which Quartz may abandon a fire without completing it (the listener's locks
 * for it would otherwise be renewed on), and triggers scheduled after the start-up check.
 */
final class GuardSchedulerListener extends SchedulerListenerSupport {

    private final ClusterSingletonTriggerListener guard;

    private final Scheduler scheduler;

    // the guard's check has seen the scheduler's jobs: later triggers are checked as they come
    private volatile boolean checked;

    GuardSchedulerListener(ClusterSingletonTriggerListener guard, Scheduler scheduler) {
        this.guard = guard;
        this.scheduler = scheduler;
    }

    /** Whether it reports to this guard, so that registering the guard twice adds it once. */
    boolean serves(ClusterSingletonTriggerListener candidate) {
        return guard == candidate;
    }

    /** The guard checked the scheduler's jobs; triggers scheduled from now on are checked one by one. */
    void checked() {
        checked = true;
    }

    @Override
    public void schedulerError(String msg, SchedulerException cause) {
        // called on the thread the error happened on: a worker thread for the errors that cut a fire short
        guard.releaseAfterError();
    }

    @Override
    public void jobScheduled(Trigger trigger) {
        try {
            if (!checked && !scheduler.isStarted()) {
                // the guard's check of the scheduler's jobs, still to come, sees it with the rest
                return;
            }
        }
        catch (SchedulerException ex) {
            return;
        }
        guard.checkScheduledLater(scheduler, trigger);
    }
}
