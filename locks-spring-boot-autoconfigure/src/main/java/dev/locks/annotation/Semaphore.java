package dev.locks.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the method holding one of {@code max} permits shared by the whole cluster:
 *
 * <pre>{@code
 * @Semaphore(name = "exports", key = "#customer", max = 10, waitAtMost = "30s")
 * public byte[] export(String customer, String folder) { ... }
 * }</pre>
 *
 * Permits are leased and renewed like locks: a crashed holder's permit returns when its lease ends.
 * With a {@code key}, each key value has its own semaphore named {@code name:key} (above: at most
 * ten exports per customer); a null key is an error before the method runs.
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface Semaphore {

    /** @return the semaphore's name; empty for {@code ClassName.methodName} */
    String name() default "";

    /** @return a SpEL expression for a per-key semaphore ({@code name:key}), or empty for one semaphore */
    String key() default "";

    /**
     * @return the most holders at once across the cluster; where holders asked for a smaller max (a
     *         rolling change of it), the smaller one applies while they hold
     */
    int max();

    /** @return how long to wait for a permit, e.g. {@code "30s"}; empty for {@code locks.default-wait} */
    String waitAtMost() default "";

    /** @return the lease of a permit, renewed while the method runs; empty for the default lease */
    String lease() default "";

    /** @return a SpEL expression for the tenant, or empty for the default tenant */
    String tenant() default "";
}
