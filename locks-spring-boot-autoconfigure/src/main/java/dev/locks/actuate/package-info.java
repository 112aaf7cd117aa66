/**
 * Operations support for the lock service: the {@code locks} actuator endpoint
 * ({@link dev.locks.actuate.LocksEndpoint}) and the {@code locks} health indicator
 * ({@link dev.locks.actuate.LocksHealthIndicator}).
 */
package dev.locks.actuate;
