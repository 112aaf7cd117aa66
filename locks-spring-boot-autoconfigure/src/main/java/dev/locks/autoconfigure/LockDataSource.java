package dev.locks.autoconfigure;

import javax.sql.DataSource;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;

/**
 * Finds the DataSource that holds the lock tables: the bean named by
 * {@code locks.jdbc.data-source-bean}, else the application's only or primary DataSource.
 */
final class LockDataSource {

    private LockDataSource() {
    }

    static DataSource find(String beanName, BeanFactory beanFactory) {
        if (beanName != null && !beanName.isBlank()) {
            try {
                return beanFactory.getBean(beanName.strip(), DataSource.class);
            }
            catch (NoSuchBeanDefinitionException ex) {
                throw new IllegalStateException("locks.jdbc.data-source-bean names '" + beanName
                        + "', but there is no DataSource bean of that name", ex);
            }
        }
        try {
            return beanFactory.getBean(DataSource.class);
        }
        catch (NoUniqueBeanDefinitionException ex) {
            throw new IllegalStateException("The application has " + ex.getNumberOfBeansFound()
                    + " DataSource beans and none is primary; set locks.jdbc.data-source-bean to the one that holds"
                    + " the lock tables", ex);
        }
    }
}
