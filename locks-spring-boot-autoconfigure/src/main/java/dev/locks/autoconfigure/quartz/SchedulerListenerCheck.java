package dev.locks.autoconfigure.quartz;

import org.quartz.ListenerManager;
import org.quartz.Scheduler;
import org.quartz.SchedulerException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;

import dev.locks.quartz.ClusterSingletonTriggerListener;

/**
 * Before the schedulers start, makes sure every Quartz scheduler of the context has the cluster-singleton
 * listener (a scheduler the application built itself gets no Boot customizer) and checks the guarded
 * jobs, so that a guard that is missing or misconfigured shows at start-up rather than as a duplicate
 * run. A scheduler with a clustered job store runs each fire once by itself: it is left unguarded.
 */
class SchedulerListenerCheck implements SmartInitializingSingleton {

    private static final Logger log = LoggerFactory.getLogger(SchedulerListenerCheck.class);

    private final ObjectProvider<Scheduler> schedulers;

    private final ClusterSingletonTriggerListener listener;

    SchedulerListenerCheck(ObjectProvider<Scheduler> schedulers, ClusterSingletonTriggerListener listener) {
        this.schedulers = schedulers;
        this.listener = listener;
    }

    @Override
    public void afterSingletonsInstantiated() {
        schedulers.orderedStream().forEach(this::check);
    }

    private void check(Scheduler scheduler) {
        try {
            ListenerManager listeners = scheduler.getListenerManager();
            String name = ClusterSingletonTriggerListener.NAME;
            if (ClusterSingletonTriggerListener.hasClusteredJobStore(scheduler)) {
                // Boot's customizer added it before the job store was known
                listeners.removeTriggerListener(name);
                listeners.removeJobListener(name);
            }
            else {
                boolean missing = listeners.getTriggerListener(name) != listener
                        || listeners.getJobListener(name) != listener;
                // also adds the scheduler listener, which needs the scheduler and so cannot come from a customizer
                listener.registerWith(scheduler);
                if (missing) {
                    log.info("Added the cluster-singleton listener to Quartz scheduler '{}' (it was built without Spring "
                            + "Boot's customizers, or a customizer replaced the global listeners)",
                            scheduler.getSchedulerName());
                }
            }
            listener.checkJobs(scheduler);
        }
        catch (SchedulerException ex) {
            throw new IllegalStateException("Could not guard the jobs of a Quartz scheduler: " + ex.getMessage(), ex);
        }
    }
}
