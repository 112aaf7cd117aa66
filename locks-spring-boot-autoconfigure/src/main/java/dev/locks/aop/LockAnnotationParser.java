package dev.locks.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.ClassUtils;

import dev.locks.annotation.ClusterSingleton;
import dev.locks.annotation.ClusterSingleton.OnBusy;
import dev.locks.annotation.PathLocked;
import dev.locks.annotation.Semaphore;

/**
 * Turns the lock annotations of one method into {@link LockOperation}s, checking every attribute
 * that does not depend on the call: durations, names, limits, the return type.
 */
final class LockAnnotationParser {

    private final Method method;

    private final String simpleClassName;

    private final String description;

    /**
     * @param method the most specific method on the target class
     * @param targetClass the user class of the target
     */
    LockAnnotationParser(Method method, Class<?> targetClass) {
        this.method = method;
        this.simpleClassName = ClassUtils.getUserClass(targetClass).getSimpleName();
        this.description = describe(simpleClassName, method);
    }

    /** @return {@code className.method(ParamType, ...)}, for messages */
    static String describe(String className, Method method) {
        return className + "." + method.getName() + "(" + Arrays.stream(method.getParameterTypes())
                .map(Class::getSimpleName).collect(Collectors.joining(", ")) + ")";
    }

    /** @return {@code ClassName.method(ParamType, ...)} */
    String description() {
        return description;
    }

    PathLockOperation parse(PathLocked a) {
        String where = "@PathLocked on " + description;
        if (a.paths().isBlank()) {
            throw new InvalidLockAnnotationException(where + ": paths is empty; name at least one path expression,"
                    + " e.g. \"#path\" or \"'/reports'\"");
        }
        List<String> paths;
        try {
            paths = ExpressionList.split(a.paths());
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidLockAnnotationException(where + ": paths \"" + a.paths() + "\" cannot be split into "
                    + "expressions: " + ex.getMessage(), ex);
        }
        for (String path : paths) {
            if (path.isEmpty()) {
                throw new InvalidLockAnnotationException(where + ": paths \"" + a.paths()
                        + "\" has an empty expression; separate path expressions with single commas");
            }
        }
        return new PathLockOperation(description, paths, a.mode(), expression(a.tenant()),
                duration(where, "lease", a.lease()), duration(where, "waitAtMost", a.waitAtMost()));
    }

    SingletonOperation parse(ClusterSingleton a) {
        String where = "@ClusterSingleton on " + description;
        if (a.onBusy() == OnBusy.SKIP && method.getReturnType().isPrimitive() && method.getReturnType() != void.class) {
            throw new InvalidLockAnnotationException(where + ": onBusy = SKIP cannot be used on a method returning "
                    + method.getReturnType() + ": a skipped call has no value to return. Return void, a reference type"
                    + " or Optional, or use onBusy = WAIT or FAIL");
        }
        String name = a.name().isBlank() ? defaultName() : a.name().strip();
        return new SingletonOperation(description, name, duration(where, "lockAtMostFor", a.lockAtMostFor()),
                duration(where, "lockAtLeastFor", a.lockAtLeastFor()), a.onBusy(),
                duration(where, "waitAtMost", a.waitAtMost()), expression(a.tenant()));
    }

    SemaphoreOperation parse(Semaphore a) {
        String where = "@Semaphore on " + description;
        String name = a.name().isBlank() ? defaultName() : a.name().strip();
        return new SemaphoreOperation(description, name, expression(a.key()), a.max(),
                duration(where, "lease", a.lease()), duration(where, "waitAtMost", a.waitAtMost()),
                expression(a.tenant()));
    }

    /** {@code ClassName.methodName}: one singleton or semaphore per method unless named. */
    private String defaultName() {
        return simpleClassName + "." + method.getName();
    }

    private static String expression(String attribute) {
        return attribute == null || attribute.isBlank() ? null : attribute.strip();
    }

    private static Duration duration(String where, String attribute, String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        try {
            return DurationStyle.detectAndParse(value.strip());
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidLockAnnotationException(where + ": " + attribute + " = \"" + value
                    + "\" is not a duration; write e.g. \"30s\", \"500ms\", \"10m\" or \"PT1H\"", ex);
        }
    }
}
