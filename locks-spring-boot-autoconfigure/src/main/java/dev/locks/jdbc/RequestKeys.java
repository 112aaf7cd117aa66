package dev.locks.jdbc;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import dev.locks.LockKind;
import dev.locks.LockPath;
import dev.locks.store.GrantRequest;

/**
 * The SHA-256 keys of one request, each computed once: of its paths, of their ancestors and of its
 * tenant's scope. A grant binds them more than once (its node locks, each count's branches, its
 * rows), and a path twenty levels deep has twenty ancestors.
 */
final class RequestKeys {

    private final LockKind kind;

    private final List<LockPath> paths;

    /** The paths' and ancestors' keys, each once: the look-ups by key of the conflict branches. */
    private final Map<LockPath, byte[]> byPath;

    /** For a single path, its ancestors' keys root first and then its own, without making the ancestors. */
    private final List<byte[]> lineage;

    private final byte[] scope;

    private RequestKeys(LockKind kind, List<LockPath> paths, Map<LockPath, byte[]> byPath, List<byte[]> lineage,
            byte[] scope) {
        this.kind = kind;
        this.paths = paths;
        this.byPath = byPath;
        this.lineage = lineage;
        this.scope = scope;
    }

    static RequestKeys of(GrantRequest request) {
        return of(request.kind(), request.tenant(), request.paths());
    }

    static RequestKeys of(LockKind kind, String tenant, List<LockPath> paths) {
        byte[] scope = LockKeys.scopeKey(kind, tenant);
        if (paths.size() == 1) {
            return new RequestKeys(kind, paths, null,
                    Collections.unmodifiableList(LockKeys.lineage(kind, tenant, paths.get(0))), scope);
        }
        // siblings share their ancestors: each is keyed, and bound, once
        Map<LockPath, byte[]> byPath = new LinkedHashMap<>();
        for (LockPath path : paths) {
            List<LockPath> ancestors = path.ancestors();
            List<byte[]> keys = LockKeys.lineage(kind, tenant, path);
            for (int i = 0; i < ancestors.size(); i++) {
                byPath.putIfAbsent(ancestors.get(i), keys.get(i));
            }
            byPath.put(path, keys.get(keys.size() - 1));
        }
        return new RequestKeys(kind, paths, byPath, null, scope);
    }

    LockKind kind() {
        return kind;
    }

    List<LockPath> paths() {
        return paths;
    }

    /** The tenant's scope key (of the name, for a singleton or semaphore). */
    byte[] scope() {
        return scope;
    }

    /** The key of the request's {@code index}th path. */
    byte[] path(int index) {
        return lineage != null ? lineage.get(lineage.size() - 1) : byPath.get(paths.get(index));
    }

    /** The key of the root of the request's tree: the first ancestor of every path, or the path itself. */
    byte[] root() {
        return lineage != null ? lineage.get(0) : byPath.get(LockPath.ROOT);
    }

    /** The keys of the paths and their ancestors, each once: {@link #lockKeyCount()} of them. */
    List<byte[]> lockKeys() {
        return lineage != null ? lineage : new ArrayList<>(byPath.values());
    }

    /** How many keys {@link #lockKeys} gives. */
    int lockKeyCount() {
        return lineage != null ? lineage.size() : byPath.size();
    }

    /**
     * How many keys {@link #lockKeys} gives for these paths, without computing them: what a statement's
     * text needs, which is kept for requests of other paths too.
     */
    static int keyCountOf(List<LockPath> paths) {
        if (paths.size() == 1) {
            return paths.get(0).depth() + 1;
        }
        Set<LockPath> keyed = new HashSet<>();
        for (LockPath path : paths) {
            keyed.add(path);
            keyed.addAll(path.ancestors());
        }
        return keyed.size();
    }

    /** Ancestors shared, requested paths exclusive, in path order (a parent before its children). */
    List<SqlDialect.NodeLock> nodeLocks() {
        List<SqlDialect.NodeLock> locks = new ArrayList<>();
        if (lineage != null) {
            // a path's lineage is in path order already: its ancestors root first, then itself
            for (int i = 0; i < lineage.size(); i++) {
                locks.add(new SqlDialect.NodeLock(lineage.get(i), i == lineage.size() - 1));
            }
            return locks;
        }
        Map<LockPath, Boolean> exclusive = new TreeMap<>();
        for (LockPath path : paths) {
            for (LockPath ancestor : path.ancestors()) {
                exclusive.putIfAbsent(ancestor, false);
            }
            exclusive.put(path, true);
        }
        exclusive.forEach((path, x) -> locks.add(new SqlDialect.NodeLock(byPath.get(path), x)));
        return locks;
    }
}
