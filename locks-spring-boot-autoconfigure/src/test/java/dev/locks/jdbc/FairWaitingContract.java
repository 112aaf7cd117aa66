package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.Trigger;

import dev.locks.DeadlockDetectedException;
import dev.locks.LockHandle;
import dev.locks.LockHolder;
import dev.locks.LockKind;
import dev.locks.LockMode;
import dev.locks.LockPath;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.LockTimeoutException;
import dev.locks.PathNormalizer;
import dev.locks.store.Grant;
import dev.locks.store.GrantRequest;
import dev.locks.testing.CountingDataSource;

/** Issue 4: fair waiting, deadlock detection, renewal through long tasks, clean ends. */
abstract class FairWaitingContract extends LockServiceContract {

    /** Waiting requests queued straight into the store, with no thread behind them. */
    private final List<GrantRequest> ghosts = new ArrayList<>();

    @Test
    void aWaitingWriterGetsTheLockWhileNewReadersKeepArriving() throws Exception {
        JdbcLockService readersNode = newNode("node-readers");
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger readsGranted = new AtomicInteger();
        ExecutorService readers = Executors.newFixedThreadPool(4);
        for (int r = 0; r < 4; r++) {
            int id = r;
            readers.submit(() -> {
                while (!stop.get()) {
                    // overlapping reads: there is always some reader holding a lock under /doc
                    readersNode.tryAcquire(s("/doc/part" + id).build()).ifPresent(h -> {
                        readsGranted.incrementAndGet();
                        sleep(Duration.ofMillis(40));
                        h.release();
                    });
                }
                return null;
            });
        }
        try {
            sleep(Duration.ofMillis(200));
            long before = readsGranted.get();
            try (LockHandle writer = locks.acquire(x("/doc").waitAtMost(Duration.ofSeconds(20)).build())) {
                assertThat(writer.isValid()).isTrue();
            }
            assertThat(before).as("readers were active before the writer queued").isGreaterThan(0);
        }
        finally {
            stop.set(true);
            readers.shutdown();
            readers.awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aQueuedWriterBlocksNewConflictingReaders() throws Exception {
        LockHandle reader = locks.tryAcquire(s("/q/x").build()).orElseThrow();
        JdbcLockService other = newNode("node-b");
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try (LockHandle w = other.acquire(x("/q").waitAtMost(Duration.ofSeconds(20)).build())) {
                assertThat(w.isValid()).isTrue();
            }
        });
        awaitWaiters(1);
        assertThat(locks.tryAcquire(s("/q/y").build())).as("a reader arriving after the queued writer").isEmpty();
        assertThat(locks.tryAcquire(s("/unrelated").build())).as("unrelated paths stay free").isPresent().get()
                .matches(LockHandle::release);
        reader.release();
        writer.get(20, TimeUnit.SECONDS);
        assertThat(locks.tryAcquire(s("/q/y").build())).isPresent().get().matches(LockHandle::release);
    }

    @Test
    void conflictingWaitersAreServedFirstComeFirstServed() throws Exception {
        LockHandle holder = tryX("/fifo").orElseThrow();
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String name = "w" + i;
            JdbcLockService node = newNode("node-" + name);
            waiters.add(CompletableFuture.runAsync(() -> {
                try (LockHandle h = node.acquire(x("/fifo").waitAtMost(Duration.ofSeconds(30)).build())) {
                    order.add(name);
                    sleep(Duration.ofMillis(50));
                }
            }));
            awaitWaiters(i + 1);
        }
        holder.release();
        for (CompletableFuture<Void> w : waiters) {
            w.get(30, TimeUnit.SECONDS);
        }
        assertThat(order).containsExactly("w0", "w1", "w2", "w3");
    }

    @Test
    void aDeadWaiterStopsBlockingWhenItsQueueLeaseLapses() {
        LockPath path = new PathNormalizer(true, 4000).normalize("/dead");
        GrantRequest ghost = new GrantRequest(LockKind.PATH, tenant, List.of(path), LockMode.EXCLUSIVE,
                Duration.ofSeconds(30), 0, "f".repeat(32), "e".repeat(32), "ghost-node", "ghost-thread", 0, false);
        locks.store().enqueue(ghost, Duration.ofMillis(600));
        assertThat(tryX("/dead")).as("blocked by the queued (still live) waiter").isEmpty();
        sleep(Duration.ofMillis(900));
        assertThat(tryX("/dead")).as("the dead waiter's record lapsed").isPresent().get().matches(LockHandle::release);
    }

    @Test
    void aSemaphoreWaitersLookShowsTheRequestQueuedAheadOfIt() {
        LockHandle permit = locks.acquire(LockRequest.semaphore("reports", 2).tenant(tenant).build());
        LockHandle other = locks.acquire(LockRequest.semaphore("reports", 2).tenant(tenant).build());
        GrantRequest first = queued(semaphoreRequest("1"));
        GrantRequest second = queued(semaphoreRequest("2"));

        List<LockHolder> aheadOfSecond = locks.store().conflicts(second);
        List<LockHolder> aheadOfFirst = locks.store().conflicts(first);

        assertThat(aheadOfSecond).as("both permits' holders and the first waiter").hasSize(3)
                .filteredOn(LockHolder::waiting).hasSize(1);
        assertThat(aheadOfFirst).as("only the permits' holders").hasSize(2).noneMatch(LockHolder::waiting);
        permit.release();
        other.release();
    }

    @Test
    void aLargeSemaphoreWaitersLookNamesEveryRowAheadOfIt() {
        List<Grant> held = new ArrayList<>();
        for (int i = 1; i <= 6; i++) {
            held.add(locks.store().tryGrant(permitRequest("reports-large", 6, "1", String.valueOf(i))).grant());
        }
        queued(permitRequest("reports-large", 6, "2", "7"));
        GrantRequest second = queued(permitRequest("reports-large", 6, "3", "8"));

        assertThat(locks.store().conflicts(second)).as("six holders and the first waiter: more rows than permits")
                .hasSize(7).filteredOn(LockHolder::waiting).hasSize(1);
        held.forEach(g -> locks.store().release(g, Duration.ZERO));
    }

    @Test
    void aSemaphoreWaitersLookCountsAgainstTheSmallestMaxAmongTheHolders() {
        Grant held = locks.store().tryGrant(permitRequest("reports-mixed", 1, "1", "1")).grant();
        GrantRequest larger = permitRequest("reports-mixed", 3, "2", "2");

        assertThat(locks.store().conflicts(larger)).as("one holder whose max is one").hasSize(1);
        assertThat(locks.store().tryGrant(larger).grant()).as("the grant agrees with the look").isNull();
        locks.store().release(held, Duration.ZERO);
    }

    @Test
    void aSemaphoreOwnersSecondPermitCountsAgainstTheMax() {
        GrantRequest first = permitRequest("reports-owned", 1, "1", "1");
        GrantRequest second = permitRequest("reports-owned", 1, "1", "2");
        assertThat(locks.store().tryGrant(first).grant()).as("the first permit").isNotNull();

        assertThat(locks.store().tryGrant(second).grant()).as("the same owner's second permit of one").isNull();
    }

    @Test
    void aFreedPermitGoesToTheWaiterQueuedFirstNotToANewcomerOrALaterWaiter() {
        Grant held = locks.store().tryGrant(permitRequest("reports-queued", 1, "1", "1")).grant();
        GrantRequest first = queued(permitRequest("reports-queued", 1, "2", "2"));
        GrantRequest later = queued(permitRequest("reports-queued", 1, "3", "3"));
        locks.store().release(held, Duration.ZERO);

        assertThat(locks.store().tryGrant(permitRequest("reports-queued", 1, "4", "4")).grant()).as("a newcomer")
                .isNull();
        assertThat(locks.store().tryGrant(later).grant()).as("the later waiter").isNull();
        assertThat(locks.store().tryGrant(first).grant()).as("the waiter queued first").isNotNull();
    }

    /** Queues {@code request} until the test ends, as a waiter that sleeps. */
    private GrantRequest queued(GrantRequest request) {
        GrantRequest queued = request.withTicket(locks.store().enqueue(request, Duration.ofSeconds(30)));
        ghosts.add(queued);
        return queued;
    }

    @AfterEach
    void removeGhosts() {
        ghosts.forEach(locks.store()::dequeue);
        ghosts.clear();
    }

    private GrantRequest semaphoreRequest(String n) {
        return permitRequest("reports", 2, n, n);
    }

    private GrantRequest permitRequest(String name, int permits, String owner, String grant) {
        return new GrantRequest(LockKind.SEMAPHORE, tenant, List.of(LockPath.flat(name)), LockMode.SHARED,
                Duration.ofSeconds(30), permits, owner.repeat(32), "e".repeat(31) + grant, "ghost-node", "ghost-thread",
                0, false);
    }

    @Test
    void twoOwnersWaitingForEachOtherOnTwoNodesAreToldOfTheDeadlock() throws Exception {
        JdbcLockService other = newNode("node-b");
        CountDownLatch bothHold = new CountDownLatch(2);
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<String> completed = new ConcurrentLinkedQueue<>();
        long started = System.nanoTime();
        CompletableFuture<Void> first = CompletableFuture.runAsync(() -> nested(locks, "/a", "/b", bothHold, failures, completed));
        CompletableFuture<Void> second = CompletableFuture.runAsync(() -> nested(other, "/b", "/a", bothHold, failures, completed));
        CompletableFuture.allOf(first, second).get(60, TimeUnit.SECONDS);
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(failures).hasSize(1).first().isInstanceOf(DeadlockDetectedException.class);
        assertThat(failures.peek().getMessage()).contains("Deadlock").contains("/a").contains("/b");
        assertThat(completed).hasSize(1);
        // both would otherwise have waited out their 30 s
        assertThat(took).isLessThan(Duration.ofSeconds(15));
    }

    private void nested(JdbcLockService node, String outer, String inner, CountDownLatch bothHold,
            ConcurrentLinkedQueue<Throwable> failures, ConcurrentLinkedQueue<String> completed) {
        try {
            node.run(x(outer).build(), () -> {
                bothHold.countDown();
                try {
                    bothHold.await(10, TimeUnit.SECONDS);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
                node.run(x(inner).waitAtMost(Duration.ofSeconds(30)).build(), () -> completed.add(outer + inner));
            });
        }
        catch (RuntimeException ex) {
            failures.add(ex);
        }
    }

    @Test
    void nestedLocksTakenInOneGlobalOrderNeverReportADeadlock() throws Exception {
        List<JdbcLockService> nodes = List.of(locks, newNode("node-b"));
        AtomicInteger deadlocks = new AtomicInteger();
        AtomicInteger nestedGrants = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        long deadline = System.nanoTime() + Duration.ofSeconds(6).toNanos();
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 6; t++) {
            JdbcLockService node = nodes.get(t % 2);
            workers.add(pool.submit(() -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (System.nanoTime() < deadline) {
                    int i = random.nextInt(4);
                    int j = i + 1 + random.nextInt(4 - i);
                    try {
                        node.run(x("/order/" + i).waitAtMost(Duration.ofSeconds(20)).build(), () -> node.run(
                                x("/order/" + j).waitAtMost(Duration.ofSeconds(20)).build(), () -> {
                                    nestedGrants.incrementAndGet();
                                    sleep(Duration.ofMillis(random.nextInt(20)));
                                }));
                    }
                    catch (DeadlockDetectedException ex) {
                        deadlocks.incrementAndGet();
                    }
                    catch (LockTimeoutException ex) {
                        // contention is allowed; a false deadlock is not
                    }
                }
                return null;
            }));
        }
        for (Future<?> w : workers) {
            w.get(120, TimeUnit.SECONDS);
        }
        pool.shutdownNow();
        assertThat(deadlocks.get()).as("false deadlock reports").isZero();
        assertThat(nestedGrants.get()).isGreaterThan(20);
    }

    @Test
    void theWatchdogKeepsATwoSecondLeaseAliveThroughATenSecondTask() {
        JdbcLockService other = newNode("node-b");
        AtomicInteger otherGotIn = new AtomicInteger();
        long token = locks.call(x("/ten").lease(Duration.ofSeconds(2)).build(), () -> {
            long t = 0;
            for (int i = 0; i < 20; i++) {
                sleep(Duration.ofMillis(500));
                other.tryAcquire(x("/ten/part").build()).ifPresent(h -> {
                    otherGotIn.incrementAndGet();
                    h.release();
                });
            }
            LockHandle inner = locks.enter(x("/ten").build());
            inner.checkValid();
            t = inner.fencingToken();
            inner.release();
            return t;
        });
        assertThat(otherGotIn.get()).isZero();
        assertThat(token).isPositive();
    }

    @Test
    void aStalledWatchdogLetsTheLeaseLapseAndAnotherNodeInWithAHigherToken() {
        JdbcLockService stalled = JdbcLockService.builder(mainPool()).tablePrefix(prefix)
                .settings(LockSettings.builder().nodeId("stalled").slowWaitLog(null).build())
                .scheduler(new NeverRunningScheduler()).build();
        try {
            LockHandle h = stalled.enter(x("/stall").lease(Duration.ofMillis(700)).build());
            sleep(Duration.ofMillis(1000));
            assertThat(h.isValid()).isFalse();
            JdbcLockService other = newNode("node-b");
            try (LockHandle next = other.tryAcquire(x("/stall").build()).orElseThrow()) {
                assertThat(next.fencingToken()).isGreaterThan(h.fencingToken());
                assertThat(h.release()).isFalse();
                assertThat(next.isValid()).isTrue();
            }
        }
        finally {
            stalled.close();
        }
    }

    @Test
    void manyWaitersOfOneNodePollWithinTheNodesBudget() throws Exception {
        CountingDataSource counting = new CountingDataSource(newPool(40));
        JdbcLockService node = node("node-budget", counting.dataSource(),
                LockSettings.builder().nodeId("node-budget").maxPollsPerSecond(20).slowWaitLog(null));
        try (LockHandle held = tryX("/budget").orElseThrow()) {
            ExecutorService pool = Executors.newFixedThreadPool(30);
            List<Future<?>> waiters = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                waiters.add(pool.submit(() -> {
                    try {
                        node.acquire(x("/budget/" + Thread.currentThread().getId()).waitAtMost(Duration.ofSeconds(2)).build());
                    }
                    catch (LockTimeoutException expected) {
                        // the holder never lets go
                    }
                    return null;
                }));
            }
            for (Future<?> w : waiters) {
                w.get(30, TimeUnit.SECONDS);
            }
            pool.shutdownNow();
        }
        // each waiter's first attempt, queueing and leaving cost about ten statements; 40 polls of two
        // statements fit the budget. Polling at 50 ms each, 30 waiters would need more than 2000.
        assertThat(counting.statements()).isLessThan(30 * 12 + 20 * 2 * 2 + 50);
    }

    @Test
    void thePurgeDeletesExpiredRowsOnly() throws Exception {
        LockHandle expired = locks.tryAcquire(x("/purge/old").lease(Duration.ofMillis(300)).build()).orElseThrow();
        try (LockHandle live = tryX("/purge/live").orElseThrow()) {
            sleep(Duration.ofMillis(500));
            assertThat(rowsOfTenant()).isEqualTo(2);
            while (locks.store().purgeExpired() > 0) {
                // batches of 5000
            }
            assertThat(rowsOfTenant()).isEqualTo(1);
            assertThat(live.isValid()).isTrue();
        }
        assertThat(expired.isValid()).isFalse();
    }

    @Test
    void closingANodeReleasesWhatItHolds() {
        JdbcLockService leaving = newNode("node-leaving");
        leaving.tryAcquire(x("/bye").lease(Duration.ofMinutes(5)).build()).orElseThrow();
        leaving.tryAcquire(LockRequest.singleton("job").tenant(tenant).build()).orElseThrow();
        leaving.close();
        assertThat(tryX("/bye")).isPresent().get().matches(LockHandle::release);
        assertThat(locks.tryAcquire(LockRequest.singleton("job").tenant(tenant).build())).isPresent().get()
                .matches(LockHandle::release);
    }

    private int rowsOfTenant() throws Exception {
        PathNormalizer paths = new PathNormalizer(true, 4000);
        try (Connection c = mainPool().getConnection(); java.sql.PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM " + prefix + "held WHERE lock_key IN (?, ?)")) {
            ps.setBytes(1, LockKeys.lockKey(LockKind.PATH, tenant, paths.normalize("/purge/old")));
            ps.setBytes(2, LockKeys.lockKey(LockKind.PATH, tenant, paths.normalize("/purge/live")));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    private void awaitWaiters(int n) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (waitingRows() < n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("expected " + n + " queued waiters");
            }
            sleep(Duration.ofMillis(20));
        }
    }

    private int waitingRows() {
        try (Connection c = mainPool().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(DISTINCT grant_id) FROM " + prefix + "wait")) {
            rs.next();
            return rs.getInt(1);
        }
        catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** A scheduler that accepts tasks and never runs them: a watchdog frozen by a long pause. */
    static final class NeverRunningScheduler implements TaskScheduler {

        @Override
        public ScheduledFuture<?> schedule(Runnable task, Trigger trigger) {
            return new FrozenFuture();
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable task, Instant startTime) {
            return new FrozenFuture();
        }

        @Override
        public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Instant startTime, Duration period) {
            return new FrozenFuture();
        }

        @Override
        public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Duration period) {
            return new FrozenFuture();
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Instant startTime, Duration delay) {
            return new FrozenFuture();
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Duration delay) {
            return new FrozenFuture();
        }
    }

    static final class FrozenFuture implements ScheduledFuture<Object> {

        @Override
        public long getDelay(TimeUnit unit) {
            return Long.MAX_VALUE;
        }

        @Override
        public int compareTo(java.util.concurrent.Delayed o) {
            return 0;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            return true;
        }

        @Override
        public boolean isCancelled() {
            return false;
        }

        @Override
        public boolean isDone() {
            return false;
        }

        @Override
        public Object get() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }
    }
}
