package dev.locks.torture;

import java.util.List;

/**
 * One critical section as a worker logged it: who held what, with which token, from when to when
 * in database time, and what became of its write.
 *
 * @param id unique across the run, e.g. {@code w1-42}
 * @param node the worker
 * @param owner the lock owner as the worker knows it: one per scope or per plain handle
 * @param kind {@code P} path, {@code J} singleton, {@code M} semaphore permit
 * @param tenant the tenant
 * @param mode {@code X} or {@code S}
 * @param paths the paths (or the one singleton or semaphore name)
 * @param token the handle's fencing token
 * @param reentered true if the handle re-entered a lock the scope already held (its token is the newest of the enclosing grants')
 * @param record the shared record the section read or wrote, or {@code -}
 * @param permits for semaphores, the maximum
 * @param inMicros database time after the grant, in microseconds since the epoch
 * @param outMicros database time before the release; {@link Long#MAX_VALUE} while unknown
 * @param ended whether the worker logged the end (false: it died inside)
 * @param valid whether the handle was still valid after {@code outMicros} was read
 * @param write what became of the section's fenced write
 * @param read1 the record's fenced value at the start (readers), or -1
 * @param read2 the record's fenced value at the end (readers), or -1
 */
record Section(String id, String node, String owner, char kind, String tenant, char mode, List<String> paths,
        long token, boolean reentered, String record, int permits, long inMicros, long outMicros, boolean ended,
        boolean valid, Write write, long read1, long read2) {

    /** What became of a section's fenced write. */
    enum Write {
        /** No write was attempted (a reader, a semaphore permit). */
        NONE,
        /** The fenced write committed. */
        ACCEPTED,
        /** The fence refused the claim or the write: a later token had claimed the record. */
        FENCED,
        /** The database failed during the write: it may or may not have committed. */
        UNKNOWN
    }

    Section ended(long out, boolean stillValid, Write result, long endRead) {
        return new Section(id, node, owner, kind, tenant, mode, paths, token, reentered, record, permits, inMicros,
                out, true, stillValid, result, read1, endRead);
    }

    /** Whether the section held its lock for its whole interval as far as it knows (valid at the end). */
    boolean heldThroughout() {
        return ended && valid;
    }

    boolean exclusive() {
        return mode == 'X';
    }

    boolean overlapsInTime(Section other) {
        return inMicros < other.outMicros && other.inMicros < outMicros;
    }

    /** Whether the two sections' locks could not be held together by different owners. */
    boolean conflictsWith(Section other) {
        return tenant.equals(other.tenant) && !owner.equals(other.owner) && wouldConflictInOneTenant(other);
    }

    /** Whether the two locks would conflict if they were in one tenant and of different owners. */
    boolean wouldConflictInOneTenant(Section other) {
        if (kind != other.kind) {
            return false;
        }
        if (kind == 'M') {
            return false;
        }
        if (kind == 'J') {
            return paths.get(0).equals(other.paths.get(0));
        }
        if (!exclusive() && !other.exclusive()) {
            return false;
        }
        for (String a : paths) {
            for (String b : other.paths) {
                if (TortureTree.overlaps(a, b)) {
                    return true;
                }
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return id + "[" + owner + " " + kind + mode + " " + tenant + ":" + paths + " token " + token + " "
                + inMicros + ".." + (outMicros == Long.MAX_VALUE ? "?" : outMicros) + (valid ? "" : " LOST")
                + (ended ? "" : " DIED") + " write " + write + "]";
    }
}
