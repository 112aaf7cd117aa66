package dev.locks;

import java.text.Normalizer;

/**
 * Turns user-supplied paths into {@link LockPath}s: Unicode NFC, repeated {@code /} collapsed,
 * trailing {@code /} removed, and optionally case-folded character by character, so that paths that
 * are {@link String#equalsIgnoreCase equal ignoring case} after NFC are one path. Rejects, with an
 * {@link InvalidLockPathException} naming the path and the reason: null, empty and relative paths,
 * {@code .} and {@code ..} segments, NUL and other control characters, unpaired surrogates, and
 * paths longer than the configured maximum.
 *
 * <p>Every other printable character ({@code %}, {@code _}, {@code \}, quotes, emoji, ...) is an
 * ordinary path character.
 */
public final class PathNormalizer {

    /** The default maximum length of a normalised path, in UTF-16 characters. */
    public static final int DEFAULT_MAX_LENGTH = 4000;

    /**
     * The longest maximum a lock service accepts, which every store can hold: MySQL's path column
     * takes 16,000 bytes, and a UTF-16 character takes at most three bytes of UTF-8.
     */
    public static final int LONGEST_MAX_LENGTH = 5000;

    private final boolean caseSensitive;

    private final int maxLength;

    /**
     * @param caseSensitive false to fold case as {@link String#equalsIgnoreCase} compares
     * @param maxLength the longest normalised path accepted, in UTF-16 characters
     */
    public PathNormalizer(boolean caseSensitive, int maxLength) {
        if (maxLength < 1) {
            throw new IllegalArgumentException("maxLength must be positive, was " + maxLength);
        }
        this.caseSensitive = caseSensitive;
        this.maxLength = maxLength;
    }

    /**
     * @param raw a path as the caller wrote it
     * @return the normalised path
     * @throws InvalidLockPathException if the path cannot be locked
     */
    public LockPath normalize(String raw) {
        if (raw == null) {
            throw new InvalidLockPathException(null, "path is null");
        }
        if (raw.isEmpty()) {
            throw new InvalidLockPathException(raw, "path is empty");
        }
        // normalising a multi-megabyte string only to reject it afterwards would be a cheap denial of service
        if (raw.length() > maxLength * 4L) {
            throw new InvalidLockPathException(raw, "longer than " + maxLength + " characters");
        }
        if (raw.charAt(0) != '/') {
            throw new InvalidLockPathException(raw, "relative path: must start with '/'");
        }
        checkCharacters(raw);
        String text = Normalizer.normalize(raw, Normalizer.Form.NFC);
        if (!caseSensitive) {
            text = Normalizer.normalize(foldCase(text), Normalizer.Form.NFC);
        }
        StringBuilder out = new StringBuilder(text.length());
        int start = 0;
        while (start < text.length()) {
            int end = text.indexOf('/', start);
            if (end < 0) {
                end = text.length();
            }
            if (end > start) {
                String segment = text.substring(start, end);
                if (segment.equals(".") || segment.equals("..")) {
                    throw new InvalidLockPathException(raw, "'" + segment + "' segments are not allowed");
                }
                out.append('/').append(segment);
            }
            start = end + 1;
        }
        String normalized = out.length() == 0 ? "/" : out.toString();
        if (normalized.length() > maxLength) {
            throw new InvalidLockPathException(raw, "longer than " + maxLength + " characters");
        }
        if (normalized.equals("/")) {
            return LockPath.ROOT;
        }
        // a held lock keeps its path: the caller's string, when it was normal already, saves a copy
        return new LockPath(normalized.equals(raw) ? raw : normalized);
    }

    /**
     * Validates a singleton or semaphore name, or a tenant: non-empty, printable, not too long.
     * Names are not hierarchical and are not case-folded.
     *
     * @param what "tenant", "singleton name", ...
     * @param name the name
     * @param max the longest accepted
     * @return the name in NFC
     */
    public static String checkName(String what, String name, int max) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("The " + what + " must not be " + (name == null ? "null" : "blank"));
        }
        String nfc = Normalizer.normalize(name, Normalizer.Form.NFC);
        if (nfc.length() > max) {
            throw new IllegalArgumentException("The " + what + " " + MessageText.quoted(nfc) + " is longer than "
                    + max + " characters");
        }
        for (int i = 0; i < nfc.length(); i++) {
            char c = nfc.charAt(i);
            if (Character.isISOControl(c) || unpaired(nfc, i)) {
                throw new IllegalArgumentException("The " + what + " contains an invalid character (U+"
                        + String.format("%04X", (int) c) + ") at index " + i);
            }
        }
        return nfc;
    }

    /**
     * Folds each code point on its own, as {@link String#equalsIgnoreCase} compares them, so that
     * paths equal ignoring case are one lock. {@code toLowerCase} would not do: it looks at the
     * context, turning {@code Σ} into {@code ς} at the end of a word and into {@code σ} elsewhere,
     * and {@code İ} into two characters.
     */
    private static String foldCase(String text) {
        StringBuilder out = new StringBuilder(text.length());
        text.codePoints().forEach(cp -> out.appendCodePoint(Character.toLowerCase(Character.toUpperCase(cp))));
        return out.toString();
    }

    private static void checkCharacters(String raw) {
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == 0) {
                throw new InvalidLockPathException(raw, "NUL character at index " + i);
            }
            if (Character.isISOControl(c)) {
                throw new InvalidLockPathException(raw,
                        "control character U+" + String.format("%04X", (int) c) + " at index " + i);
            }
            if (unpaired(raw, i)) {
                throw new InvalidLockPathException(raw, "unpaired UTF-16 surrogate at index " + i);
            }
        }
    }

    private static boolean unpaired(String s, int i) {
        char c = s.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1));
        }
        if (Character.isLowSurrogate(c)) {
            return i == 0 || !Character.isHighSurrogate(s.charAt(i - 1));
        }
        return false;
    }

    /**
     * @return whether paths keep their case
     */
    public boolean isCaseSensitive() {
        return caseSensitive;
    }

    /**
     * @return the longest accepted normalised path
     */
    public int getMaxLength() {
        return maxLength;
    }
}
