/**
 * Quartz integration: {@link dev.locks.quartz.ClusterSingletonTriggerListener} runs each scheduled fire
 * of a {@link dev.locks.annotation.ClusterSingleton} job on exactly one node of the cluster. Uses the
 * core API only.
 */
package dev.locks.quartz;
