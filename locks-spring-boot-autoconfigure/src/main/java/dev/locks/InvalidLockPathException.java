package dev.locks;

/**
 * A path that cannot be locked: relative, empty, with {@code .} or {@code ..} segments, control
 * characters, unpaired surrogates, or too long. The message names the path and the reason.
 */
public class InvalidLockPathException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final String path;

    private final String reason;

    /**
     * @param path the path as given (may be null)
     * @param reason why it was rejected
     */
    public InvalidLockPathException(String path, String reason) {
        super("Invalid lock path " + MessageText.quoted(path) + ": " + reason);
        this.path = path;
        this.reason = reason;
    }

    /**
     * @return the rejected path as given, possibly null
     */
    public String getPath() {
        return path;
    }

    /**
     * @return why the path was rejected
     */
    public String getReason() {
        return reason;
    }
}
