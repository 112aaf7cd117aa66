/**
 * Spring Boot auto-configuration of the lock service, its tables and the lock annotations, with
 * {@code locks.*} properties.
 */
package dev.locks.autoconfigure;
