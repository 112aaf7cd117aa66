package dev.locks.aop;

/**
 * A lock annotation that cannot work as written: a SpEL expression that does not parse, a bean
 * that does not exist, a duration such as {@code "10 parsecs"}, {@code onBusy = SKIP} on a method
 * returning a primitive. Raised when the annotated bean is proxied, so that the application fails
 * at start-up instead of running the method unlocked later. The message names the annotation, the
 * method, the attribute and the reason.
 */
public class InvalidLockAnnotationException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what is wrong, naming the annotation, the method and the attribute
     */
    public InvalidLockAnnotationException(String message) {
        super(message);
    }

    /**
     * @param message what is wrong, naming the annotation, the method and the attribute
     * @param cause the underlying parse or lookup failure
     */
    public InvalidLockAnnotationException(String message, Throwable cause) {
        super(message, cause);
    }
}
