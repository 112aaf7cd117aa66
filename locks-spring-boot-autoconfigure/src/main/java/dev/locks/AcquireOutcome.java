package dev.locks;

/** How an attempt to take a lock ended, for metrics and listeners. */
public enum AcquireOutcome {

    /** Granted (possibly after waiting). */
    ACQUIRED,

    /** Not granted by a call that does not wait ({@code tryAcquire}, singleton skip). */
    BUSY,

    /** Still busy when the wait ran out. */
    TIMEOUT,

    /** Waiting would never end: this request was the youngest in a cycle of waiting owners. */
    DEADLOCK,

    /** The thread was interrupted while waiting. */
    INTERRUPTED,

    /** The store could not be reached or failed. */
    ERROR
}
