package dev.locks.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.locks.LockRequest;

/**
 * {@link dev.locks.annotation.Semaphore}: one of {@code max} permits of a named counting semaphore,
 * or, with a key expression, of the semaphore {@code name:key} (one per key value).
 */
public final class SemaphoreOperation extends LockOperation {

    private final String name;

    private final String key;

    private final int max;

    /**
     * @param method the method, for messages
     * @param name the semaphore's name
     * @param key a SpEL expression for the key, or null for one semaphore
     * @param max the permits
     * @param lease a permit's lease, or null for the default
     * @param waitAtMost the wait, or null for the default
     * @param tenant a SpEL expression for the tenant, or null
     */
    public SemaphoreOperation(String method, String name, String key, int max, Duration lease, Duration waitAtMost,
            String tenant) {
        super("Semaphore", method, tenant, lease, waitAtMost);
        this.name = Objects.requireNonNull(name, "name");
        this.key = key;
        this.max = max;
        validate();
    }

    /** @return the semaphore's name (without key) */
    public String name() {
        return name;
    }

    /** @return the key expression, or null */
    public String key() {
        return key;
    }

    /** @return the permits */
    public int max() {
        return max;
    }

    @Override
    List<String> ownExpressions() {
        List<String> own = new ArrayList<>(1);
        if (key != null) {
            own.add(key);
        }
        return own;
    }

    @Override
    LockRequest newRequest(InvocationValues values) {
        if (key == null) {
            return request(name, tenantOf(values));
        }
        String fullName = name + ":" + values.text(this, "key", key);
        LockRequest.Builder keyed = common(LockRequest.semaphore(fullName, max), tenantOf(values));
        // the name is checked as the request is built
        return named("key", keyed::build);
    }

    @Override
    LockRequest sampleRequest() {
        return request(key == null ? name : name + ":key", null);
    }

    private LockRequest request(String fullName, String tenantValue) {
        return common(LockRequest.semaphore(fullName, max), tenantValue).build();
    }
}
