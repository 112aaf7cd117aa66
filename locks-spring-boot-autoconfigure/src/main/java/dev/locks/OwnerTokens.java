package dev.locks;

import java.security.SecureRandom;
import java.util.HexFormat;

/** 128-bit random tokens for owners and grants: unguessable, so holding one is the capability. */
final class OwnerTokens {

    private static final SecureRandom RANDOM = new SecureRandom();

    private OwnerTokens() {
    }

    static String next() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** The part of a token that may appear in logs. */
    static String hint(String token) {
        return token.substring(0, 8);
    }
}
