package dev.locks.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the method on at most one node of the cluster at a time: for {@code @Scheduled} jobs,
 * start-up work and, on a Quartz {@code Job} class, once per scheduled fire time. On a class, each
 * public method is its own singleton (named after the method unless {@code name} is set).
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 2 * * *")
 * @ClusterSingleton(name = "nightly-report", lockAtMostFor = "10m", lockAtLeastFor = "30s")
 * public void nightlyReport() { ... }
 * }</pre>
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface ClusterSingleton {

    /**
     * @return the singleton's name; empty for {@code ClassName.methodName}. On a Quartz job class it
     *         prefixes the job key in the lock names, which stay one per job detail
     */
    String name() default "";

    /** @return the lease while running, renewed by the watchdog, e.g. {@code "10m"}; empty for the default lease */
    String lockAtMostFor() default "";

    /**
     * @return how long the lock stays taken after the method started, even if it ends sooner, so that a
     *         node whose clock fires a little later skips the same run; e.g. {@code "5s"}
     */
    String lockAtLeastFor() default "";

    /**
     * @return what to do when another node holds the singleton; {@link OnBusy#SKIP} on a method
     *         returning a primitive fails the application's start, as a skipped call has no value
     */
    OnBusy onBusy() default OnBusy.SKIP;

    /**
     * @return for {@link OnBusy#WAIT}: how long to wait; empty for {@code locks.default-wait}. Set with
     *         another {@code onBusy} it fails the application's start
     */
    String waitAtMost() default "";

    /** @return a SpEL expression for the tenant, or empty for the default tenant */
    String tenant() default "";

    /** What a busy singleton means for the caller. */
    enum OnBusy {

        /**
         * Return without running: {@code null}, or an empty {@code Optional}; a method's first skip is
         * logged at INFO, later ones at DEBUG.
         */
        SKIP,

        /** Wait for the other node to finish, then run (start-up work that must happen once). */
        WAIT,

        /** Throw {@link dev.locks.LockTimeoutException} naming the holder, without waiting. */
        FAIL
    }
}
