package dev.locks.jdbc;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

import dev.locks.LockKind;
import dev.locks.LockPath;

/**
 * Fixed-size keys for variable-length paths: a path column of 4000 characters cannot be indexed
 * whole (MySQL's key limit is 3072 bytes), so equality and ancestor look-ups go through a SHA-256
 * of kind, tenant and path, and subtree scans through the scope key plus a path prefix.
 */
final class LockKeys {

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

    private static byte[] sha256(LockKind kind, String tenant, String path) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update((byte) kind.code());
            digest.update((byte) 0);
            digest.update(tenant.getBytes(StandardCharsets.UTF_8));
            if (path != null) {
                // NUL never occurs in a tenant or path, so the parts cannot run into each other
                digest.update((byte) 0);
                digest.update(path.getBytes(StandardCharsets.UTF_8));
            }
            return digest.digest();
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
        }
    }
}
