package dev.locks.actuate;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.jackson.JacksonEndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementContextAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.HealthEndpointAutoConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.servlet.autoconfigure.actuate.web.ServletManagementContextAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.actuate.endpoint.web.WebMvcHealthEndpointExtensionAutoConfiguration;

import dev.locks.autoconfigure.actuate.LocksEndpointAutoConfiguration;
import dev.locks.autoconfigure.actuate.LocksHealthAutoConfiguration;

/** A Spring MVC application with actuator and the locks endpoint and health, for MockMvc tests. */
public final class ActuatorContexts {

    private ActuatorContexts() {
    }

    /**
     * @return a runner for a servlet application with Spring MVC, actuator endpoints, health, and the
     *         locks endpoint and health auto-configurations
     */
    public static WebApplicationContextRunner webApplication() {
        return new WebApplicationContextRunner()
                // as in a SpringApplication, so that conditions read "unrestricted" like Boot does
                .withInitializer(context -> context.getEnvironment().setConversionService(new ApplicationConversionService()))
                .withConfiguration(AutoConfigurations.of(
                        JacksonAutoConfiguration.class,
                        HttpMessageConvertersAutoConfiguration.class,
                        WebMvcAutoConfiguration.class,
                        DispatcherServletAutoConfiguration.class,
                        EndpointAutoConfiguration.class,
                        JacksonEndpointAutoConfiguration.class,
                        WebEndpointAutoConfiguration.class,
                        ManagementContextAutoConfiguration.class,
                        ServletManagementContextAutoConfiguration.class,
                        HealthContributorAutoConfiguration.class,
                        HealthContributorRegistryAutoConfiguration.class,
                        HealthEndpointAutoConfiguration.class,
                        WebMvcHealthEndpointExtensionAutoConfiguration.class,
                        LocksEndpointAutoConfiguration.class,
                        LocksHealthAutoConfiguration.class));
    }
}
