/**
 * Annotations that put a method under a lock: {@link dev.locks.annotation.PathLocked},
 * {@link dev.locks.annotation.ClusterSingleton} and {@link dev.locks.annotation.Semaphore}.
 * The lock is taken before any {@code @Transactional} transaction begins and released around its
 * commit or rollback.
 */
package dev.locks.annotation;
