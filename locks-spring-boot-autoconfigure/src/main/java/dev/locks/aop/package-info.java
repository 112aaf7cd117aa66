/**
 * Annotation-driven locking, shaped like Spring's cache abstraction: an
 * {@link dev.locks.aop.AnnotationLockOperationSource} reads {@code @PathLocked},
 * {@code @ClusterSingleton} and {@code @Semaphore} once per method into
 * {@link dev.locks.aop.LockOperation}s; the {@link dev.locks.aop.LockInterceptor} evaluates their
 * SpEL with the cached {@link dev.locks.aop.LockExpressionEvaluator}, enters the locks through
 * {@link dev.locks.LockService} and releases them after the method or at the end of the caller's
 * transaction; the {@link dev.locks.aop.BeanFactoryLockOperationSourceAdvisor} applies it. Uses core
 * only.
 */
package dev.locks.aop;
