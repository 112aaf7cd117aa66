package dev.locks.aop;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.Assign;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.Elvis;
import org.springframework.expression.spel.ast.OpEQ;
import org.springframework.expression.spel.ast.OpNE;
import org.springframework.expression.spel.ast.Ternary;
import org.springframework.expression.spel.ast.VariableReference;

/**
 * Checks at start-up what a lock expression refers to, so that a typo fails the start naming it
 * instead of reading, at the first call, as an argument that was null: each {@code @bean} must exist,
 * and each {@code #variable} must be a parameter of the method (by name, or {@code #p0} and
 * {@code #a0}), {@code #root} or {@code #this}, or be assigned in the expression itself. Left alone
 * are the variables of an Elvis's tested side, of a ternary's two branches and of an equality test:
 * SpEL reads an undefined variable as null, and such an expression may be meant for methods with and
 * without that parameter (a class-level {@code #id ?: '/all'}).
 */
final class ExpressionReferenceCheck {

    private final BeanFactory beanFactory;

    /**
     * @param beanFactory where referenced beans must be; null to leave bean references unchecked
     */
    ExpressionReferenceCheck(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    /**
     * @param operation the operation the expression belongs to, for the message
     * @param text the expression as written
     * @param ast the parsed expression
     * @param method the method whose parameters the expression sees
     * @param parameterNames their names, or null where they were not compiled in
     * @throws InvalidLockAnnotationException naming the first reference that cannot resolve
     */
    void check(LockOperation operation, String text, SpelNode ast, Method method, String[] parameterNames) {
        Set<String> defined = new LinkedHashSet<>(Set.of("root", "this"));
        for (int i = 0; i < method.getParameterCount(); i++) {
            defined.add("p" + i);
            defined.add("a" + i);
        }
        if (parameterNames != null) {
            defined.addAll(Arrays.asList(parameterNames));
        }
        collectAssigned(ast, defined);
        checkNode(operation, text, ast, defined, parameterNames, false);
    }

    private void checkNode(LockOperation operation, String text, SpelNode node, Set<String> defined,
            String[] parameterNames, boolean nullTested) {
        if (node instanceof BeanReference bean && beanFactory != null && !beanFactory.containsBean(bean.getName())) {
            throw new InvalidLockAnnotationException(operation.describe() + ": expression '" + text
                    + "' refers to bean '" + bean.getName() + "', but there is no such bean");
        }
        if (node instanceof VariableReference variable && !nullTested && !defined.contains(name(variable))) {
            throw new InvalidLockAnnotationException(operation.describe() + ": expression '" + text + "' refers to "
                    + variable.toStringAST() + ", which is no parameter of the method" + known(parameterNames));
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            checkNode(operation, text, node.getChild(i), defined, parameterNames, nullTested || guards(node, i));
        }
    }

    /** Whether the {@code child}-th operand of {@code node} may be an undefined variable, read as null. */
    private static boolean guards(SpelNode node, int child) {
        if (node instanceof Elvis) {
            return child == 0;
        }
        if (node instanceof Ternary) {
            return child > 0;
        }
        return node instanceof OpEQ || node instanceof OpNE;
    }

    private static String known(String[] parameterNames) {
        if (parameterNames == null) {
            return ": its parameter names were not compiled in. Compile with -parameters (spring-boot-starter-parent"
                    + " and Spring Boot's Gradle plugin set it; without the parent, set <parameters>true</parameters> on"
                    + " maven-compiler-plugin), or refer to the arguments by position: #p0, #p1, ...";
        }
        return parameterNames.length == 0 ? " (it has none)"
                : " (its parameters: " + String.join(", ", parameterNames) + "; by position #p0, #p1, ...)";
    }

    /** Variables an expression assigns ({@code #x = ...}) before it may read them. */
    private static void collectAssigned(SpelNode node, Set<String> defined) {
        if (node instanceof Assign && node.getChildCount() > 0 && node.getChild(0) instanceof VariableReference target) {
            defined.add(name(target));
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            collectAssigned(node.getChild(i), defined);
        }
    }

    private static String name(VariableReference variable) {
        // the node shows itself as #name
        return variable.toStringAST().substring(1);
    }
}
