package dev.locks.quartz;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import org.quartz.JobDetail;
import org.quartz.Scheduler;
import org.quartz.SchedulerException;
import org.quartz.Trigger;
import org.quartz.impl.StdSchedulerFactory;
import org.quartz.simpl.RAMJobStore;

import dev.locks.LockService;
import dev.locks.LockSettings;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;

/**
 * One node of a test cluster: its own connection pool, its own lock service, and its own Quartz scheduler
 * with an in-memory job store and thread pool, guarded by a {@link ClusterSingletonTriggerListener}.
 */
final class QuartzNode implements AutoCloseable {

    final String id;

    final HikariDataSource pool;

    final JdbcLockService locks;

    final Scheduler scheduler;

    private QuartzNode(String id, HikariDataSource pool, JdbcLockService locks, Scheduler scheduler) {
        this.id = id;
        this.pool = pool;
        this.locks = locks;
        this.scheduler = scheduler;
    }

    static QuartzNode create(TestDatabase database, String tablePrefix, String id) {
        return create(database, tablePrefix, id, Set.of(), null);
    }

    /**
     * @param listenerService the lock service the listener uses; null for the node's own
     */
    static QuartzNode create(TestDatabase database, String tablePrefix, String id, Collection<String> guardedKeys,
            java.util.function.Function<JdbcLockService, LockService> listenerService) {
        HikariDataSource pool = database.newPool(4);
        try {
            JdbcLockService locks = JdbcLockService.builder(pool)
                    .tablePrefix(tablePrefix)
                    .createSchema(true)
                    .settings(LockSettings.builder().nodeId(id).slowWaitLog(null).build())
                    .build();
            Properties quartz = new Properties();
            quartz.setProperty(StdSchedulerFactory.PROP_SCHED_INSTANCE_NAME, id + "-" + UUID.randomUUID());
            quartz.setProperty(StdSchedulerFactory.PROP_JOB_STORE_CLASS, RAMJobStore.class.getName());
            quartz.setProperty("org.quartz.threadPool.threadCount", "3");
            Scheduler scheduler = new StdSchedulerFactory(quartz).getScheduler();
            LockService forListener = listenerService == null ? locks : listenerService.apply(locks);
            new ClusterSingletonTriggerListener(forListener, guardedKeys, Duration.ofMinutes(10)).registerWith(scheduler);
            return new QuartzNode(id, pool, locks, scheduler);
        }
        catch (SchedulerException | RuntimeException ex) {
            pool.close();
            throw new IllegalStateException("Could not start node " + id, ex);
        }
    }

    QuartzNode schedule(JobDetail job, Trigger trigger) {
        try {
            scheduler.scheduleJob(job, trigger);
            return this;
        }
        catch (SchedulerException ex) {
            throw new IllegalStateException(ex);
        }
    }

    QuartzNode start() {
        try {
            scheduler.start();
            return this;
        }
        catch (SchedulerException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** Stops firing, waiting for running jobs, as a node being shut down does. */
    void stop() {
        try {
            if (!scheduler.isShutdown()) {
                scheduler.shutdown(true);
            }
        }
        catch (SchedulerException ex) {
            throw new IllegalStateException(ex);
        }
    }

    @Override
    public void close() {
        try {
            stop();
        }
        finally {
            try {
                locks.close();
            }
            finally {
                pool.close();
            }
        }
    }

    static void closeAll(List<QuartzNode> nodes) {
        for (QuartzNode node : nodes) {
            try {
                node.close();
            }
            catch (RuntimeException ex) {
                // the other nodes must still be closed
            }
        }
    }
}
