package dev.locks.aop;

import java.lang.reflect.Method;

import org.springframework.aop.support.StaticMethodMatcherPointcut;

/**
 * Matches the methods for which the {@link LockOperationSource} has operations. Asking it is what
 * makes the source check every annotated method of a bean when the bean is proxied.
 */
final class LockOperationSourcePointcut extends StaticMethodMatcherPointcut {

    private final LockOperationSource source;

    LockOperationSourcePointcut(LockOperationSource source) {
        this.source = source;
        setClassFilter(type -> source.isCandidateClass(type) && !isQuartzJob(type));
    }

    // A Quartz job with @ClusterSingleton is guarded per scheduled fire by the Quartz trigger listener.
    // Spring's job factory builds jobs with createBean, which would otherwise proxy them for a second lock.
    // by name, through sub-interfaces such as InterruptableJob too: Quartz is optional
    private static boolean isQuartzJob(Class<?> type) {
        return AnnotationLockOperationSource.isA(type, "org.quartz.Job");
    }

    @Override
    public boolean matches(Method method, Class<?> targetClass) {
        return !source.getLockOperations(method, targetClass).isEmpty();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof LockOperationSourcePointcut that && that.source.equals(source);
    }

    @Override
    public int hashCode() {
        return LockOperationSourcePointcut.class.hashCode();
    }

    @Override
    public String toString() {
        return getClass().getName() + ": " + source;
    }
}
