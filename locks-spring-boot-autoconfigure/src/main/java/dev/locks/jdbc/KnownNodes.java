package dev.locks.jdbc;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Node rows this store has seen exist, so that a grant on a path used before goes straight to
 * locking them and one on a new path creates only the rows it has not seen, first, instead of
 * looking, creating and looking again. Only a hint: a row purged since is found missing by the
 * lock statement, which then falls back to creating it. Bounded: forgotten wholesale when full.
 */
final class KnownNodes {

    private static final int CAPACITY = 20_000;

    private final Set<ByteBuffer> keys = ConcurrentHashMap.newKeySet();

    /** The node locks whose rows this store has not seen. */
    List<SqlDialect.NodeLock> unknown(List<SqlDialect.NodeLock> locks) {
        List<SqlDialect.NodeLock> unknown = new ArrayList<>();
        for (SqlDialect.NodeLock lock : locks) {
            if (!keys.contains(ByteBuffer.wrap(lock.key()))) {
                unknown.add(lock);
            }
        }
        return unknown;
    }

    void addAll(List<SqlDialect.NodeLock> locks) {
        if (keys.size() + locks.size() > CAPACITY) {
            keys.clear();
        }
        for (SqlDialect.NodeLock lock : locks) {
            keys.add(ByteBuffer.wrap(lock.key()));
        }
    }
}
