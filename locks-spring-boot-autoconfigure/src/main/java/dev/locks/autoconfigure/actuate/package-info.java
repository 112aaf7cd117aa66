/**
 * Auto-configuration of the {@code locks} actuator endpoint and health indicator; active when
 * Spring Boot's actuator (for the endpoint) or health support (for the indicator) is present.
 */
package dev.locks.autoconfigure.actuate;
