package dev.locks.aop;

import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.ClassUtils;

/**
 * The class whose lock annotations count for a bean, as the start-up checks judge it: behind
 * another feature's proxy (a JDK proxy for {@code @Transactional}, say) the annotations are on the
 * target's class, not the proxy's. Beans not created yet, and factory beans' products, are judged by
 * their type alone, so that a check creates nothing.
 */
public final class BeanTargetClass {

    private BeanTargetClass() {
    }

    /**
     * @param beanFactory the context's bean factory
     * @param name a bean name
     * @return the bean's user class, or null if its type cannot be told without creating it
     */
    public static Class<?> of(ConfigurableListableBeanFactory beanFactory, String name) {
        if (beanFactory.containsSingleton(name) && beanFactory.isSingleton(name) && !beanFactory.isFactoryBean(name)) {
            return AopProxyUtils.ultimateTargetClass(beanFactory.getBean(name));
        }
        Class<?> type = beanFactory.getType(name, false);
        return type == null ? null : ClassUtils.getUserClass(type);
    }
}
