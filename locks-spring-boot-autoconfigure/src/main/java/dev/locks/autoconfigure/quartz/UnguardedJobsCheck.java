package dev.locks.autoconfigure.quartz;

import java.util.List;

import org.quartz.JobKey;
import org.quartz.Scheduler;
import org.quartz.SchedulerException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;

import dev.locks.LockService;
import dev.locks.quartz.ClusterSingletonTriggerListener;

/**
 * Fails the start when a Quartz job is to run once per fire across the cluster ({@code @ClusterSingleton}
 * on its class, or its key in {@code locks.quartz.jobs}) but the application has no lock service to
 * guard it with: job classes are not beans, so the annotation check of the lock annotations never
 * sees them, and every node would run every fire without a word.
 */
final class UnguardedJobsCheck implements SmartInitializingSingleton {

    private final ObjectProvider<LockService> locks;

    private final ObjectProvider<Scheduler> schedulers;

    private final List<String> configuredJobs;

    UnguardedJobsCheck(ObjectProvider<LockService> locks, ObjectProvider<Scheduler> schedulers,
            List<String> configuredJobs) {
        this.locks = locks;
        this.schedulers = schedulers;
        this.configuredJobs = List.copyOf(configuredJobs);
    }

    @Override
    public void afterSingletonsInstantiated() {
        if (locks.stream().findAny().isPresent()) {
            return;
        }
        for (Scheduler scheduler : schedulers.orderedStream().toList()) {
            try {
                JobKey job = ClusterSingletonTriggerListener.firstGuardedJob(scheduler, configuredJobs).orElse(null);
                if (job != null) {
                    throw new IllegalStateException("Quartz job " + job + " of scheduler '" + scheduler.getSchedulerName()
                            + "' is to run once per fire (@ClusterSingleton or locks.quartz.jobs), but the application"
                            + " has no LockService, so every node would run every fire. Give it a DataSource bean (the"
                            + " lock tables' database) or a LockService bean; or set locks.quartz.enabled=false to run"
                            + " its jobs unguarded deliberately");
                }
            }
            catch (SchedulerException ex) {
                throw new IllegalStateException("Could not list the jobs of a Quartz scheduler: " + ex.getMessage(), ex);
            }
        }
    }
}
