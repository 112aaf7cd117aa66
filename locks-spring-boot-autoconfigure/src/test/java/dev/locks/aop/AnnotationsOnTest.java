package dev.locks.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import org.junit.jupiter.api.Test;

import dev.locks.testing.TestDatabase;

/** What a nested annotation contract runs on when its enclosing class names it with {@link AnnotationsOn}. */
@AnnotationsOn(TestDatabase.POSTGRESQL)
class AnnotationsOnTest {

    /** A contract as the AnnotationsOn*Test classes nest them; not {@code @Nested}, so it never runs. */
    class Contract extends AnnotationContract {
    }

    /** A contract nested in a class that names no database. */
    static class Unnamed {
        class Contract extends AnnotationContract {
        }
    }

    @Test
    void aNestedContractRunsOnTheDatabaseOfItsEnclosingClass() {
        assertThat(new Contract().database()).isEqualTo(TestDatabase.POSTGRESQL);
    }

    @Test
    void aContractWhoseEnclosingClassNamesNoDatabaseSaysSo() {
        assertThatIllegalStateException().isThrownBy(() -> new Unnamed().new Contract().database())
                .withMessageContaining("@AnnotationsOn");
    }
}
