package dev.locks.aop;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.event.EventListener;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.Schedules;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import dev.locks.DefaultLockService;
import dev.locks.LockService;
import dev.locks.annotation.ClusterSingleton;
import dev.locks.annotation.PathLocked;
import dev.locks.annotation.Semaphore;

/**
 * Reads {@link PathLocked}, {@link ClusterSingleton} and {@link Semaphore} from methods and classes,
 * once per method and target class (like Spring's {@code AnnotationCacheOperationSource}).
 *
 * <p>An annotation on the method wins over one of the same kind on its class; a class annotation
 * applies to every public method. Annotations on interface methods and superclasses count. Several
 * kinds on one method are taken outermost first: singleton, semaphore, paths.
 *
 * <p>The first time a class is seen (when the auto-proxy creator asks whether to proxy it, during
 * start-up) every method of the class is checked: durations, names, limits, return types, the SpEL
 * syntax and the beans that expressions refer to. A bad annotation fails the start, with an
 * {@link InvalidLockAnnotationException} naming the method and the attribute. The parsed
 * expressions stay in the {@link LockExpressionEvaluator}'s cache for the calls.
 */
public class AnnotationLockOperationSource implements LockOperationSource, BeanFactoryAware,
        SmartInitializingSingleton {

    private static final Logger log = LoggerFactory.getLogger(AnnotationLockOperationSource.class);

    /** Spring MVC's asynchronous results, named so that the web module stays optional. */
    private static final List<String> LATER_WORK = List.of(
            "org.springframework.web.context.request.async.DeferredResult",
            "org.springframework.web.context.request.async.WebAsyncTask",
            "org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter");

    private static final Set<Class<? extends Annotation>> ANNOTATIONS = Set.of(PathLocked.class,
            ClusterSingleton.class, Semaphore.class);

    private final LockExpressionEvaluator evaluator;

    private final Map<MethodClassKey, List<LockOperation>> cache = new ConcurrentHashMap<>(256);

    private final Set<Class<?>> checkedClasses = ConcurrentHashMap.newKeySet();

    /** The method each default singleton and semaphore name was given to, by kind and name. */
    private final Map<String, NamedMethod> defaultNames = new ConcurrentHashMap<>();

    private BeanFactory beanFactory;

    /** The lock service's shortest watched lease, once every singleton exists; null before. */
    private volatile Duration shortestLease;

    /**
     * @param evaluator parses the expressions at start-up and keeps them for the calls
     */
    public AnnotationLockOperationSource(LockExpressionEvaluator evaluator) {
        this.evaluator = evaluator;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    /**
     * Checks the leases of the methods read so far against the lock service's watchdog, and those of
     * methods read later as they come. Not before: the methods are read while beans are proxied, and
     * asking for the lock service then could create it too early, or in a cycle.
     */
    @Override
    public void afterSingletonsInstantiated() {
        if (createdLockService() instanceof DefaultLockService service) {
            Duration shortest = service.settings().shortestWatchedLease();
            // set first: a bean created meanwhile on another thread is checked as it is read
            shortestLease = shortest;
            cache.values().forEach(operations -> operations.forEach(operation -> operation.checkLease(shortest)));
        }
    }

    /**
     * The application's lock service if it has been created: a lazy one is left alone (its leases
     * are then checked at each call, as without this check), since creating it here would connect
     * to the database during a start that was asked to be lazy.
     */
    private Object createdLockService() {
        if (beanFactory instanceof ConfigurableListableBeanFactory factory) {
            String[] names = factory.getBeanNamesForType(LockService.class, false, false);
            if (names.length > 0 && Arrays.stream(names).allMatch(factory::containsSingleton)) {
                // the one the interceptor calls: the only one, or the primary
                return factory.getBeanProvider(LockService.class).getIfUnique();
            }
        }
        return null;
    }

    @Override
    public boolean isCandidateClass(Class<?> targetClass) {
        return AnnotationUtils.isCandidateClass(targetClass, ANNOTATIONS);
    }

    @Override
    public List<LockOperation> getLockOperations(Method method, Class<?> targetClass) {
        if (ReflectionUtils.isObjectMethod(method)) {
            return List.of();
        }
        MethodClassKey key = new MethodClassKey(method, targetClass);
        List<LockOperation> operations = cache.get(key);
        if (operations != null) {
            return operations;
        }
        if (targetClass != null && checkedClasses.add(targetClass)) {
            checkAllMethods(targetClass);
            // the check computed this method too, and computing again would repeat its warnings
            operations = cache.get(key);
            if (operations != null) {
                return operations;
            }
        }
        operations = compute(method, targetClass);
        cache.put(key, operations);
        return operations;
    }

    /**
     * The method whose annotations and parameter names count: the implementation on the target class.
     *
     * @param method the invoked method
     * @param targetClass the target's class, or null
     * @return the most specific method
     */
    static Method targetMethod(Method method, Class<?> targetClass) {
        return targetClass == null ? method : AopUtils.getMostSpecificMethod(method, ClassUtils.getUserClass(targetClass));
    }

    private void checkAllMethods(Class<?> targetClass) {
        try {
            for (Method method : ReflectionUtils.getUniqueDeclaredMethods(ClassUtils.getUserClass(targetClass),
                    ReflectionUtils.USER_DECLARED_METHODS)) {
                getLockOperations(method, targetClass);
            }
        }
        catch (RuntimeException ex) {
            checkedClasses.remove(targetClass);
            throw ex;
        }
    }

    private List<LockOperation> compute(Method method, Class<?> targetClass) {
        Method specific = targetMethod(method, targetClass);
        Class<?> userClass = targetClass != null ? ClassUtils.getUserClass(targetClass) : specific.getDeclaringClass();
        LockAnnotationParser parser = new LockAnnotationParser(specific, userClass);
        ClusterSingleton singleton = find(specific, userClass, ClusterSingleton.class, parser);
        Semaphore semaphore = find(specific, userClass, Semaphore.class, parser);
        PathLocked paths = find(specific, userClass, PathLocked.class, parser);
        if (singleton == null && semaphore == null && paths == null) {
            return List.of();
        }
        checkReturnType(specific, userClass, parser);
        List<LockOperation> operations = new ArrayList<>(3);
        if (singleton != null) {
            SingletonOperation operation = parser.parse(singleton);
            claimIfDefault(singleton.name(), operation, operation.name(), new NamedMethod(userClass, specific));
            if ((operation.lockAtLeastFor() == null || operation.lockAtLeastFor().isZero())
                    && isScheduled(specific)) {
                // every node's scheduler fires: a short run frees the lock before a node whose clock is a
                // little late fires the same tick, and that node runs it again
                log.warn("{} is @Scheduled without lockAtLeastFor: a node that fires the same tick after the"
                        + " winner's run has ended runs it again; set lockAtLeastFor a little below the period",
                        operation.describe());
            }
            operations.add(operation);
        }
        if (semaphore != null) {
            SemaphoreOperation operation = parser.parse(semaphore);
            claimIfDefault(semaphore.name(), operation, operation.name(), new NamedMethod(userClass, specific));
            operations.add(operation);
        }
        if (paths != null) {
            operations.add(parser.parse(paths));
        }
        AnnotatedElementKey element = new AnnotatedElementKey(specific, targetClass);
        Duration shortest = shortestLease;
        for (LockOperation operation : operations) {
            checkExpressions(operation, element, specific);
            if (shortest != null) {
                operation.checkLease(shortest);
            }
        }
        return List.copyOf(operations);
    }

    /** A method as the default names see it: on the bean's class, which may inherit it. */
    private record NamedMethod(Class<?> userClass, Method method) {

        @Override
        public String toString() {
            return LockAnnotationParser.describe(userClass.getName(), method);
        }
    }

    /**
     * A default name ({@code SimpleClassName.method}) belongs to one method of one class: overloads,
     * or classes of one simple name in different packages (inheriting one method or not), would
     * otherwise share a singleton or a semaphore without anyone asking for it. Beans of one class
     * share it, since they run the same method.
     */
    private void claimIfDefault(String nameAttribute, LockOperation operation, String name, NamedMethod method) {
        if (!nameAttribute.isBlank()) {
            return;
        }
        NamedMethod first = defaultNames.putIfAbsent(operation.getClass().getSimpleName() + " " + name, method);
        if (first != null && !first.equals(method)) {
            throw new InvalidLockAnnotationException(operation.describe() + ": its default name '" + name
                    + "' is also that of " + first + ", so the two would share one lock; set name on one of them");
        }
    }

    /** The method's own annotation of the kind, else (for public methods) its class's. */
    private static <A extends Annotation> A find(Method method, Class<?> userClass, Class<A> type,
            LockAnnotationParser parser) {
        A onMethod = AnnotatedElementUtils.findMergedAnnotation(method, type);
        if (onMethod != null) {
            if (Modifier.isPrivate(method.getModifiers()) || Modifier.isStatic(method.getModifiers())) {
                throw new InvalidLockAnnotationException("@" + type.getSimpleName() + " on " + parser.description()
                        + ": a private or static method is never"
                        + " called through the proxy, so it would run unlocked; make it public (or protected for"
                        + " class proxies) and call it through the bean");
            }
            checkNotFinal(method, type, parser);
            if (isInitCallback(method, userClass)) {
                throw new InvalidLockAnnotationException("@" + type.getSimpleName() + " on " + parser.description()
                        + ": Spring calls an init method on the bean itself, before the proxy exists, so it would run"
                        + " unlocked on every node; move the work to a method called through the bean, for instance from"
                        + " an ApplicationRunner or an @EventListener(ApplicationReadyEvent.class)");
            }
            return onMethod;
        }
        if (!Modifier.isPublic(method.getModifiers()) || Modifier.isStatic(method.getModifiers())
                || isInitCallback(method, userClass)) {
            // a class-level annotation cannot cover an init method, which never passes the proxy
            if (!Modifier.isPublic(method.getModifiers()) && !Modifier.isStatic(method.getModifiers())
                    && !isInitCallback(method, userClass) && calledBySpring(method)
                    && AnnotatedElementUtils.hasAnnotation(userClass, type)) {
                // IDEs suggest dropping public from @Scheduled methods, and the class annotation reads as covering them
                throw new InvalidLockAnnotationException("@" + type.getSimpleName() + " on class "
                        + userClass.getSimpleName() + " covers its public methods only, but " + parser.description()
                        + " is not public and Spring calls it on a schedule or an event, so it would run unlocked;"
                        + " make it public, or annotate the method itself");
            }
            return null;
        }
        A onClass = AnnotatedElementUtils.findMergedAnnotation(userClass, type);
        if (onClass != null) {
            checkNotFinal(method, type, parser);
        }
        return onClass;
    }

    /** Whether Spring itself calls {@code method}, on a schedule or for an event. */
    private static boolean calledBySpring(Method method) {
        return isScheduled(method)
                || AnnotatedElementUtils.hasAnnotation(method, EventListener.class);
    }

    /** Whether {@code method} is {@code @Scheduled}, once or repeated (then the annotations sit in {@code @Schedules}). */
    private static boolean isScheduled(Method method) {
        return AnnotatedElementUtils.hasAnnotation(method, Scheduled.class)
                || AnnotatedElementUtils.hasAnnotation(method, Schedules.class);
    }

    /** Whether Spring calls {@code method} on the raw bean while initialising it. */
    private static boolean isInitCallback(Method method, Class<?> userClass) {
        for (Annotation annotation : method.getAnnotations()) {
            String name = annotation.annotationType().getName();
            if (name.equals("jakarta.annotation.PostConstruct") || name.equals("javax.annotation.PostConstruct")) {
                return true;
            }
        }
        return method.getName().equals("afterPropertiesSet") && method.getParameterCount() == 0
                && InitializingBean.class.isAssignableFrom(userClass);
    }

    private static void checkNotFinal(Method method, Class<? extends Annotation> type, LockAnnotationParser parser) {
        if (Modifier.isFinal(method.getModifiers())) {
            throw new InvalidLockAnnotationException("@" + type.getSimpleName() + " on " + parser.description()
                    + ": a final method cannot be overridden by the class proxy, so it would run unlocked; remove"
                    + " final, or annotate the methods to lock rather than the class");
        }
    }

    /** Work that continues after the method returns would run after the release. */
    private static void checkReturnType(Method method, Class<?> userClass, LockAnnotationParser parser) {
        if (KotlinDetector.isSuspendingFunction(method)) {
            // Spring calls it through a Mono or Flow that the proxy awaits only after the interceptor has released
            throw new InvalidLockAnnotationException("Lock annotation on " + parser.description()
                    + ": suspend functions are not supported; the lock would be released before the body runs"
                    + " (or at its first suspension point); lock inside the coroutine instead");
        }
        Class<?> returned = method.getReturnType();
        if (isA(returned, "org.reactivestreams.Publisher")
                || isA(returned, "java.util.concurrent.Flow$Publisher")) {
            throw new InvalidLockAnnotationException("Lock annotation on " + parser.description()
                    + ": reactive return types are not supported; the lock would be released when the publisher"
                    + " is returned, before its work runs");
        }
        if (!isAsync(method, userClass) && (Future.class.isAssignableFrom(returned) || CompletionStage.class.isAssignableFrom(returned))) {
            throw new InvalidLockAnnotationException("Lock annotation on " + parser.description()
                    + ": a method returning " + returned.getSimpleName() + " may finish its work on another thread"
                    + " after it returns, and so after the release; make it @Async (the lock is then held on the"
                    + " thread that runs it) or lock inside the asynchronous work");
        }
        if (!Future.class.isAssignableFrom(returned) && !CompletionStage.class.isAssignableFrom(returned)
                && ReactiveAdapterRegistry.getSharedInstance().getAdapter(returned) != null) {
            // RxJava, Mutiny, Kotlin's Flow and whatever else Spring adapts: lazy until subscribed
            throw new InvalidLockAnnotationException("Lock annotation on " + parser.description()
                    + ": reactive return types are not supported; the lock would be released when the "
                    + returned.getSimpleName() + " is returned, before its work runs");
        }
        // @Async returns only void or a Future: for these the returned object's work always runs later
        if (Callable.class.isAssignableFrom(returned) || LATER_WORK.stream().anyMatch(n -> isA(returned, n))) {
            throw new InvalidLockAnnotationException("Lock annotation on " + parser.description()
                    + ": a method returning " + returned.getSimpleName() + " hands its work to run after it returns,"
                    + " and so after the release; lock inside that work instead");
        }
    }

    /** Whether Spring runs {@code method} on an executor: {@code @Async} on it or on its class. */
    static boolean isAsync(Method method, Class<?> userClass) {
        return AnnotatedElementUtils.hasAnnotation(method, Async.class)
                || AnnotatedElementUtils.hasAnnotation(userClass, Async.class);
    }

    /** Whether {@code type} is, extends or implements the type named {@code name}, which may be absent. */
    static boolean isA(Class<?> type, String name) {
        if (type == null) {
            return false;
        }
        if (type.getName().equals(name)) {
            return true;
        }
        for (Class<?> parent : type.getInterfaces()) {
            if (isA(parent, name)) {
                return true;
            }
        }
        return isA(type.getSuperclass(), name);
    }

    private void checkExpressions(LockOperation operation, AnnotatedElementKey element, Method method) {
        if (evaluator == null) {
            return;
        }
        ExpressionReferenceCheck references = new ExpressionReferenceCheck(beanFactory);
        for (String text : operation.expressions()) {
            Expression expression;
            try {
                expression = evaluator.parse(text, element);
            }
            catch (ParseException ex) {
                throw new InvalidLockAnnotationException(operation.describe() + ": expression '" + text
                        + "' is not valid SpEL: " + ex.getMessage(), ex);
            }
            if (expression instanceof SpelExpression spel) {
                references.check(operation, text, spel.getAST(), method, evaluator.parameterNames(method));
            }
        }
    }
}
