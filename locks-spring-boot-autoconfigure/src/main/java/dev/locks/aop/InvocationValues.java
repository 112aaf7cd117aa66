package dev.locks.aop;

import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.ExpressionException;

/**
 * The expression values of one call, with failures turned into messages that name the annotation,
 * the method and the expression.
 */
final class InvocationValues {

    private final LockExpressionEvaluator evaluator;

    private final AnnotatedElementKey element;

    private final EvaluationContext context;

    InvocationValues(LockExpressionEvaluator evaluator, AnnotatedElementKey element, EvaluationContext context) {
        this.evaluator = evaluator;
        this.element = element;
        this.context = context;
    }

    /** The raw value of an expression; null is passed on for the caller to judge. */
    Object value(LockOperation operation, String attribute, String expression) {
        try {
            return evaluator.value(expression, element, context);
        }
        catch (ExpressionException ex) {
            throw new IllegalArgumentException(operation.describe() + ": " + attribute + " expression '" + expression
                    + "' failed: " + ex.getMessage(), ex);
        }
    }

    /** The value as non-blank text (tenant, semaphore key). */
    String text(LockOperation operation, String attribute, String expression) {
        Object value = value(operation, attribute, expression);
        if (value == null) {
            throw new IllegalArgumentException(operation.describe() + ": " + attribute + " expression '" + expression
                    + "' gave null; a lock annotation never runs its method unlocked");
        }
        String text = value.toString();
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException(operation.describe() + ": " + attribute + " expression '" + expression
                    + "' gave a blank value; a lock annotation never runs its method unlocked");
        }
        return text;
    }
}
