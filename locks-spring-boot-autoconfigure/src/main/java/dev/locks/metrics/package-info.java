/**
 * Micrometer meters for the lock service: acquisition and wait timers, held and waiting gauges,
 * renewal, lost-lease and release counters. See {@link dev.locks.metrics.LockMetrics}.
 */
package dev.locks.metrics;
