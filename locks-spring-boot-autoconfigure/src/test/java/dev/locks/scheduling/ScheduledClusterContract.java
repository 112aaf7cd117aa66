package dev.locks.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import dev.locks.DefaultLockService;
import dev.locks.LockKind;
import dev.locks.annotation.ClusterSingleton;
import dev.locks.annotation.ClusterSingleton.OnBusy;
import dev.locks.aop.LockTestNodes;
import dev.locks.testing.TestDatabase;

/**
 * Issue 5, {@code @Scheduled} and start-up work: three application contexts, each with its own
 * scheduler and connection pool, stand for three nodes.
 */
@Timeout(120)
abstract class ScheduledClusterContract {

    /** Every run of the scheduled job, as (JVM nanos, node, database time of the grant in micros). */
    static final ConcurrentLinkedQueue<long[]> RUNS = new ConcurrentLinkedQueue<>();

    static final AtomicInteger BOOTSTRAPS = new AtomicInteger();

    static final AtomicInteger INSIDE_BOOTSTRAP = new AtomicInteger();

    static final AtomicInteger MOST_INSIDE_BOOTSTRAP = new AtomicInteger();

    static volatile DataSource bootstrapTable;

    protected abstract TestDatabase database();

    private LockTestNodes nodes;

    @BeforeEach
    void startCluster() {
        nodes = new LockTestNodes(database());
        RUNS.clear();
        BOOTSTRAPS.set(0);
        MOST_INSIDE_BOOTSTRAP.set(0);
    }

    @AfterEach
    void stopCluster() {
        nodes.close();
    }

    @Test
    void aScheduledJobRunsOncePerTickAcrossThreeNodesEvenWhenOneStops() throws Exception {
        long started = System.nanoTime();
        List<ConfigurableApplicationContext> cluster = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            cluster.add(nodes.node("node-" + i, List.of("test.node-number=" + i), Ticking.class));
        }
        Thread.sleep(5_000);
        // the node that fires first each second wins every tick; stopping it shows another take over
        long winner = RUNS.peek()[1];
        cluster.get((int) winner).close();
        Thread.sleep(5_000);
        List<long[]> runs = new ArrayList<>(RUNS);
        runs.sort((a, b) -> Long.compare(a[0], b[0]));
        // start-up takes seconds under load: count the ticks from the first run on
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - runs.get(0)[0]);
        // every node fires every second; lockAtLeastFor (800 ms) lets one run per tick through
        StringBuilder timeline = new StringBuilder();
        for (long[] run : runs) {
            timeline.append(TimeUnit.NANOSECONDS.toMillis(run[0] - started)).append("ms@node-").append(run[1]).append(' ');
        }
        assertThat(runs.size()).as("runs in %d s from three nodes firing every second: %s", seconds, timeline)
                .isBetween((int) seconds - 1, (int) seconds + 2);
        for (int i = 1; i < runs.size(); i++) {
            long gapMicros = runs.get(i)[2] - runs.get(i - 1)[2];
            assertThat(gapMicros).as("database time between grant %d and %d", i - 1, i).isGreaterThanOrEqualTo(800_000);
        }
        assertThat(runs.stream().filter(r -> r[1] != winner).count()).as("runs by the other nodes after the stop")
                .isGreaterThanOrEqualTo(3);
    }

    @Test
    void startUpWorkRunsOnOneNodeWhileTheOthersWaitAndThenCarryOn() throws Exception {
        bootstrapTable = nodes.probePool();
        try (Connection c = nodes.probePool().getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + nodes.prefix() + "bootstrap (done INT)");
        }
        System.setProperty("test.bootstrap.table", nodes.prefix() + "bootstrap");
        List<CompletableFuture<ConfigurableApplicationContext>> starting = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String name = "node-" + i;
            starting.add(CompletableFuture.supplyAsync(() -> nodes.node(name, Bootstrapping.class)));
        }
        for (CompletableFuture<ConfigurableApplicationContext> node : starting) {
            assertThat(node.get(60, TimeUnit.SECONDS).isActive()).isTrue();
        }
        assertThat(BOOTSTRAPS.get()).as("bootstraps performed").isEqualTo(1);
        assertThat(MOST_INSIDE_BOOTSTRAP.get()).as("nodes inside the start-up work at once").isEqualTo(1);
        try (Connection c = nodes.probePool().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM " + nodes.prefix() + "bootstrap")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(1);
        }
        finally {
            try (Connection c = nodes.probePool().getConnection(); Statement st = c.createStatement()) {
                st.execute("DROP TABLE " + nodes.prefix() + "bootstrap");
            }
        }
    }

    /** A node's scheduled job. */
    public static class Tick {

        private final long node;

        private final DefaultLockService locks;

        public Tick(long node, DefaultLockService locks) {
            this.node = node;
            this.locks = locks;
        }

        @Scheduled(fixedRate = 1000)
        @ClusterSingleton(name = "tick", lockAtMostFor = "10s", lockAtLeastFor = "800ms")
        public void run() {
            // the grant's start in database time, where lockAtLeastFor is measured
            java.time.Instant since = locks.holders(LockKind.SINGLETON, null, "tick").get(0).since();
            RUNS.add(new long[] { System.nanoTime(), node,
                    TimeUnit.SECONDS.toMicros(since.getEpochSecond()) + since.getNano() / 1000 });
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class Ticking {

        @Bean
        Tick tick(@Value("${test.node-number}") long node, DefaultLockService locks) {
            return new Tick(node, locks);
        }
    }

    /** Start-up work that must happen once per cluster: idempotent, and serialised by the singleton. */
    public static class Bootstrap {

        @EventListener(ContextRefreshedEvent.class)
        @ClusterSingleton(name = "bootstrap", onBusy = OnBusy.WAIT, waitAtMost = "30s")
        public void onStart() throws Exception {
            MOST_INSIDE_BOOTSTRAP.accumulateAndGet(INSIDE_BOOTSTRAP.incrementAndGet(), Math::max);
            try (Connection c = bootstrapTable.getConnection(); Statement st = c.createStatement()) {
                String table = System.getProperty("test.bootstrap.table");
                try (ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
                    rs.next();
                    if (rs.getInt(1) == 0) {
                        Thread.sleep(500);
                        st.executeUpdate("INSERT INTO " + table + " (done) VALUES (1)");
                        if (!c.getAutoCommit()) {
                            c.commit();
                        }
                        BOOTSTRAPS.incrementAndGet();
                    }
                }
            }
            finally {
                INSIDE_BOOTSTRAP.decrementAndGet();
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Bootstrapping {

        @Bean
        Bootstrap bootstrap() {
            return new Bootstrap();
        }
    }
}
