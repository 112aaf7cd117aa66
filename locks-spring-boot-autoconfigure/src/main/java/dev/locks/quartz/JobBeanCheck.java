package dev.locks.quartz;

import org.quartz.Job;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

import dev.locks.aop.BeanTargetClass;

/**
 * Fails the start when a bean of the context implements {@link Job} and carries lock annotations
 * that would do nothing. The lock annotations' proxy leaves Quartz jobs alone, so that
 * {@link ClusterSingletonTriggerListener} takes a job's {@code @ClusterSingleton} once per fire; a
 * bean that is also called as a service would run its {@code @PathLocked} or {@code @Semaphore}
 * methods unlocked. The trigger listener checks the jobs of the schedulers; this checks the beans,
 * scheduled or not, and runs whether or not the listener is on.
 */
public final class JobBeanCheck implements SmartInitializingSingleton, BeanFactoryAware {

    private ConfigurableListableBeanFactory beanFactory;

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory instanceof ConfigurableListableBeanFactory listable ? listable : null;
    }

    @Override
    public void afterSingletonsInstantiated() {
        if (beanFactory == null) {
            return;
        }
        // no eager initialisation: a lazy or prototype job bean is judged by its type alone
        for (String name : beanFactory.getBeanNamesForType(Job.class, true, false)) {
            Class<?> userClass = BeanTargetClass.of(beanFactory, name);
            if (userClass != null) {
                GuardedJobs.checkNoProxyAnnotations(userClass, "bean '" + name + "' (" + userClass.getName()
                        + "), a Quartz job,");
            }
        }
    }
}
