package dev.locks.actuate;

import java.security.Principal;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;

import dev.locks.DefaultLockService;
import dev.locks.HolderQuery;
import dev.locks.LockHolder;
import dev.locks.LockKind;
import dev.locks.MessageText;
import dev.locks.store.LockStore;

/**
 * The {@code locks} actuator endpoint: who holds what across the cluster, and force-release for a
 * holder known to be stuck.
 * <ul>
 * <li>{@code GET /actuator/locks?tenant=&path=&node=&kind=&limit=}: live grants, optionally filtered
 * ({@code path} selects a path and its subtree, or a singleton's or semaphore's exact name);</li>
 * <li>{@code GET /actuator/locks/{kind}/{name...}?tenant=}: the holders of one path (every grant
 * overlapping it: the path, its ancestors and its subtree), singleton or semaphore, e.g.
 * {@code /actuator/locks/path/Shared/marketing};</li>
 * <li>{@code DELETE /actuator/locks/{lockId}}: force-release of the whole grant holding that lock,
 * answering every lock it freed. The endpoint's default access is
 * read-only, so this operation exists only when the application sets
 * {@code management.endpoint.locks.access=unrestricted}; secure it like any other write operation.</li>
 * </ul>
 * Like every endpoint but {@code health}, it is reachable only once exposed
 * ({@code management.endpoints.web.exposure.include=locks}).
 */
@Endpoint(id = "locks", defaultAccess = Access.READ_ONLY)
public class LocksEndpoint {

    private static final int DEFAULT_LIMIT = 1000;

    /** The store reads one holder more than this, so that a cut list shows as truncated. */
    private static final int MAX_LIMIT = LockStore.MAX_HOLDERS;

    private final DefaultLockService locks;

    /**
     * @param locks the lock service whose store is listed
     */
    public LocksEndpoint(DefaultLockService locks) {
        this.locks = Objects.requireNonNull(locks, "locks");
    }

    /**
     * Live grants of the cluster matching every filter given.
     *
     * @param tenant only this tenant
     * @param path only this path and its subtree; for singletons and semaphores, this exact name
     * @param node only grants of this node
     * @param kind only {@code path}, {@code singleton} or {@code semaphore}
     * @param limit the most grants to show (default 1000, at most 10000)
     * @return the grants and this node's counts
     */
    @ReadOperation
    public LocksDescriptor locks(@Nullable String tenant, @Nullable String path, @Nullable String node,
            @Nullable String kind, @Nullable Integer limit) {
        int max = limitOf(limit);
        List<LockHolder> holders = request(() -> locks.list(new HolderQuery(kindOf(kind), tenant, path, node, max + 1, true)));
        return describe(holders, max);
    }

    /**
     * The holders of one path, singleton or semaphore.
     *
     * @param kind {@code path}, {@code singleton} or {@code semaphore}
     * @param name the path's segments, or the name (a name containing {@code /} spans several segments)
     * @param tenant the tenant; the default tenant if absent
     * @param limit the most holders to show (default 1000, at most 10000)
     * @return the holders and this node's counts
     */
    @ReadOperation
    public LocksDescriptor holders(@Selector String kind, @Selector(match = Match.ALL_REMAINING) String[] name,
            @Nullable String tenant, @Nullable Integer limit) {
        LockKind k = kindOf(kind);
        int max = limitOf(limit);
        String joined = String.join("/", Arrays.asList(name));
        List<LockHolder> holders = request(() -> k == LockKind.PATH ? locks.holders(tenant, "/" + joined)
                : locks.holders(k, tenant, joined));
        return describe(holders, max);
    }

    /**
     * Force-releases the whole grant that holds {@code lockId}, whoever owns it: waiters may take it
     * at once, and the former owner's handle turns invalid at its next renewal. Every row of the
     * grant goes (a move's source and destination alike) and is logged at WARN with the caller's
     * name, since the rows are gone afterwards.
     *
     * @param lockId a {@code lockId} from the listing
     * @param caller who asks, for the log
     * @return whether a live grant was deleted, and every lock it held
     */
    @DeleteOperation
    public ForceReleaseDescriptor release(@Selector long lockId, SecurityContext caller) {
        Principal principal = caller.getPrincipal();
        // a name is the caller's text: printed escaped, so that it cannot forge log lines
        String requestedBy = principal == null ? "an unauthenticated caller" : MessageText.quoted(principal.getName());
        return ForceReleaseDescriptor.of(lockId, locks.forceReleaseGrant(lockId, requestedBy + " through the actuator"));
    }

    private LocksDescriptor describe(List<LockHolder> holders, int max) {
        boolean truncated = holders.size() > max;
        List<LockHolder> shown = truncated ? holders.subList(0, max) : holders;
        return LocksDescriptor.of(locks.settings().nodeId(), locks.heldCount(), locks.waitingCount(), shown, truncated);
    }

    private static int limitOf(@Nullable Integer limit) {
        if (limit == null) {
            return DEFAULT_LIMIT;
        }
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new InvalidEndpointRequestException("limit must be between 1 and " + MAX_LIMIT + ", was " + limit,
                    "Invalid limit");
        }
        return limit;
    }

    private static @Nullable LockKind kindOf(@Nullable String kind) {
        if (kind == null || kind.isBlank()) {
            return null;
        }
        try {
            return LockKind.valueOf(kind.strip().toUpperCase(Locale.ROOT));
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidEndpointRequestException("kind must be path, singleton or semaphore, was '" + kind + "'",
                    "Invalid kind");
        }
    }

    /** Bad paths and names are the caller's mistake (400), not a failure of the endpoint. */
    private static List<LockHolder> request(Supplier<List<LockHolder>> query) {
        try {
            return query.get();
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidEndpointRequestException(ex.getMessage(), "Invalid lock path or name");
        }
    }
}
