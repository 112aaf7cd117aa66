package dev.locks.jdbc;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.locks.LockKind;
import dev.locks.LockMode;
import dev.locks.store.GrantRequest;

/**
 * The SQL text of grant statements, kept by {@link Shape}. A grant's text depends on its shape
 * alone, never on the paths, tenant or owner it binds, so one text serves every request of a shape.
 * It is built once instead of at every grant: on H2, where the database runs on the calling thread,
 * building it and hashing it to find the parsed statement took about a tenth of an acquisition.
 * A driver's or H2's statement cache then hashes one {@code String}, which keeps its hash.
 */
final class StatementShapes {

    /**
     * Texts kept at most. Requests of more shapes (many path counts and depths) clear them and start
     * again: texts are rebuilt, never wrong.
     */
    static final int MAX_SHAPES = 128;

    /**
     * Longer texts (requests of many paths) are built each time rather than kept, so that the kept
     * texts stay under a megabyte; it is also the longest statement that the Connector/J settings the
     * README recommends prepare once per connection ({@code prepStmtCacheSqlLimit}).
     */
    static final int MAX_KEPT_LENGTH = 8192;

    private final Map<Shape, String> texts = new ConcurrentHashMap<>();

    /** The text of {@code shape}, built by {@code build} the first time it is asked for. */
    String text(Shape shape, Supplier<String> build) {
        String text = texts.get(shape);
        if (text == null) {
            text = build.get();
            if (text.length() <= MAX_KEPT_LENGTH) {
                if (texts.size() >= MAX_SHAPES) {
                    texts.clear();
                }
                texts.put(shape, text);
            }
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
     * Everything a grant statement's text depends on.
     *
     * @param paths how many paths the request has: one row and one subtree branch each
     * @param keys how many keys of paths and ancestors the branches look up
     * @param sharedLocks how many node rows the statement locks shared (the rest it locks exclusively)
     * @param waiters which waiting rows count: {@link PathConflictQuery#NO_WAITERS},
     *                {@link PathConflictQuery#ALL_WAITERS}, or 1 for those queued before the request
     * @param queued whether the request has a waiting row to remove
     * @param releasing whether the statement first releases a grant (a hand-off)
     */
    record Shape(Form form, LockKind kind, LockMode mode, int paths, int keys, int sharedLocks, long waiters,
            boolean queued, boolean releasing) {

        /**
         * @param locks the node rows the statement locks, or null where the statement locks none itself
         * @param waitersBefore the request's waiting rows that count ({@link PathConflictQuery#NO_WAITERS},
         *                      {@link PathConflictQuery#ALL_WAITERS} or a ticket)
         */
        static Shape of(Form form, GrantRequest request, RequestKeys keys, List<SqlDialect.NodeLock> locks,
                long waitersBefore, boolean releasing) {
            int shared = 0;
            if (locks != null) {
                for (SqlDialect.NodeLock lock : locks) {
                    shared += lock.exclusive() ? 0 : 1;
                }
            }
            return new Shape(form, request.kind(), request.mode(), request.paths().size(), keys.lockKeyCount(), shared,
                    Long.signum(waitersBefore), request.ticket() > 0, releasing);
        }
    }
}
