package dev.locks.aop;

import java.lang.reflect.Method;

/**
 * The root object of lock expressions: {@code #root.method}, {@code #root.methodName},
 * {@code #root.args}, {@code #root.target} and {@code #root.targetClass}, as in Spring's cache
 * expressions.
 */
public class LockExpressionRootObject {

    private final Method method;

    private final Object[] args;

    private final Object target;

    private final Class<?> targetClass;

    /**
     * @param method the invoked method
     * @param args its arguments
     * @param target the target bean (not the proxy)
     * @param targetClass the target's class
     */
    public LockExpressionRootObject(Method method, Object[] args, Object target, Class<?> targetClass) {
        this.method = method;
        this.args = args;
        this.target = target;
        this.targetClass = targetClass;
    }

    /** @return the invoked method */
    public Method getMethod() {
        return method;
    }

    /** @return the invoked method's name */
    public String getMethodName() {
        return method.getName();
    }

    /** @return the arguments */
    public Object[] getArgs() {
        return args;
    }

    /** @return the target bean (not the proxy) */
    public Object getTarget() {
        return target;
    }

    /** @return the target's class */
    public Class<?> getTargetClass() {
        return targetClass;
    }
}
