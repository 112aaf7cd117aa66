/**
 * Auto-configuration of the lock service's Micrometer meters; active when Micrometer and a
 * {@code MeterRegistry} are present.
 */
package dev.locks.autoconfigure.metrics;
