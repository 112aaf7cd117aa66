package dev.locks.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

import org.springframework.util.ObjectUtils;

import dev.locks.InvalidLockPathException;
import dev.locks.LockMode;
import dev.locks.LockRequest;

/**
 * {@link dev.locks.annotation.PathLocked}: hierarchical path locks whose paths come from SpEL
 * expressions. Each expression may give a path, an array or collection of paths, or an object whose
 * {@code toString()} is a path; all paths of one call form one all-or-nothing request.
 */
public final class PathLockOperation extends LockOperation {

    private final List<String> paths;

    private final LockMode mode;

    /**
     * @param method the method, for messages
     * @param paths the path expressions, one per element
     * @param mode exclusive or shared
     * @param tenant a SpEL expression for the tenant, or null
     * @param lease the lease, or null for the default
     * @param waitAtMost the wait, or null for the default
     */
    public PathLockOperation(String method, List<String> paths, LockMode mode, String tenant, Duration lease,
            Duration waitAtMost) {
        super("PathLocked", method, tenant, lease, waitAtMost);
        this.paths = List.copyOf(paths);
        this.mode = Objects.requireNonNull(mode, "mode");
        if (this.paths.isEmpty()) {
            throw new InvalidLockAnnotationException(describe() + ": paths names no expression");
        }
        validate();
    }

    /** @return the path expressions */
    public List<String> paths() {
        return paths;
    }

    /** @return the mode */
    public LockMode mode() {
        return mode;
    }

    @Override
    List<String> ownExpressions() {
        return paths;
    }

    @Override
    LockRequest newRequest(InvocationValues values) {
        List<String> resolved = new ArrayList<>();
        for (String expression : paths) {
            addPaths(values.value(this, "paths", expression), expression, resolved);
        }
        return request(resolved, tenantOf(values));
    }

    @Override
    LockRequest sampleRequest() {
        return request(List.of("/"), null);
    }

    private LockRequest request(List<String> resolved, String tenantValue) {
        return common(LockRequest.paths(resolved).mode(mode), tenantValue).build();
    }

    private void addPaths(Object value, String expression, List<String> out) {
        if (value == null) {
            throw invalid(null, expression, "gave null");
        }
        if (value.getClass().isArray()) {
            Object[] elements = ObjectUtils.toObjectArray(value);
            if (elements.length == 0) {
                throw invalid(null, expression, "gave an empty array");
            }
            for (Object element : elements) {
                out.add(element(element, expression));
            }
        }
        else if (value instanceof Collection<?> collection) {
            if (collection.isEmpty()) {
                throw invalid(null, expression, "gave an empty collection");
            }
            for (Object element : collection) {
                out.add(element(element, expression));
            }
        }
        else {
            out.add(element(value, expression));
        }
    }

    private String element(Object value, String expression) {
        if (value == null) {
            throw invalid(null, expression, "gave a null path");
        }
        String path = value.toString();
        if (path == null || path.isBlank()) {
            throw invalid(path, expression, "gave a blank path");
        }
        return path;
    }

    private InvalidLockPathException invalid(String path, String expression, String what) {
        return new InvalidLockPathException(path, "expression '" + expression + "' of " + describe() + " " + what
                + "; a lock annotation never runs its method unlocked");
    }
}
