package dev.locks.actuate;

import java.util.List;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;

import dev.locks.LockHolder;
import dev.locks.actuate.LocksDescriptor.PathLock;
import dev.locks.actuate.LocksDescriptor.SemaphoreUsage;
import dev.locks.actuate.LocksDescriptor.SingletonLock;

/**
 * What the {@code locks} endpoint answers to a force-release: the whole grant of the lock asked
 * for, every row of it, in the listing's shape.
 *
 * @param lockId the lock asked for
 * @param released true if a live grant was deleted; false if there was none (already released or expired)
 * @param paths the path locks released: every path of the grant, not only {@code lockId}
 * @param singletons the singleton released
 * @param semaphores the semaphore permit released
 */
public record ForceReleaseDescriptor(long lockId, boolean released, List<PathLock> paths,
        List<SingletonLock> singletons, List<SemaphoreUsage> semaphores) implements OperationResponseBody {

    /**
     * @param lockId the lock asked for
     * @param released the rows the store deleted, empty if none
     * @return the answer
     */
    static ForceReleaseDescriptor of(long lockId, List<LockHolder> released) {
        LocksDescriptor.Grants grants = LocksDescriptor.Grants.of(released);
        return new ForceReleaseDescriptor(lockId, !released.isEmpty(), grants.paths(), grants.singletons(),
                grants.semaphores());
    }
}
