package dev.locks.autoconfigure;

import java.lang.reflect.Method;
import java.util.List;

import javax.sql.DataSource;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.ReflectionUtils;

import dev.locks.LockService;
import dev.locks.aop.AnnotationLockOperationSource;
import dev.locks.aop.BeanTargetClass;
import dev.locks.aop.LockOperation;
import dev.locks.aop.LockOperationSource;

/**
 * Fails the start when beans carry lock annotations but the application has no {@link LockService}:
 * without one the annotations are not applied, and every annotated method would run unlocked on
 * every node. That happens when no DataSource bean is visible to the auto-configuration (none at
 * all, DataSourceAutoConfiguration excluded, or one defined by an auto-configuration that runs after
 * this one). Only then are the beans read, once, after every singleton exists.
 */
final class LockServiceRequiredCheck implements SmartInitializingSingleton, BeanFactoryAware {

    private ConfigurableListableBeanFactory beanFactory;

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory instanceof ConfigurableListableBeanFactory listable ? listable : null;
    }

    @Override
    public void afterSingletonsInstantiated() {
        if (beanFactory == null || beanFactory.getBeanNamesForType(LockService.class, true, false).length > 0) {
            return;
        }
        // a fresh source without the expression evaluator: it only reads which methods are annotated
        LockOperationSource source = new AnnotationLockOperationSource(null);
        for (String name : beanFactory.getBeanNamesForType(Object.class, true, false)) {
            Class<?> userClass = BeanTargetClass.of(beanFactory, name);
            if (userClass != null && source.isCandidateClass(userClass)) {
                LockOperation annotated = firstAnnotated(source, userClass);
                if (annotated != null) {
                    throw new IllegalStateException(annotated.describe() + " (bean '" + name + "') needs a "
                            + "LockService, but the application has none, so it would run unlocked on every node. "
                            + missing() + "; or set locks.enabled=false to turn the lock annotations off deliberately");
                }
            }
        }
    }

    private String missing() {
        String[] dataSources = beanFactory.getBeanNamesForType(DataSource.class, true, false);
        if (dataSources.length == 0) {
            return "Give it a DataSource bean (the lock tables' database) or a LockService bean";
        }
        return "DataSource bean '" + dataSources[0] + "' was registered after the locks auto-configuration looked for"
                + " one (by an auto-configuration ordered after it?); define a LockService bean"
                + " (JdbcLockService.builder(dataSource)...build())";
    }

    private static LockOperation firstAnnotated(LockOperationSource source, Class<?> userClass) {
        for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass, ReflectionUtils.USER_DECLARED_METHODS)) {
            List<LockOperation> operations = source.getLockOperations(method, userClass);
            if (!operations.isEmpty()) {
                return operations.get(0);
            }
        }
        return null;
    }

}
