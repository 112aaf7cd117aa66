package dev.locks.store;

import java.util.List;
import java.util.Optional;

import dev.locks.LockHolder;

/**
 * The outcome of {@link LockStore#tryGrant}: a grant, or the conflicting holders.
 *
 * @param grant the grant, or null when busy
 * @param conflicts the holders in the way when busy (at most a few), empty when granted
 */
public record GrantResult(Grant grant, List<LockHolder> conflicts) {

    /**
     * @param grant what was granted
     * @return a granted result
     */
    public static GrantResult granted(Grant grant) {
        return new GrantResult(grant, List.of());
    }

    /**
     * @param conflicts who is in the way
     * @return a busy result
     */
    public static GrantResult busy(List<LockHolder> conflicts) {
        return new GrantResult(null, List.copyOf(conflicts));
    }

    /**
     * @return the grant if there is one
     */
    public Optional<Grant> granted() {
        return Optional.ofNullable(grant);
    }
}
