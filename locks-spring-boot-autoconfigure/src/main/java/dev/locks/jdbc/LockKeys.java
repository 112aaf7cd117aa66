package dev.locks.jdbc;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;

import dev.locks.LockKind;
import dev.locks.LockPath;

/**
 * Fixed-size keys for variable-length paths: a path column of 4000 characters cannot be indexed
 * whole (MySQL's key limit is 3072 bytes), so equality and ancestor look-ups go through a SHA-256
 * of kind, tenant and path, and subtree scans through the scope key plus a path prefix.
 */
final class LockKeys {

    // Digests are cloned from this one, which is never updated, so concurrent clones only read it:
    // MessageDigest.getInstance looks the provider up each time. Null where the provider cannot clone.
    private static final MessageDigest PROTOTYPE = prototype();

    private LockKeys() {
    }

    /** The key of one lockable thing: kind, tenant and path. */
    static byte[] lockKey(LockKind kind, String tenant, LockPath path) {
        return sha256(kind, tenant, path.value());
    }

    /** The key of one tenant's tree of one kind. */
    static byte[] scopeKey(LockKind kind, String tenant) {
        return sha256(kind, tenant, null);
    }

    /** The key that serialises the creation of the lock tables under one prefix. */
    static byte[] schemaKey(String prefix) {
        return sha256(LockKind.SINGLETON, "\u0001schema", prefix);
    }

    /** A 64-bit key for stores that lock numbers (PostgreSQL advisory locks). */
    static long numericKey(byte[] lockKey) {
        return ByteBuffer.wrap(lockKey, 0, 8).getLong();
    }

    /**
     * The keys of a path's ancestors, root first, then of the path itself: what {@link #lockKey}
     * gives for each, from one pass of the digest over the path. A grant binds the key of every
     * ancestor, and a deep path has many.
     */
    static List<byte[]> lineage(LockKind kind, String tenant, LockPath path) {
        if (path.depth() == 0) {
            return List.of(lockKey(kind, tenant, path));
        }
        if (PROTOTYPE == null) {
            // a digest that cannot be copied cannot be finished at each ancestor: one digest each
            List<byte[]> keys = new ArrayList<>(path.depth() + 1);
            for (LockPath ancestor : path.ancestors()) {
                keys.add(lockKey(kind, tenant, ancestor));
            }
            keys.add(lockKey(kind, tenant, path));
            return keys;
        }
        // '/' is one byte in UTF-8 and never part of a longer character: each ancestor's bytes are a prefix
        byte[] bytes = path.value().getBytes(StandardCharsets.UTF_8);
        List<byte[]> keys = new ArrayList<>(path.depth() + 1);
        MessageDigest digest = start(kind, tenant);
        digest.update((byte) 0);
        // the root is "/" itself; every other ancestor ends right before a '/'
        digest.update(bytes, 0, 1);
        keys.add(finishCopy(digest));
        int fed = 1;
        for (int i = 1; i < bytes.length; i++) {
            if (bytes[i] == '/') {
                digest.update(bytes, fed, i - fed);
                fed = i;
                keys.add(finishCopy(digest));
            }
        }
        digest.update(bytes, fed, bytes.length - fed);
        keys.add(digest.digest());
        return keys;
    }

    private static byte[] sha256(LockKind kind, String tenant, String path) {
        MessageDigest digest = start(kind, tenant);
        if (path != null) {
            // NUL never occurs in a tenant or path, so the parts cannot run into each other
            digest.update((byte) 0);
            digest.update(path.getBytes(StandardCharsets.UTF_8));
        }
        return digest.digest();
    }

    private static MessageDigest start(LockKind kind, String tenant) {
        MessageDigest digest = newDigest();
        digest.update((byte) kind.code());
        digest.update((byte) 0);
        digest.update(tenant.getBytes(StandardCharsets.UTF_8));
        return digest;
    }

    private static byte[] finishCopy(MessageDigest digest) {
        try {
            return ((MessageDigest) digest.clone()).digest();
        }
        catch (CloneNotSupportedException ex) {
            throw new IllegalStateException("The SHA-256 digest of this JVM cannot be copied", ex);
        }
    }

    private static MessageDigest prototype() {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.clone();
            return digest;
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
        }
        catch (CloneNotSupportedException ex) {
            return null;
        }
    }

    private static MessageDigest newDigest() {
        try {
            return PROTOTYPE != null ? (MessageDigest) PROTOTYPE.clone() : MessageDigest.getInstance("SHA-256");
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
        }
        catch (CloneNotSupportedException ex) {
            throw new IllegalStateException("The SHA-256 digest of this JVM cannot be copied", ex);
        }
    }
}
