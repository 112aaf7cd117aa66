package dev.locks.quartz;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.text.Normalizer;
import java.time.Duration;
import java.util.Date;
import java.util.HexFormat;
import java.util.UUID;

import org.quartz.JobExecutionContext;
import org.quartz.TriggerKey;
import org.quartz.utils.Key;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.support.SimpleEvaluationContext;

import dev.locks.LockRequest;

/**
 * How one guarded Quartz job is locked: the singleton names, the lease of a run, how long a fire's
 * marker outlives the run, and whether runs may overlap across nodes.
 *
 * @param jobName the job part of the lock names: the job key, after the {@code @ClusterSingleton} name
 *                if it sets one
 * @param lease lease of a run, renewed while it runs; null for the lock service's default
 * @param fireMarkerRetention how long after a fire was taken its marker stays, whatever the run's length
 * @param oneRunAtATime the job class is {@code @DisallowConcurrentExecution}: no two nodes run it at once
 * @param tenant SpEL giving the tenant (root: the {@link JobExecutionContext}, {@code #jobData}: the
 *               merged job data map); null for the default tenant
 */
record JobGuard(String jobName, Duration lease, Duration fireMarkerRetention, boolean oneRunAtATime,
        Expression tenant) {

    /** The longest singleton name a lock request accepts (in NFC). */
    static final int MAX_NAME_LENGTH = 1000;

    /** @return the singleton held while the job runs anywhere (for {@link #oneRunAtATime} jobs) */
    String runningLockName() {
        return "job:" + jobName;
    }

    /**
     * The marker's name holds the trigger's key: the triggers of one job may fire at the same time, and
     * each such fire is its own (every node has the same trigger keys). A key too long for the name
     * is replaced by its SHA-256. A trigger built without a name has a random key on each node
     * ({@link #isGenerated}): its fires are marked by its group and time alone, so that they still
     * run once in the cluster, and two such triggers of one job and group firing together run once.
     *
     * @param trigger the key of the trigger that fires
     * @param scheduledFireTime the trigger's scheduled fire time, the same on every node
     * @return the singleton that marks this fire as taken
     */
    String fireLockName(TriggerKey trigger, Date scheduledFireTime) {
        String triggerName = trigger != null && isGenerated(trigger) ? trigger.getGroup() + ".*" : String.valueOf(trigger);
        String name = "job:" + jobName + "@" + triggerName + "@" + scheduledFireTime.getTime();
        if (Normalizer.normalize(name, Normalizer.Form.NFC).length() <= MAX_NAME_LENGTH) {
            return name;
        }
        return hashedFireLockName(sha256(triggerName), scheduledFireTime.getTime());
    }

    /**
     * Whether Quartz made up the key's name because the job or trigger was built without
     * {@code withIdentity(..)}: twelve hex digits from the group's hash, a dash and a random UUID
     * ({@code Key.createUniqueName}), so different on every node.
     */
    static boolean isGenerated(Key<?> key) {
        String name = key.getName();
        // the platform's charset, as Quartz hashes the group: UTF-8 would miss non-ASCII groups elsewhere
        String groupPart = UUID.nameUUIDFromBytes(key.getGroup().getBytes()).toString().substring(24) + "-";
        if (name.length() != groupPart.length() + 36 || !name.startsWith(groupPart)) {
            return false;
        }
        try {
            UUID.fromString(name.substring(groupPart.length()));
            return true;
        }
        catch (IllegalArgumentException ex) {
            return false;
        }
    }

    /** The marker's name with the trigger's key replaced by {@code hash}; the longest name a job gives. */
    String hashedFireLockName(String hash, long scheduledFireTime) {
        return "job:" + jobName + "@#" + hash + "@" + scheduledFireTime;
    }

    private static String sha256(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("Every Java platform has SHA-256", ex);
        }
    }

    /** @return the request for the lock held while the job runs */
    LockRequest runningLock(JobExecutionContext context) {
        LockRequest.Builder request = LockRequest.singleton(runningLockName());
        if (lease != null) {
            request.lease(lease);
        }
        return withTenant(request, context).build();
    }

    /**
     * The fire's marker: its lease is the retention, renewed while the run lasts, and its release keeps
     * it until {@code retention} after it was taken, so that a node firing the same time late is vetoed.
     */
    LockRequest fireLock(JobExecutionContext context) {
        LockRequest.Builder request = LockRequest.singleton(fireLockName(context.getTrigger().getKey(),
                        context.getScheduledFireTime()))
                .lease(fireMarkerRetention)
                .lockAtLeastFor(fireMarkerRetention);
        return withTenant(request, context).build();
    }

    private LockRequest.Builder withTenant(LockRequest.Builder request, JobExecutionContext context) {
        if (tenant != null) {
            request.tenant(tenantOf(context));
        }
        return request;
    }

    private String tenantOf(JobExecutionContext context) {
        EvaluationContext evaluation = SimpleEvaluationContext.forReadOnlyDataBinding()
                .withRootObject(context)
                .build();
        evaluation.setVariable("jobData", context.getMergedJobDataMap());
        Object value = tenant.getValue(evaluation);
        if (value == null || value.toString().isBlank()) {
            throw new IllegalArgumentException("The tenant expression '" + tenant.getExpressionString() + "' of job "
                    + context.getJobDetail().getKey() + " gave " + (value == null ? "null" : "an empty tenant"));
        }
        return value.toString();
    }
}
