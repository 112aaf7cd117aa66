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
        setClassFilter(source::isCandidateClass);
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
