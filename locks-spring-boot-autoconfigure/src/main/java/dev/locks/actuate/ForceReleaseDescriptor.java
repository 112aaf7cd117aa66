package dev.locks.actuate;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;

/**
 * What the {@code locks} endpoint answers to a force-release.
 *
 * @param lockId the lock asked for
 * @param released true if a live grant was deleted; false if there was none (already released or expired)
 */
public record ForceReleaseDescriptor(long lockId, boolean released) implements OperationResponseBody {
}
