package dev.locks.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.transaction.ConfigurableTransactionManager;

import dev.locks.aop.LockedTransactionListener;

/**
 * Adds the {@link LockedTransactionListener} to every transaction manager bean: Spring Boot's
 * customizers reach only the managers it builds, and an application with several DataSources
 * usually declares its own, whose commits would otherwise go unchecked. A manager created before the
 * post-processors are registered (one a post-processor itself depends on) is not reached.
 */
final class TransactionManagerListenerRegistrar implements BeanPostProcessor {

    private final ObjectProvider<LockedTransactionListener> listener;

    TransactionManagerListenerRegistrar(ObjectProvider<LockedTransactionListener> listener) {
        this.listener = listener;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof ConfigurableTransactionManager manager && manager.getTransactionExecutionListeners()
                .stream().noneMatch(LockedTransactionListener.class::isInstance)) {
            LockedTransactionListener available = listener.getIfUnique();
            if (available != null) {
                manager.addListener(available);
            }
        }
        return bean;
    }
}
