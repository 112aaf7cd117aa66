package dev.locks;

/**
 * A filter over live grants, for operators (the actuator endpoint, dashboards). Every field is
 * optional (null = any).
 *
 * @param kind what is locked
 * @param tenant the tenant
 * @param pathPrefix a path: the path itself and its subtree (for singletons and semaphores: the exact name;
 *        with no kind, both: path locks in the subtree and singletons and semaphores of that name)
 * @param node the node that holds them
 * @param limit the most rows to return
 * @param includeWaiting also list requests waiting in the queue ({@link LockHolder#waiting()} true)
 */
public record HolderQuery(LockKind kind, String tenant, String pathPrefix, String node, int limit,
        boolean includeWaiting) {

    /** Checks the limit. */
    public HolderQuery {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be positive, was " + limit);
        }
    }

    /**
     * A filter over grants only.
     *
     * @param kind what is locked
     * @param tenant the tenant
     * @param pathPrefix a path and its subtree, or a name
     * @param node the node
     * @param limit the most rows
     */
    public HolderQuery(LockKind kind, String tenant, String pathPrefix, String node, int limit) {
        this(kind, tenant, pathPrefix, node, limit, false);
    }

    /** @return every live grant, up to 1000 */
    public static HolderQuery all() {
        return new HolderQuery(null, null, null, null, 1000);
    }
}
