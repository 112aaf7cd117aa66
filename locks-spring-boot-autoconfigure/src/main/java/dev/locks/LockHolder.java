package dev.locks;

import java.time.Instant;

/**
 * One live grant as the store sees it, for timeouts, {@link LockService#holders} and operators.
 * Times are the database's. The owner token is never exposed; {@code ownerHint} is its first
 * eight characters, enough to tell owners apart in a log.
 *
 * @param lockId the store's id of this row (for force-release), also the path's fencing token
 * @param kind what is locked
 * @param tenant the tenant
 * @param path the path, singleton name or semaphore name
 * @param mode the mode
 * @param node the node that holds it
 * @param thread the thread that took it
 * @param since when it was granted
 * @param expiresAt when the lease ends unless renewed
 * @param ownerHint a prefix of the owner token
 * @param waiting true for a request still waiting (it blocks later conflicting requests), false for a grant
 */
public record LockHolder(long lockId, LockKind kind, String tenant, String path, LockMode mode, String node,
        String thread, Instant since, Instant expiresAt, String ownerHint, boolean waiting) {

    /**
     * @return a one-line description for logs and exception messages
     */
    public String describe() {
        String what = switch (kind) {
            case PATH -> mode + " " + MessageText.of(path);
            case SINGLETON -> "singleton " + MessageText.quoted(path);
            case SEMAPHORE -> "a permit of " + MessageText.quoted(path);
        };
        return (waiting ? "a waiting request for " : "") + what + " (tenant " + MessageText.quoted(tenant) + ", node " + node + ", thread " + thread + ", since " + since
                + ", lease until " + expiresAt + ", token " + lockId + ")";
    }
}
