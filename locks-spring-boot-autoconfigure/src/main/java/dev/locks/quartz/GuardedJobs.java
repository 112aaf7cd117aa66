package dev.locks.quartz;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.quartz.JobDetail;
import org.quartz.JobKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.util.ReflectionUtils;

import dev.locks.LockRequest;
import dev.locks.annotation.ClusterSingleton;
import dev.locks.annotation.PathLocked;
import dev.locks.annotation.Semaphore;

/**
 * Decides which Quartz jobs are guarded and how: a job class annotated {@link ClusterSingleton}, or a
 * job key listed in configuration ({@code group.name}, or just {@code name} for the {@code DEFAULT}
 * group). Resolved once per job key and class.
 */
final class GuardedJobs {

    private static final Logger log = LoggerFactory.getLogger(GuardedJobs.class);

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();

    private final Set<String> configuredKeys;

    private final Duration defaultRetention;

    private final Duration shortestLease;

    private final Map<Resolved, Resolution> cache = new ConcurrentHashMap<>();

    /**
     * @param shortestLease the shortest lease the lock service's watchdog can keep, or zero if unknown
     */
    GuardedJobs(Collection<String> configuredKeys, Duration defaultRetention, Duration shortestLease) {
        this.configuredKeys = Set.copyOf(Objects.requireNonNull(configuredKeys, "configuredKeys"));
        this.shortestLease = Objects.requireNonNull(shortestLease, "shortestLease");
        this.defaultRetention = watchable(positive(defaultRetention, "the fire marker retention"),
                "the fire marker retention");
    }

    /** What resolving a job gave: its guard, or why it cannot run. */
    private record Resolution(Optional<JobGuard> guard, IllegalArgumentException failure) {
    }

    /**
     * @param job a job
     * @return how it is guarded, or empty if it is not
     * @throws IllegalArgumentException if its {@code @ClusterSingleton} cannot be understood, asks for a
     *         lease the watchdog cannot keep, or it carries a lock annotation a Quartz job cannot honour
     */
    Optional<JobGuard> guardOf(JobDetail job) {
        Resolution resolution = cache.computeIfAbsent(new Resolved(job.getKey(), job.getJobClass()), k -> {
            try {
                return new Resolution(resolve(job), null);
            }
            catch (IllegalArgumentException ex) {
                // kept, so that every fire of the job is refused for the same reason without looking again
                return new Resolution(Optional.empty(), ex);
            }
        });
        if (resolution.failure() != null) {
            throw resolution.failure();
        }
        return resolution.guard();
    }

    /** @return whether the configured entry names the job with this key */
    static boolean names(String configured, JobKey key) {
        return configured.equals(key.getGroup() + "." + key.getName())
                || (JobKey.DEFAULT_GROUP.equals(key.getGroup()) && configured.equals(key.getName()));
    }

    Set<String> configuredKeys() {
        return configuredKeys;
    }

    private Optional<JobGuard> resolve(JobDetail job) {
        JobKey key = job.getKey();
        checkNoProxyAnnotations(job.getJobClass(), "Quartz job " + key + " (" + job.getJobClass().getName() + ")");
        ClusterSingleton annotation = AnnotatedElementUtils.findMergedAnnotation(job.getJobClass(), ClusterSingleton.class);
        boolean configured = configuredKeys.stream().anyMatch(c -> names(c, key));
        if (annotation == null && !configured) {
            return Optional.empty();
        }
        String where = (annotation != null ? "@ClusterSingleton on Quartz job " : "configured Quartz job ") + key + " ("
                + job.getJobClass().getName() + ")";
        if (JobGuard.isGenerated(key)) {
            throw new IllegalArgumentException(where + ": the job was built without a name, so Quartz gave it a random"
                    + " key, another on every node, and every node would run every fire; name it with"
                    + " JobBuilder.withIdentity(..), or define it with Spring's JobDetailFactoryBean");
        }
        String jobName = key.getGroup() + "." + key.getName();
        Duration lease = null;
        Duration retention = defaultRetention;
        Expression tenant = null;
        if (annotation != null) {
            if (!annotation.name().isBlank()) {
                // the key stays: one class may back several job details, each with fires of its own
                jobName = annotation.name().strip() + ":" + jobName;
            }
            lease = duration(annotation.lockAtMostFor(), "lockAtMostFor", where);
            if (lease != null) {
                watchable(lease, "lockAtMostFor of " + where);
            }
            Duration atLeast = duration(annotation.lockAtLeastFor(), "lockAtLeastFor", where);
            if (atLeast != null) {
                retention = watchable(positive(atLeast, "lockAtLeastFor of " + where), "lockAtLeastFor of " + where);
            }
            tenant = tenant(annotation.tenant(), where);
            if (annotation.onBusy() != ClusterSingleton.OnBusy.SKIP) {
                log.warn("{} says onBusy = {}, which a Quartz fire cannot honour: a fire another node took is always "
                        + "skipped (vetoed)", where, annotation.onBusy());
            }
        }
        JobGuard guard = new JobGuard(jobName, lease, retention, job.isConcurrentExecutionDisallowed(), tenant);
        checkRequests(guard, where);
        return Optional.of(guard);
    }

    /**
     * The lock annotations' proxy leaves Quartz jobs alone, so that a job's {@code @ClusterSingleton}
     * is taken once per fire, here. Every other lock annotation on a job would do nothing: the job
     * would run unlocked, so it fails instead, naming what to do.
     *
     * @param where the job or bean, for the message
     */
    static void checkNoProxyAnnotations(Class<?> jobClass, String where) {
        for (Class<? extends Annotation> type : List.of(Semaphore.class, PathLocked.class)) {
            boolean onClass = AnnotatedElementUtils.hasAnnotation(jobClass, type);
            Method onMethod = annotatedMethod(jobClass, type);
            if (onClass || onMethod != null) {
                throw new IllegalArgumentException("@" + type.getSimpleName() + " on " + (onClass ? "" : "method "
                        + onMethod.getName() + " of ") + where + " is not applied: Quartz jobs are not proxied, so of the lock annotations only"
                        + " @ClusterSingleton on the job class works, guarding each scheduled fire. Take the lock in"
                        + " code with LockService.call or run");
            }
        }
        Method singleton = annotatedMethod(jobClass, ClusterSingleton.class);
        if (singleton != null) {
            throw new IllegalArgumentException("@ClusterSingleton on method " + singleton.getName() + " of " + where
                    + " is not applied: put it on the job class");
        }
    }

    private static Method annotatedMethod(Class<?> type, Class<? extends Annotation> annotation) {
        for (Method method : ReflectionUtils.getUniqueDeclaredMethods(type, ReflectionUtils.USER_DECLARED_METHODS)) {
            if (AnnotatedElementUtils.hasAnnotation(method, annotation)) {
                return method;
            }
        }
        return null;
    }

    /** Builds the job's requests once, so that a bad name or lease fails now, naming the job, not at every fire. */
    private static void checkRequests(JobGuard guard, String where) {
        try {
            // a trigger key too long for the marker's name is hashed: the hashed form is the longest
            LockRequest.singleton(guard.hashedFireLockName("0".repeat(64), Long.MAX_VALUE))
                    .lease(guard.fireMarkerRetention()).lockAtLeastFor(guard.fireMarkerRetention()).build();
            LockRequest.Builder running = LockRequest.singleton(guard.runningLockName());
            if (guard.lease() != null) {
                running.lease(guard.lease());
            }
            running.build();
        }
        catch (IllegalArgumentException ex) {
            throw new IllegalArgumentException(where + " cannot be guarded: " + ex.getMessage(), ex);
        }
    }

    private static Duration duration(String text, String attribute, String where) {
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            return DurationFormatterUtils.detectAndParse(text.strip());
        }
        catch (RuntimeException ex) {
            throw new IllegalArgumentException(attribute + " = \"" + text + "\" of " + where
                    + " is not a duration (e.g. \"30s\", \"10m\", \"PT1H\")", ex);
        }
    }

    private static Expression tenant(String text, String where) {
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            return PARSER.parseExpression(text);
        }
        catch (ParseException ex) {
            throw new IllegalArgumentException("tenant = \"" + text + "\" of " + where + " is not a SpEL expression: "
                    + ex.getMessage(), ex);
        }
    }

    /** A lease the watchdog renews while the job runs must be one it can keep. */
    private Duration watchable(Duration lease, String what) {
        if (lease.compareTo(shortestLease) < 0) {
            throw new IllegalArgumentException(what + " (" + lease.toMillis() + " ms) is shorter than the "
                    + shortestLease.toMillis() + " ms the lock service's watchdog needs to renew it while the job runs");
        }
        return lease;
    }

    private static Duration positive(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, was " + d
                    + ": the fire marker is what stops a late node from running the same fire again");
        }
        return d;
    }

    private record Resolved(JobKey key, Class<?> jobClass) {
    }
}
