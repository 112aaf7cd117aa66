package dev.locks.autoconfigure;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Makes sure an auto-proxy creator exists, as {@code @EnableCaching} does: without one (for example
 * with {@code spring.aop.auto=false}) the lock annotations would be ignored and their methods would
 * run unlocked. Follows {@code spring.aop.proxy-target-class} (default true: class proxies).
 */
class LocksProxyRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {

    private Environment environment;

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
        if (environment.getProperty("spring.aop.proxy-target-class", Boolean.class, Boolean.TRUE)) {
            AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
        }
    }
}
