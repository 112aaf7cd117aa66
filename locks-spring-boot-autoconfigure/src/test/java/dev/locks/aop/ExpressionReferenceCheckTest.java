package dev.locks.aop;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.lang.reflect.Method;

import org.junit.jupiter.api.Test;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/** What the start-up check says of a reference it cannot resolve. */
class ExpressionReferenceCheckTest {

    private final LockOperation operation = mock(LockOperation.class);

    @Test
    void withoutCompiledParameterNamesItSaysHowToGetThemOrToUsePositions() throws Exception {
        when(operation.describe()).thenReturn("@PathLocked on Files.move(String, String)");
        Method move = Files.class.getDeclaredMethod("move", String.class, String.class);
        SpelExpression expression = (SpelExpression) new SpelExpressionParser().parseExpression("#src");

        assertThatThrownBy(() -> new ExpressionReferenceCheck(null).check(operation, "#src", expression.getAST(), move,
                null))
                .isInstanceOf(InvalidLockAnnotationException.class)
                .hasMessageContaining("@PathLocked on Files.move(String, String): expression '#src' refers to #src")
                .hasMessageContaining("its parameter names were not compiled in. Compile with -parameters")
                .hasMessageContaining("#p0, #p1");
    }

    static class Files {
        void move(String src, String dst) {
        }
    }
}
