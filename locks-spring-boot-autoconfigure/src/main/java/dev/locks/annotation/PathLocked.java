package dev.locks.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import dev.locks.LockMode;

/**
 * Runs the method holding hierarchical path locks, all-or-nothing:
 *
 * <pre>{@code
 * @PathLocked(paths = "#src, #dst", tenant = "#customer")
 * @Transactional
 * public void move(String customer, String src, String dst) { ... }
 * }</pre>
 *
 * On a class, applies to every public method; an annotation on the method replaces the class's.
 * The lock is taken before the method's {@code @Transactional} transaction begins, its lease is
 * renewed while the method runs, and it is released after that transaction commits or rolls back.
 * Called inside a transaction that is already running, the release waits for that transaction's
 * end. Nested annotated calls on the same thread re-enter what the outer call holds.
 *
 * <p>Expressions are parsed once, when the bean is proxied; one that does not parse, refers to a
 * missing bean, or a duration such as {@code "10 parsecs"} fails the application's start.
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface PathLocked {

    /**
     * Comma-separated SpEL expressions, each yielding a path, an array or collection of paths, or an
     * object whose {@code toString()} is a path. Arguments by name ({@code #src}, needs
     * {@code -parameters}), by position ({@code #p0}, {@code #a0}), {@code #root.method},
     * {@code #root.target}, beans ({@code @bean}). Literal paths need quotes: {@code "'/reports'"}.
     * Commas inside quotes, parentheses, brackets and braces do not separate expressions. A null,
     * blank or empty result is an {@link IllegalArgumentException} before the method runs, never an
     * unlocked call.
     *
     * @return the path expressions
     */
    String paths();

    /** @return the lock mode */
    LockMode mode() default LockMode.EXCLUSIVE;

    /**
     * @return a SpEL expression for the tenant, or empty for {@code locks.default-tenant}; a null
     *         result is an error, not the default tenant
     */
    String tenant() default "";

    /** @return the lease, e.g. {@code "30s"}, or empty for {@code locks.default-lease} */
    String lease() default "";

    /** @return how long to wait, e.g. {@code "10s"}, or empty for {@code locks.default-wait} */
    String waitAtMost() default "";
}
