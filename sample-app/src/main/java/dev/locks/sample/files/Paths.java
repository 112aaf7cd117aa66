package dev.locks.sample.files;

import org.springframework.stereotype.Component;

import dev.locks.PathNormalizer;

/**
 * Path helpers, also a bean so that SpEL in {@code @PathLocked} can call it ({@code @paths.sibling(...)}).
 * Paths are normalised with the lock library's own rules, so the stored path and the locked path
 * are the same string.
 */
@Component("paths")
public class Paths {

    private final PathNormalizer normalizer = new PathNormalizer(true, 500);

    /** @return the normalised path; rejects {@code ..}, control characters and so on with a 400 */
    public String normalize(String path) {
        return normalizer.normalize(path).value();
    }

    /** @return the parent of a normalised path ({@code /} for top-level entries) */
    public String parent(String path) {
        int slash = path.lastIndexOf('/');
        return slash <= 0 ? "/" : path.substring(0, slash);
    }

    /** @return the path of {@code name} beside {@code path}: what a rename creates */
    public String sibling(String path, String name) {
        if (name == null || name.isBlank() || name.contains("/")) {
            throw new IllegalArgumentException("A new name must be one non-empty segment, was '" + name + "'");
        }
        String parent = parent(normalize(path));
        return normalize((parent.equals("/") ? "" : parent) + "/" + name);
    }

    /** @return whether {@code inner} equals {@code outer} or lies in its subtree */
    public boolean within(String inner, String outer) {
        return inner.equals(outer) || outer.equals("/") || inner.startsWith(outer + "/");
    }
}
