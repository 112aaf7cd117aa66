package dev.locks.aop;

import java.lang.reflect.Method;
import java.util.List;

/**
 * Tells the {@link LockInterceptor} which locks a method needs. The counterpart of Spring's
 * {@code CacheOperationSource}; {@link AnnotationLockOperationSource} reads the annotations.
 */
public interface LockOperationSource {

    /**
     * A quick filter before methods are looked at.
     *
     * @param targetClass a class
     * @return false if no method of the class can need locks
     */
    default boolean isCandidateClass(Class<?> targetClass) {
        return true;
    }

    /**
     * @param method the invoked method (possibly an interface method)
     * @param targetClass the target's class, or null
     * @return the operations in the order they are taken, outermost first; empty if the method needs
     *         no lock
     */
    List<LockOperation> getLockOperations(Method method, Class<?> targetClass);
}
