package dev.locks.jdbc;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The database, dialect and driver settings that the {@code @Nested} contract classes of a test
 * class run on, so that each nested class only names the contract it runs
 * ({@link LockServiceContract#database()} reads it from the enclosing class).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@interface ContractsOn {

    /** @return the database under test */
    dev.locks.testing.TestDatabase value();

    /** @return the dialect to name to the builder; {@code SqlDialect.class} detects it from the connection */
    Class<? extends SqlDialect> dialect() default SqlDialect.class;

    /** @return whether every pool has {@link ConnectorJTuning#RECOMMENDED} as data source properties */
    boolean serverPrepared() default false;
}
