package dev.locks.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

import dev.locks.LockRequest;

/**
 * What one lock annotation asks of one method, parsed once from the annotation: the lock to take
 * (as SpEL expressions still to be evaluated per call) and its lease and wait. The counterpart of
 * Spring's {@code CacheOperation}. The kinds are {@link PathLockOperation}, {@link SingletonOperation}
 * and {@link SemaphoreOperation}.
 */
public abstract class LockOperation {

    private final String annotation;

    private final String method;

    private final String tenant;

    private final Duration lease;

    private final Duration waitAtMost;

    /**
     * @param annotation the annotation's simple name, e.g. {@code PathLocked}
     * @param method the method, as {@code ClassName.method(ParamType, ...)}, for messages
     * @param tenant a SpEL expression for the tenant, or null for the default tenant
     * @param lease the lease, or null for the service's default
     * @param waitAtMost the wait, or null for the service's default
     */
    LockOperation(String annotation, String method, String tenant, Duration lease, Duration waitAtMost) {
        this.annotation = Objects.requireNonNull(annotation, "annotation");
        this.method = Objects.requireNonNull(method, "method");
        this.tenant = tenant;
        this.lease = lease;
        this.waitAtMost = waitAtMost;
    }

    /** @return the method, as {@code ClassName.method(ParamType, ...)} */
    public String method() {
        return method;
    }

    /** @return the SpEL expression for the tenant, or null for the default tenant */
    public String tenant() {
        return tenant;
    }

    /** @return the lease, or null for the service's default */
    public Duration lease() {
        return lease;
    }

    /** @return the wait, or null for the service's default */
    public Duration waitAtMost() {
        return waitAtMost;
    }

    /**
     * @return true if a busy lock means "do not run the method" rather than "wait or fail"
     */
    public boolean skipWhenBusy() {
        return false;
    }

    /**
     * @return every SpEL expression this operation evaluates per call, for validation at start-up
     */
    public List<String> expressions() {
        List<String> all = new ArrayList<>(ownExpressions());
        if (tenant != null) {
            all.add(tenant);
        }
        return all;
    }

    /** @return the SpEL expressions other than the tenant */
    abstract List<String> ownExpressions();

    /**
     * @return {@code @PathLocked on FileService.move(String, String)}, for messages
     */
    public String describe() {
        return "@" + annotation + " on " + method;
    }

    /**
     * Builds the request of one call.
     *
     * @param values the call's expression values
     * @return the request
     * @throws IllegalArgumentException if an expression fails or gives no usable value
     */
    abstract LockRequest newRequest(InvocationValues values);

    /**
     * Checks the parts that do not depend on the call (durations, names, limits) by building a request
     * with placeholder values, so that the core's own rules reject a bad annotation at start-up.
     */
    final void validate() {
        try {
            sampleRequest();
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidLockAnnotationException(describe() + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * Checks the lease against the shortest one the lock service's watchdog can keep: every
     * annotated call holds its locks under the watchdog, so a shorter lease would fail each call.
     *
     * @param shortest the lock service's shortest watched lease
     */
    final void checkLease(Duration shortest) {
        if (lease != null && lease.compareTo(shortest) < 0) {
            throw new InvalidLockAnnotationException(describe() + ": " + leaseAttribute() + " = " + lease.toMillis()
                    + "ms is shorter than the " + shortest.toMillis() + "ms the lock service's watchdog needs to renew"
                    + " it in time; give it at least " + shortest.toMillis() + "ms");
        }
    }

    /** @return the name of the annotation attribute that sets the lease */
    String leaseAttribute() {
        return "lease";
    }

    /** @return a request with placeholder values for what depends on the call */
    abstract LockRequest sampleRequest();

    /** Applies tenant, lease and wait to a request under construction. */
    LockRequest.Builder common(LockRequest.Builder builder, String tenantValue) {
        if (tenantValue != null) {
            named("tenant", () -> builder.tenant(tenantValue));
        }
        if (lease != null) {
            builder.lease(lease);
        }
        if (waitAtMost != null) {
            builder.waitAtMost(waitAtMost);
        }
        return builder;
    }

    /**
     * Builds from a value one call's expression gave, naming this annotation and the attribute if
     * the value is refused (a tenant or key too long, or with a control character).
     */
    <T> T named(String attribute, Supplier<T> step) {
        try {
            return step.get();
        }
        catch (IllegalArgumentException ex) {
            throw new IllegalArgumentException(describe() + ": the " + attribute + " expression gave a value"
                    + " the lock service refuses: " + ex.getMessage(), ex);
        }
    }

    /** The tenant of one call: null for the default, else the expression's non-blank text. */
    String tenantOf(InvocationValues values) {
        return tenant == null ? null : values.text(this, "tenant", tenant);
    }

    @Override
    public String toString() {
        return describe();
    }
}
