package dev.locks;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * A normalised, absolute, {@code /}-separated lock path, made by {@link PathNormalizer}.
 *
 * <p>Paths compare by their characters, so a parent always sorts before its children; that is the
 * global order in which stores lock the rows of a request.
 */
public final class LockPath implements Comparable<LockPath> {

    /** The root of every tenant's tree. */
    public static final LockPath ROOT = new LockPath("/");

    private final String value;

    private final boolean flat;

    LockPath(String value) {
        this(value, false);
    }

    private LockPath(String value, boolean flat) {
        this.value = value;
        this.flat = flat;
    }

    /**
     * A flat key for a singleton or semaphore name: it has no ancestors and nests with nothing.
     *
     * @param name a name already checked by {@link PathNormalizer#checkName}
     * @return the key
     */
    public static LockPath flat(String name) {
        return new LockPath(name, true);
    }

    /**
     * @return the normalised path text
     */
    public String value() {
        return value;
    }

    /**
     * @return true for {@code /}
     */
    public boolean isRoot() {
        return !flat && value.length() == 1;
    }

    /**
     * How many proper ancestors the path has, without making them: 0 for the root and for a flat
     * name, 2 for {@code /a/b}.
     *
     * @return the number of {@link #ancestors()}
     */
    public int depth() {
        if (flat || isRoot()) {
            return 0;
        }
        int depth = 0;
        for (int i = value.indexOf('/'); i >= 0; i = value.indexOf('/', i + 1)) {
            depth++;
        }
        return depth;
    }

    /**
     * The proper ancestors, root first: {@code /a/b/c} gives {@code /}, {@code /a}, {@code /a/b}.
     *
     * @return the ancestors, empty for the root
     */
    public List<LockPath> ancestors() {
        if (flat || isRoot()) {
            return List.of();
        }
        List<LockPath> result = new ArrayList<>();
        result.add(ROOT);
        for (int i = value.indexOf('/', 1); i > 0; i = value.indexOf('/', i + 1)) {
            result.add(new LockPath(value.substring(0, i)));
        }
        return result;
    }

    /**
     * Whether this path is a proper ancestor of {@code other}: {@code /a/b} is one of {@code /a/b/c}
     * but not of {@code /a/bc} nor of itself.
     *
     * @param other another path
     * @return true if {@code other} lies strictly inside this path's subtree
     */
    public boolean isAncestorOf(LockPath other) {
        if (flat || other.flat) {
            return false;
        }
        if (isRoot()) {
            return !other.isRoot();
        }
        return other.value.length() > value.length() && other.value.startsWith(value)
                && other.value.charAt(value.length()) == '/';
    }

    /**
     * Whether the two paths are equal or one contains the other: the precondition of a conflict.
     *
     * @param other another path
     * @return true if the subtrees intersect
     */
    public boolean overlaps(LockPath other) {
        return equals(other) || isAncestorOf(other) || other.isAncestorOf(this);
    }

    /**
     * Drops every path that an ancestor (or an equal path) in the collection already covers, and
     * sorts the rest: {@code /a/b, /a, /c, /a} gives {@code /a, /c}.
     *
     * @param paths the paths of one request
     * @return the minimal covering set, sorted, unmodifiable
     */
    public static List<LockPath> merge(Collection<LockPath> paths) {
        // a held lock keeps this list: an unmodifiable one of one path takes a third of an ArrayList's heap
        if (paths.size() == 1) {
            return List.of(paths.iterator().next());
        }
        List<LockPath> sorted = new ArrayList<>(paths);
        sorted.sort(Comparator.naturalOrder());
        List<LockPath> merged = new ArrayList<>();
        for (LockPath path : sorted) {
            LockPath last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
            // sorted order puts an ancestor right before its subtree, so comparing with the last kept path is enough
            if (last == null || !(last.equals(path) || last.isAncestorOf(path))) {
                merged.add(path);
            }
        }
        return List.copyOf(merged);
    }

    @Override
    public int compareTo(LockPath other) {
        return compareSegments(value, other.value);
    }

    // Compares with '/' below every other character so that "/a/b" < "/a!" and a parent's subtree stays contiguous.
    private static int compareSegments(String a, String b) {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; i++) {
            char x = a.charAt(i);
            char y = b.charAt(i);
            if (x != y) {
                if (x == '/') {
                    return -1;
                }
                if (y == '/') {
                    return 1;
                }
                return Character.compare(x, y);
            }
        }
        return Integer.compare(a.length(), b.length());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LockPath other && value.equals(other.value);
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    @Override
    public String toString() {
        return value;
    }
}
