package dev.locks.aop;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractBeanFactoryPointcutAdvisor;
import org.springframework.core.Ordered;

/**
 * The advisor that puts the {@link LockInterceptor} on methods with lock annotations (the
 * counterpart of Spring's {@code BeanFactoryCacheOperationSourceAdvisor}).
 *
 * <p>Its order defaults to {@link #DEFAULT_ORDER}: outside {@code @Transactional} and
 * {@code @Cacheable} (both {@link Ordered#LOWEST_PRECEDENCE} by default), so that the lock is taken
 * before the transaction begins and released after it commits, and inside method security, so that
 * a caller who may not call the method takes no lock.
 */
public class BeanFactoryLockOperationSourceAdvisor extends AbstractBeanFactoryPointcutAdvisor {

    private static final long serialVersionUID = 1L;

    /** Outside the transaction and cache interceptors, inside Spring Security's method interceptors. */
    public static final int DEFAULT_ORDER = Ordered.LOWEST_PRECEDENCE - 1000;

    private final transient LockOperationSourcePointcut pointcut;

    /**
     * @param source which methods need locks
     */
    public BeanFactoryLockOperationSourceAdvisor(LockOperationSource source) {
        this.pointcut = new LockOperationSourcePointcut(source);
        setOrder(DEFAULT_ORDER);
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }
}
