package dev.locks.aop;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import dev.locks.LockRequest;
import dev.locks.annotation.ClusterSingleton.OnBusy;

/**
 * {@link dev.locks.annotation.ClusterSingleton}: a named lock that lets one node of the cluster run
 * the method at a time. The lease is {@code lockAtMostFor}; {@code lockAtLeastFor} keeps the lock
 * after an early end; {@link OnBusy} says whether a busy singleton skips, waits or fails.
 */
public final class SingletonOperation extends LockOperation {

    private final String name;

    private final Duration lockAtLeastFor;

    private final OnBusy onBusy;

    /**
     * @param method the method, for messages
     * @param name the singleton's name
     * @param lockAtMostFor the lease, or null for the default
     * @param lockAtLeastFor how long the lock outlives an early end, or null for not at all
     * @param onBusy what a busy singleton means
     * @param waitAtMost for {@link OnBusy#WAIT}: the wait, or null for the default; must be null otherwise
     * @param tenant a SpEL expression for the tenant, or null
     */
    public SingletonOperation(String method, String name, Duration lockAtMostFor, Duration lockAtLeastFor,
            OnBusy onBusy, Duration waitAtMost, String tenant) {
        super("ClusterSingleton", method, tenant, lockAtMostFor, onBusy == OnBusy.FAIL ? Duration.ZERO : waitAtMost);
        this.name = Objects.requireNonNull(name, "name");
        this.lockAtLeastFor = lockAtLeastFor;
        this.onBusy = Objects.requireNonNull(onBusy, "onBusy");
        if (waitAtMost != null && onBusy != OnBusy.WAIT) {
            throw new InvalidLockAnnotationException(describe() + ": waitAtMost applies only to onBusy = WAIT, not "
                    + onBusy);
        }
        validate();
    }

    /** @return the singleton's name */
    public String name() {
        return name;
    }

    /** @return how long the lock outlives an early end, or null */
    public Duration lockAtLeastFor() {
        return lockAtLeastFor;
    }

    /** @return what a busy singleton means */
    public OnBusy onBusy() {
        return onBusy;
    }

    @Override
    public boolean skipWhenBusy() {
        return onBusy == OnBusy.SKIP;
    }

    @Override
    List<String> ownExpressions() {
        return List.of();
    }

    @Override
    LockRequest newRequest(InvocationValues values) {
        return request(tenantOf(values));
    }

    @Override
    LockRequest sampleRequest() {
        return request(null);
    }

    private LockRequest request(String tenantValue) {
        LockRequest.Builder builder = LockRequest.singleton(name);
        if (lockAtLeastFor != null) {
            builder.lockAtLeastFor(lockAtLeastFor);
        }
        return common(builder, tenantValue).build();
    }

    @Override
    String leaseAttribute() {
        return "lockAtMostFor";
    }
}
