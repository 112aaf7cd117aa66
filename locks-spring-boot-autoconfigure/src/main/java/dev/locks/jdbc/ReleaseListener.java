package dev.locks.jdbc;

/** A running listener for other nodes' release notices; {@link #close()} stops it. */
interface ReleaseListener extends AutoCloseable {

    /** @return true while it is connected and listening: notices sent now will reach it */
    boolean listening();

    @Override
    void close();
}
