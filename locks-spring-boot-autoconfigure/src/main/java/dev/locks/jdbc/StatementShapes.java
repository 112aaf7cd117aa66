package dev.locks.jdbc;

import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.locks.LockKind;
import dev.locks.LockMode;
import dev.locks.store.GrantRequest;

/**
 * The SQL text of one store's grant statements, kept by {@link Shape}. Within a store (one dialect,
 * one table prefix, one release channel and origin tag) a grant's text depends on its shape alone,
 * never on the paths, tenant or owner it binds, so one text serves every request of a shape.
 * It is built once instead of at every grant: on H2, where the database runs on the calling thread,
 * building it and hashing it to find the parsed statement took about a tenth of an acquisition.
 * A driver's or H2's statement cache then hashes one {@code String}, which keeps its hash.
 *
 * <p>With assertions on (as in the tests), every text found is checked against a fresh build.
 */
final class StatementShapes {

    /**
     * Texts kept at most. A new shape beyond them pushes out one kept text, which is rebuilt when it is
     * needed again: never wrong, only slower.
     */
    static final int MAX_SHAPES = 256;

    /**
     * Longer texts (requests of many paths) are built each time rather than kept, so that the kept
     * texts stay within two megabytes; Connector/J, with the settings the README recommends
     * ({@code prepStmtCacheSqlLimit=8192}), prepares once per connection only texts shorter than 8192.
     */
    static final int MAX_KEPT_LENGTH = 8191;

    private final Map<Shape, String> texts = new ConcurrentHashMap<>();

    /** The text of {@code shape}, built by {@code build} the first time it is asked for. */
    String text(Shape shape, Supplier<String> build) {
        String text = texts.get(shape);
        if (text == null) {
            text = build.get();
            if (text.length() <= MAX_KEPT_LENGTH) {
                if (texts.size() >= MAX_SHAPES) {
                    Iterator<Shape> kept = texts.keySet().iterator();
                    if (kept.hasNext()) {
                        kept.next();
                        kept.remove();
                    }
                }
                texts.put(shape, text);
            }
        }
        else {
            assert text.equals(build.get()) : "the kept text of " + shape + " is not the one its request builds";
        }
        return text;
    }

    /** How many texts are kept. */
    int size() {
        return texts.size();
    }

    /** The grant statements whose texts are kept. */
    enum Form {
        /** An {@code INSERT ... SELECT} unless something conflicts (H2). */
        UNLESS_CONFLICTING,
        /** Locks, release, insert and commit in one execution (PostgreSQL). */
        PIPELINED,
        /** A compound statement (MariaDB). */
        BLOCK
    }

    /**
     * Everything a grant statement's text depends on within one store.
     *
     * @param form which of the grant statements
     * @param kind paths have subtree branches; a semaphore counts permits; only a semaphore binds no owner
     * @param mode a shared request counts only exclusive rows
     * @param paths how many paths the request has: one row and one subtree branch each
     * @param keys how many keys of paths and ancestors the branches look up
     * @param sharedLocks how many node rows the statement locks shared
     * @param exclusiveLocks how many node rows the statement locks exclusively
     * @param waiters which waiting rows count: {@link PathConflictQuery#NO_WAITERS},
     *                {@link PathConflictQuery#ALL_WAITERS}, or 1 for those queued before the request
     * @param queued whether the request has a waiting row to remove
     * @param releasing whether the statement first releases a grant (a hand-off)
     */
    record Shape(Form form, LockKind kind, LockMode mode, int paths, int keys, int sharedLocks, int exclusiveLocks,
            long waiters, boolean queued, boolean releasing) {

        /**
         * @param locks the node rows the statement locks, or null where the statement locks none itself
         * @param waitersBefore the request's waiting rows that count ({@link PathConflictQuery#NO_WAITERS},
         *                      {@link PathConflictQuery#ALL_WAITERS} or a ticket)
         */
        static Shape of(Form form, GrantRequest request, RequestKeys keys, List<SqlDialect.NodeLock> locks,
                long waitersBefore, boolean releasing) {
            int shared = 0;
            int exclusive = 0;
            if (locks != null) {
                for (SqlDialect.NodeLock lock : locks) {
                    shared += lock.exclusive() ? 0 : 1;
                    exclusive += lock.exclusive() ? 1 : 0;
                }
            }
            // the text tells no waiters, all waiters and those before a ticket apart, not one ticket from another
            long queuePlace = waitersBefore > 0 ? 1 : waitersBefore;
            return new Shape(form, request.kind(), request.mode(), request.paths().size(), keys.lockKeyCount(), shared,
                    exclusive, queuePlace, request.ticket() > 0, releasing);
        }

        // Written out: a record's own equals and hashCode run through method handles, and at every grant
        // they took 2-3 % of our client work from eight threads on H2. StatementShapesTest fails if a
        // component is left out of either.
        @Override
        public boolean equals(Object other) {
            return other instanceof Shape that && form == that.form && kind == that.kind && mode == that.mode
                    && paths == that.paths && keys == that.keys && sharedLocks == that.sharedLocks
                    && exclusiveLocks == that.exclusiveLocks && waiters == that.waiters && queued == that.queued
                    && releasing == that.releasing;
        }

        @Override
        public int hashCode() {
            int hash = form.ordinal();
            hash = 31 * hash + kind.ordinal();
            hash = 31 * hash + mode.ordinal();
            hash = 31 * hash + paths;
            hash = 31 * hash + keys;
            hash = 31 * hash + sharedLocks;
            hash = 31 * hash + exclusiveLocks;
            hash = 31 * hash + Long.hashCode(waiters);
            hash = 31 * hash + (queued ? 1 : 0);
            return 31 * hash + (releasing ? 1 : 0);
        }
    }
}
