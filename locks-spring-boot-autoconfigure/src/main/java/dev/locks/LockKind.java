package dev.locks;

/**
 * The three things the library locks. Each kind has its own key space: a singleton named
 * {@code report} never conflicts with a path lock on {@code /report}.
 */
public enum LockKind {

    /** Hierarchical path lock: conflicts with equal, ancestor and descendant paths. */
    PATH('P'),

    /** Named cluster singleton: one holder per name, no hierarchy. */
    SINGLETON('J'),

    /** Counting semaphore permit: up to {@code max} holders per name. */
    SEMAPHORE('M');

    private final char code;

    LockKind(char code) {
        this.code = code;
    }

    /**
     * The one-character code stores use to keep the kinds apart.
     *
     * @return the code
     */
    public char code() {
        return code;
    }

    /**
     * The kind for a store code.
     *
     * @param code a code returned by {@link #code()}
     * @return the kind
     */
    public static LockKind ofCode(char code) {
        for (LockKind kind : values()) {
            if (kind.code == code) {
                return kind;
            }
        }
        throw new IllegalArgumentException("Unknown lock kind code '" + code + "'");
    }
}
