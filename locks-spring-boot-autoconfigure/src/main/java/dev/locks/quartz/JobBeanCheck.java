package dev.locks.quartz;

import org.quartz.Job;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.util.ClassUtils;

/**
 * Fails the start when a bean of the context implements {@link Job} and carries lock annotations
 * that would do nothing. The lock annotations' proxy leaves Quartz jobs alone, so that
 * {@link ClusterSingletonTriggerListener} takes a job's {@code @ClusterSingleton} once per fire; a
 * bean that is also called as a service would run its {@code @PathLocked} or {@code @Semaphore}
 * methods unlocked. The trigger listener checks the jobs of the schedulers; this checks the beans,
 * scheduled or not, and runs whether or not the listener is on.
 */
public final class JobBeanCheck implements SmartInitializingSingleton, BeanFactoryAware {

    private ListableBeanFactory beanFactory;

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory instanceof ListableBeanFactory listable ? listable : null;
    }

    @Override
    public void afterSingletonsInstantiated() {
        if (beanFactory == null) {
            return;
        }
        // no eager initialisation: a lazy or prototype job bean is judged by its type alone
        for (String name : beanFactory.getBeanNamesForType(Job.class, true, false)) {
            Class<?> type = beanFactory.getType(name, false);
            if (type != null) {
                Class<?> userClass = ClassUtils.getUserClass(type);
                GuardedJobs.checkNoProxyAnnotations(userClass, "bean '" + name + "' (" + userClass.getName()
                        + "), a Quartz job,");
            }
        }
    }
}
