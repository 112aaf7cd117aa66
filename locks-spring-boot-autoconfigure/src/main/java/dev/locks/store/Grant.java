package dev.locks.store;

import java.time.Instant;

/**
 * What a store granted: enough to renew and release it.
 *
 * @param grantId the grant's secret id
 * @param owner the owner token
 * @param fencingToken the grant's fencing token
 * @param rows how many rows (paths) the store wrote, to check a renewal covered all of them
 * @param expiresAt the lease end in store time
 */
public record Grant(String grantId, String owner, long fencingToken, int rows, Instant expiresAt) {
}
