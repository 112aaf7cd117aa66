package dev.locks.autoconfigure.quartz;

import org.springframework.boot.quartz.autoconfigure.SchedulerFactoryBeanCustomizer;
import org.springframework.core.Ordered;
import org.springframework.scheduling.quartz.SchedulerFactoryBean;

import dev.locks.quartz.ClusterSingletonTriggerListener;

/**
 * Makes the cluster-singleton listener a global trigger and job listener of the scheduler Spring Boot
 * builds.
 *
 * <p>{@link SchedulerFactoryBean} replaces, rather than adds to, the global listeners on each call, so
 * this customizer runs first: an application customizer that sets its own global listeners afterwards
 * keeps them, and {@link SchedulerListenerCheck} then adds this listener back to the scheduler.
 */
class ClusterSingletonSchedulerCustomizer implements SchedulerFactoryBeanCustomizer, Ordered {

    private final ClusterSingletonTriggerListener listener;

    ClusterSingletonSchedulerCustomizer(ClusterSingletonTriggerListener listener) {
        this.listener = listener;
    }

    @Override
    public void customize(SchedulerFactoryBean schedulerFactoryBean) {
        schedulerFactoryBean.setGlobalTriggerListeners(listener);
        schedulerFactoryBean.setGlobalJobListeners(listener);
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
