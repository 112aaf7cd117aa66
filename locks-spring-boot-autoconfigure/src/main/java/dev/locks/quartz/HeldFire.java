package dev.locks.quartz;

import org.quartz.JobExecutionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.locks.LockHandle;

/**
 * The locks one node holds for one fire of a guarded job, from the veto vote to the end of the run.
 *
 * @param context the fire on this node, as Quartz passes it to the listeners
 * @param description the job and scheduled fire time, for logs
 * @param running the job's running lock, or null when runs may overlap
 * @param runningKey the job and the running lock's tenant, under which a running lock waits for the
 *                   node's next fire of the job; null with {@code running}
 * @param marker the fire's marker, kept after release until its retention has passed; null for a fire
 *               Quartz recovers, whose marker the failed run took
 */
record HeldFire(JobExecutionContext context, String description, LockHandle running, String runningKey,
        LockHandle marker) {

    private static final Logger log = LoggerFactory.getLogger(HeldFire.class);

    /** Whether these are the locks of that fire (Quartz's id of the fire on this node). */
    boolean isOf(JobExecutionContext fire) {
        return context.getFireInstanceId().equals(fire.getFireInstanceId());
    }

    /** Frees the running lock at once and leaves the marker to lapse after its retention. */
    void release() {
        releaseRunning();
        releaseMarker();
    }

    /** Frees the running lock, if the job has one, saying so if its lease had been lost. */
    void releaseRunning() {
        if (running != null) {
            release(running, "running lock");
        }
    }

    /** Leaves the marker to lapse after its retention; the running lock stays with the caller. */
    void releaseMarker() {
        if (marker != null) {
            release(marker, "fire marker");
        }
    }

    private void release(LockHandle handle, String what) {
        try {
            if (!handle.release()) {
                log.warn("The {} of {} had been lost before the run ended (lease ran out or force-released): "
                        + "another node may have run the job meanwhile", what, description);
            }
        }
        catch (RuntimeException ex) {
            log.warn("The {} of {}: {}", what, description, ex.getMessage());
        }
    }
}
