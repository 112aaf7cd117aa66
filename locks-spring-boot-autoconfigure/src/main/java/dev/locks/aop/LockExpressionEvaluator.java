package dev.locks.aop;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.CachedExpressionEvaluator;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

/**
 * Parses and evaluates the SpEL of lock annotations. Each expression is parsed once per method and
 * target class and cached (like Spring's {@code CacheOperationExpressionEvaluator}); thread-safe.
 *
 * <p>The context sees arguments by name ({@code #src}, with {@code -parameters}) and position
 * ({@code #p0}, {@code #a0}), the {@link LockExpressionRootObject} ({@code #root.method},
 * {@code #root.target}) and beans ({@code @pathPolicy}).
 */
public class LockExpressionEvaluator extends CachedExpressionEvaluator {

    private final Map<ExpressionKey, Expression> cache = new ConcurrentHashMap<>(64);

    private final ParameterNameDiscoverer parameterNames = new CachedParameterNames(super.getParameterNameDiscoverer());

    /** Names read once per method: the default discoverer reflects on the method at every call. */
    @Override
    protected ParameterNameDiscoverer getParameterNameDiscoverer() {
        return parameterNames;
    }

    /**
     * @param method the invoked method
     * @param args its arguments
     * @param target the target bean
     * @param targetClass the target's class
     * @param targetMethod the most specific method on the target class, whose parameter names count
     * @param beanFactory resolves {@code @bean} references; may be null
     * @return a context for one call
     */
    public EvaluationContext createContext(Method method, Object[] args, Object target, Class<?> targetClass,
            Method targetMethod, BeanFactory beanFactory) {
        LockExpressionRootObject root = new LockExpressionRootObject(method, args, target, targetClass);
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(root, targetMethod, args,
                getParameterNameDiscoverer());
        if (beanFactory != null) {
            context.setBeanResolver(new BeanFactoryResolver(beanFactory));
        }
        return context;
    }

    /**
     * The parsed expression, from the cache after the first call.
     *
     * @param expression the SpEL text
     * @param element the method and target class the expression belongs to
     * @return the parsed expression
     * @throws org.springframework.expression.ParseException if it does not parse
     */
    public Expression parse(String expression, AnnotatedElementKey element) {
        return getExpression(cache, element, expression);
    }

    /**
     * @param expression the SpEL text
     * @param element the method and target class the expression belongs to
     * @param context the call's context
     * @return the value
     * @throws org.springframework.expression.ExpressionException if parsing or evaluation fails
     */
    public Object value(String expression, AnnotatedElementKey element, EvaluationContext context) {
        return parse(expression, element).getValue(context);
    }

    /**
     * @param method a method
     * @return the names its arguments have in the context, or null where they were not compiled in
     */
    public String[] parameterNames(Method method) {
        return getParameterNameDiscoverer().getParameterNames(method);
    }

    /** Parameter names by method, from another discoverer once; a method without names is remembered too. */
    private static final class CachedParameterNames implements ParameterNameDiscoverer {

        private static final String[] NONE = new String[0];

        private final ParameterNameDiscoverer discoverer;

        private final Map<Method, String[]> byMethod = new ConcurrentHashMap<>(64);

        CachedParameterNames(ParameterNameDiscoverer discoverer) {
            this.discoverer = discoverer;
        }

        @Override
        public String[] getParameterNames(Method method) {
            String[] names = byMethod.computeIfAbsent(method, m -> {
                String[] found = discoverer.getParameterNames(m);
                return found == null ? NONE : found;
            });
            return names == NONE ? null : names;
        }

        @Override
        public String[] getParameterNames(Constructor<?> ctor) {
            return discoverer.getParameterNames(ctor);
        }
    }
}
