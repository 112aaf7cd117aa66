package dev.locks.aop;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.core.MethodClassKey;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.ClassUtils;
import org.springframework.util.function.SingletonSupplier;

import dev.locks.InvalidLockPathException;
import dev.locks.LockHandle;
import dev.locks.LockHandles;
import dev.locks.LockRequest;
import dev.locks.LockService;

/**
 * Runs a method under the locks its {@link LockOperation}s ask for (the counterpart of Spring's
 * {@code CacheInterceptor}).
 *
 * <p>Per call: every expression is evaluated first, so that a null path fails before anything is
 * locked or run; then the locks are entered in order in the thread's lock scope ({@link
 * LockService#enter}: re-entry, watchdog renewal); then the method runs.
 *
 * <p>Release: with no transaction active when the locks were taken, in {@code finally}. Inside a
 * transaction, at its end (see {@link TransactionBoundRelease}), never before the work commits. With
 * the advisor ordered outside {@code @Transactional} (the default), the method's own transaction is
 * not active yet when the lock is taken: lock, begin, method, commit, release. Either way the commit
 * first checks that the locks are not known lost ({@link LostLockCommitCheck}, registered here or
 * by {@link LockedTransactionListener}).
 */
public class LockInterceptor implements MethodInterceptor, BeanFactoryAware {

    private static final Logger log = LoggerFactory.getLogger(LockInterceptor.class);

    private final Supplier<LockService> lockService;

    private final LockOperationSource operationSource;

    private final LockExpressionEvaluator evaluator;

    private BeanFactory beanFactory;

    /** Looked up once, its absence too (a lock service that is not on JDBC). */
    private Supplier<Optional<?>> lockStoreResource = Optional::empty;

    private final Map<MethodClassKey, TargetMethod> targetMethods = new ConcurrentHashMap<>(256);

    // by description (one per annotated method), bounded whatever operation source made the operations
    private final Set<String> skippedBefore = ConcurrentHashMap.newKeySet();

    /**
     * @param lockService the lock service, looked up on first use so that the advisor can be created
     *                    early without pulling the DataSource along
     * @param operationSource which locks a method needs
     * @param evaluator the expression cache shared with the operation source
     */
    public LockInterceptor(Supplier<LockService> lockService, LockOperationSource operationSource,
            LockExpressionEvaluator evaluator) {
        this.lockService = SingletonSupplier.of(Objects.requireNonNull(lockService, "lockService"));
        this.operationSource = Objects.requireNonNull(operationSource, "operationSource");
        this.evaluator = Objects.requireNonNull(evaluator, "evaluator");
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    /**
     * The transactional resource the lock store works on: its {@code DataSource}. When the caller's
     * transaction holds it, a deferred release joins that transaction at commit, so that the work
     * and the release commit together; otherwise the release follows the commit. Unset, releases
     * always follow the commit. A supplier, so that the DataSource is not created with the advisor.
     *
     * @param resource gives the lock store's DataSource, or null if unknown
     */
    public void setLockStoreResource(Supplier<?> resource) {
        Objects.requireNonNull(resource, "resource");
        this.lockStoreResource = SingletonSupplier.of(() -> Optional.ofNullable(resource.get()));
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Method method = invocation.getMethod();
        Object target = invocation.getThis();
        Class<?> targetClass = target != null ? AopProxyUtils.ultimateTargetClass(target) : null;
        List<LockOperation> operations = operationSource.getLockOperations(method, targetClass);
        if (operations.isEmpty()) {
            return invocation.proceed();
        }
        TargetMethod targetMethod = targetMethods.computeIfAbsent(new MethodClassKey(method, targetClass),
                key -> TargetMethod.of(method, targetClass));
        List<LockRequest> requests = requests(operations, invocation, targetClass, targetMethod);
        List<LockHandle> held = new ArrayList<>(operations.size());
        try {
            for (int i = 0; i < operations.size(); i++) {
                Optional<LockHandle> handle = enter(operations.get(i), requests.get(i));
                if (handle.isEmpty()) {
                    logSkip(operations.get(i), requests.get(i));
                    LockHandles.releaseAllAfterWork(held, null);
                    return skippedResult(targetMethod.method());
                }
                held.add(handle.get());
            }
        }
        catch (RuntimeException | Error ex) {
            LockHandles.releaseAllAfterWork(held, ex);
            throw ex;
        }
        if (TransactionSynchronizationManager.isSynchronizationActive()
                && TransactionSynchronizationManager.isActualTransactionActive()) {
            TransactionSynchronizationManager.registerSynchronization(new LostLockCommitCheck(held));
            TransactionSynchronizationManager.registerSynchronization(
                    new TransactionBoundRelease(held, lockStoreResource.get().orElse(null)));
            return proceedHolding(held, invocation, targetMethod);
        }
        Throwable failure = null;
        try {
            return proceedHolding(held, invocation, targetMethod);
        }
        catch (Throwable ex) {
            failure = ex;
            throw ex;
        }
        finally {
            LockHandles.releaseAllAfterWork(held, failure);
        }
    }

    /** Runs the method; a transaction that begins inside it checks these locks at its commit. */
    private static Object proceedHolding(List<LockHandle> held, MethodInvocation invocation, TargetMethod targetMethod)
            throws Throwable {
        AnnotationLocksOnThread.entered(held);
        try {
            return targetMethod.awaited(invocation.proceed());
        }
        finally {
            AnnotationLocksOnThread.left();
        }
    }

    private List<LockRequest> requests(List<LockOperation> operations, MethodInvocation invocation,
            Class<?> targetClass, TargetMethod target) {
        InvocationValues values = new InvocationValues(evaluator, target.element(),
                evaluator.createContext(invocation.getMethod(), invocation.getArguments(), invocation.getThis(),
                        targetClass, target.method(), beanFactory));
        List<LockRequest> requests = new ArrayList<>(operations.size());
        for (LockOperation operation : operations) {
            requests.add(operation.newRequest(values));
        }
        return requests;
    }

    private Optional<LockHandle> enter(LockOperation operation, LockRequest request) {
        LockService locks = lockService.get();
        try {
            return operation.skipWhenBusy() ? locks.tryEnter(request) : Optional.of(locks.enter(request));
        }
        catch (InvalidLockPathException ex) {
            InvalidLockPathException named = new InvalidLockPathException(ex.getPath(),
                    ex.getReason() + " (from " + operation.describe() + ")");
            named.initCause(ex);
            throw named;
        }
    }

    /**
     * The implementation method whose parameter names the expressions see, and the key of its
     * parsed expressions; looked up once per method and target class, not per call.
     *
     * @param awaitsFuture whether the method is {@code @Async} and returns a {@link Future}, which
     *                     {@link #awaited} waits for
     */
    private record TargetMethod(Method method, AnnotatedElementKey element, boolean awaitsFuture) {

        static TargetMethod of(Method method, Class<?> targetClass) {
            Method specific = AnnotationLockOperationSource.targetMethod(method, targetClass);
            Class<?> userClass = targetClass != null ? ClassUtils.getUserClass(targetClass) : specific.getDeclaringClass();
            return new TargetMethod(specific, new AnnotatedElementKey(specific, targetClass),
                    AnnotationLockOperationSource.isAsync(specific, userClass)
                            && Future.class.isAssignableFrom(specific.getReturnType()));
        }

        /**
         * Waits for the future an {@code @Async} method returned unfinished, so that the lock covers
         * its work: the method runs on the executor's thread, where Spring's async interceptor waits
         * for the same future right after this one returns, so the wait costs that thread nothing
         * more. A future that never completes keeps the lock, as work that never ends would. The
         * future keeps its outcome for its caller; an interrupt ends the wait, and the release follows.
         */
        Object awaited(Object result) {
            if (awaitsFuture && result instanceof Future<?> future && !future.isDone()) {
                try {
                    future.get();
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    log.warn("Interrupted while waiting for the future of {}: its locks are released while its work"
                            + " may still run", method);
                }
                catch (ExecutionException | CancellationException ex) {
                    // the caller reads the failure from the future itself
                }
            }
            return result;
        }
    }

    /**
     * The first skip of a method at INFO, later ones at DEBUG: on a cluster the other nodes skip every
     * tick, but a skip nobody expects (a run held over from before a restart by lockAtLeastFor, a
     * test sharing a database) should not take DEBUG logging to see.
     */
    private void logSkip(LockOperation operation, LockRequest request) {
        if (skippedBefore.add(operation.describe())) {
            log.info("Skipped {}: {} is held, by another node or an earlier run (a lock kept for its lockAtLeastFor "
                    + "stays held across restarts too); later skips of this method are logged at DEBUG",
                    operation.method(), request);
        }
        else {
            log.debug("Skipped {}: {} is held", operation.method(), request);
        }
    }

    /**
     * A skipped singleton returns nothing: null, or an empty Optional (primitives are refused at
     * start-up). Judged on the implementation: a JDK proxy shows a generic interface method's
     * return type erased.
     */
    private static Object skippedResult(Method method) {
        return method.getReturnType() == Optional.class ? Optional.empty() : null;
    }
}
