package dev.locks.jdbc;

import java.util.regex.Pattern;

/**
 * The names of the lock tables under a configurable prefix (default {@code locks_}).
 *
 * @param prefix the prefix, letters, digits and underscores only
 */
record LockTables(String prefix) {

    private static final Pattern SAFE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,40}");

    LockTables {
        if (!SAFE.matcher(prefix).matches()) {
            // the prefix becomes part of SQL text, so it is held to identifier characters
            throw new IllegalArgumentException("Table prefix '" + prefix
                    + "' must start with a letter or '_' and contain only letters, digits and '_' (at most 41)");
        }
    }

    /** @return the table of live grants, one row per path */
    String held() {
        return prefix + "held";
    }

    /** @return the table of waiting requests (the fair queue) */
    String waiting() {
        return prefix + "wait";
    }

    /**
     * @return the index of rows by key and lease end; on MySQL/MariaDB the waiting table, created
     *         {@code LIKE} the held one, has an index of the same name
     */
    String keyIndex() {
        return prefix + "held_key";
    }

    /** @return the index of rows by scope and path, named as {@link #keyIndex} is */
    String subtreeIndex() {
        return prefix + "held_subtree";
    }

    /** @return the table of path nodes whose row locks serialise conflicting acquisitions */
    String node() {
        return prefix + "node";
    }
}
