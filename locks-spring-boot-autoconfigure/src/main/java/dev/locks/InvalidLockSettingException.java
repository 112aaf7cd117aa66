package dev.locks;

/**
 * A {@link LockSettings} value the engine cannot honour, refused when the settings are built. It names
 * the builder setting, so that a configuration layer can report the failure under its own name for it
 * (the Spring Boot auto-configuration names the {@code locks.*} property).
 */
public class InvalidLockSettingException extends IllegalArgumentException {

    private final String setting;

    /**
     * @param setting the builder setting, as its method is named ({@code defaultLease})
     * @param reason what is wrong with the value, and what would do
     */
    public InvalidLockSettingException(String setting, String reason) {
        super(setting + " " + reason);
        this.setting = setting;
    }

    /** @return the builder setting refused, as its method is named */
    public String setting() {
        return setting;
    }
}
