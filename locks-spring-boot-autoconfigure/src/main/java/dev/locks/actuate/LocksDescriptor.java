package dev.locks.actuate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;

import dev.locks.LockHolder;

/**
 * What the {@code locks} endpoint answers: live grants of the cluster, split by kind, and this
 * node's own counts. Times are the database's, as ISO-8601 instants.
 *
 * @param node this node's id
 * @param heldByThisNode lock handles this node holds
 * @param waitingOnThisNode requests of this node waiting now
 * @param paths path locks
 * @param singletons cluster singletons
 * @param semaphores semaphores with at least one permit in use, one entry per tenant and name
 * @param waiters requests of the whole cluster waiting in the queue, first come first served
 * @param truncated true if more grants matched than the limit allowed to show
 */
public record LocksDescriptor(String node, int heldByThisNode, int waitingOnThisNode, List<PathLock> paths,
        List<SingletonLock> singletons, List<SemaphoreUsage> semaphores, List<Waiter> waiters, boolean truncated)
        implements OperationResponseBody {

    /**
     * Sorts grants into the three kinds, grouping semaphore permits by tenant and name.
     *
     * @param node this node's id
     * @param held handles this node holds
     * @param waiting requests of this node waiting
     * @param holders the grants, oldest first
     * @param truncated whether more grants matched
     * @return the descriptor
     */
    static LocksDescriptor of(String node, int held, int waiting, List<LockHolder> holders, boolean truncated) {
        List<LockHolder> grants = new ArrayList<>();
        List<Waiter> waiters = new ArrayList<>();
        for (LockHolder h : holders) {
            if (h.waiting()) {
                waiters.add(new Waiter(h.lockId(), h.kind().name().toLowerCase(Locale.ROOT), h.tenant(), h.path(),
                        h.mode().name().toLowerCase(Locale.ROOT), h.node(), h.thread(), String.valueOf(h.since()),
                        h.ownerHint()));
            }
            else {
                grants.add(h);
            }
        }
        Grants sorted = Grants.of(grants);
        return new LocksDescriptor(node, held, waiting, sorted.paths(), sorted.singletons(), sorted.semaphores(),
                waiters, truncated);
    }

    /** Grants sorted into the three kinds, as the listings and the force-release answer show them. */
    record Grants(List<PathLock> paths, List<SingletonLock> singletons, List<SemaphoreUsage> semaphores) {

        /** Sorts grants (no waiting rows) by kind, grouping semaphore permits by tenant and name. */
        static Grants of(List<LockHolder> grants) {
            List<PathLock> paths = new ArrayList<>();
            List<SingletonLock> singletons = new ArrayList<>();
            Map<List<String>, List<Permit>> permits = new LinkedHashMap<>();
            for (LockHolder h : grants) {
                switch (h.kind()) {
                    case PATH -> paths.add(new PathLock(h.lockId(), h.tenant(), h.path(),
                            h.mode().name().toLowerCase(Locale.ROOT), h.node(), h.thread(), String.valueOf(h.since()),
                            String.valueOf(h.expiresAt()), h.ownerHint()));
                    case SINGLETON -> singletons.add(new SingletonLock(h.lockId(), h.tenant(), h.path(), h.node(),
                            h.thread(), String.valueOf(h.since()), String.valueOf(h.expiresAt()), h.ownerHint()));
                    case SEMAPHORE -> permits.computeIfAbsent(List.of(h.tenant(), h.path()), k -> new ArrayList<>())
                            .add(new Permit(h.lockId(), h.node(), h.thread(), String.valueOf(h.since()),
                                    String.valueOf(h.expiresAt()), h.ownerHint()));
                }
            }
            List<SemaphoreUsage> semaphores = new ArrayList<>();
            permits.forEach((key, list) -> semaphores.add(new SemaphoreUsage(key.get(0), key.get(1), list.size(), list)));
            return new Grants(paths, singletons, semaphores);
        }
    }

    /**
     * A path lock.
     *
     * @param lockId the id to force-release it with, also its fencing token
     * @param tenant the tenant
     * @param path the locked path (its subtree is covered too)
     * @param mode {@code exclusive} or {@code shared}
     * @param node the node holding it
     * @param thread the thread that took it
     * @param since when it was granted
     * @param expiresAt when its lease ends unless renewed
     * @param owner the first characters of the owner token, to tell owners apart
     */
    public record PathLock(long lockId, String tenant, String path, String mode, String node, String thread,
            String since, String expiresAt, String owner) {
    }

    /**
     * A cluster singleton.
     *
     * @param lockId the id to force-release it with
     * @param tenant the tenant
     * @param name the singleton's name
     * @param node the node holding it
     * @param thread the thread that took it
     * @param since when it was granted
     * @param expiresAt when its lease ends unless renewed
     * @param owner the first characters of the owner token
     */
    public record SingletonLock(long lockId, String tenant, String name, String node, String thread, String since,
            String expiresAt, String owner) {
    }

    /**
     * A semaphore's permits in use.
     *
     * @param tenant the tenant
     * @param name the semaphore's name
     * @param permitsInUse how many permits are held
     * @param permits the held permits, oldest first
     */
    public record SemaphoreUsage(String tenant, String name, int permitsInUse, List<Permit> permits) {
    }

    /**
     * One held permit of a semaphore.
     *
     * @param lockId the id to force-release it with
     * @param node the node holding it
     * @param thread the thread that took it
     * @param since when it was granted
     * @param expiresAt when its lease ends unless renewed
     * @param owner the first characters of the owner token
     */
    public record Permit(long lockId, String node, String thread, String since, String expiresAt, String owner) {
    }

    /**
     * A request waiting in the queue: it blocks later conflicting requests.
     *
     * @param ticket its place in the queue (lower is served first)
     * @param kind {@code path}, {@code singleton} or {@code semaphore}
     * @param tenant the tenant
     * @param path the path or name it waits for
     * @param mode {@code exclusive} or {@code shared}
     * @param node the waiting node
     * @param thread the waiting thread
     * @param since when it started waiting
     * @param owner the first characters of the owner token
     */
    public record Waiter(long ticket, String kind, String tenant, String path, String mode, String node,
            String thread, String since, String owner) {
    }
}
