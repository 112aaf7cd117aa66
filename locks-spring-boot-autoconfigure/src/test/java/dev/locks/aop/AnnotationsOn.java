package dev.locks.aop;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import dev.locks.testing.TestDatabase;

/**
 * The database that the {@code @Nested} annotation contracts of a test class run on, so that each
 * nested class only names the contract it runs ({@link AnnotationContract#database()} reads it
 * from the enclosing class).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@interface AnnotationsOn {

    /** @return the database under test */
    TestDatabase value();
}
