package dev.locks.torture;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import dev.locks.DeadlockDetectedException;
import dev.locks.LockHandle;
import dev.locks.LockListener;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.LockTimeoutException;
import dev.locks.LockUnavailableException;
import dev.locks.jdbc.JdbcLockService;

/**
 * One torture node, run in its own JVM by {@link TortureHarness}: M threads taking random
 * hierarchical locks (shared and exclusive, several paths, nested through {@code call} and
 * {@code enter}), semaphore permits and singletons on a {@link JdbcLockService} with its own pool,
 * and doing a slow, fenced read-modify-write of a shared record under each exclusive lock. Every
 * critical section goes to the {@link SectionLog} with database times.
 *
 * <p>Arguments are {@code key=value}: {@code url user password dialect prefix node threads
 * lockPool seconds seed dir}, and {@code role}: {@code victim} or {@code taker} for the pause fault,
 * {@code holder} for a thread that holds its locks long (the kill target).
 * The worker stops when {@code dir/stop} appears or its time is up.
 */
public final class TortureWorker {

    static final Duration LEASE = Duration.ofSeconds(3);

    static final Duration WAIT = Duration.ofSeconds(2);

    private final Map<String, String> options;

    private final String node;

    private final Path dir;

    private final SectionLog log;

    private final SharedRecords records;

    private final HikariDataSource dataPool;

    private final HikariDataSource lockPool;

    private final JdbcLockService locks;

    private final Map<String, AtomicLong> counters = new ConcurrentHashMap<>();

    private final AtomicLong sectionSeq = new AtomicLong();

    private final Map<LockHandle, String> lostReasons = new ConcurrentHashMap<>();

    private volatile boolean stopping;

    /**
     * For the checker's negative control only: a sabotaged worker takes its path locks in a shadow
     * tenant but reports them in the real one, like a lock service that does not exclude.
     */
    private final String shadowPrefix;

    private TortureWorker(Map<String, String> options) {
        this.options = options;
        this.node = options.get("node");
        this.shadowPrefix = "true".equals(options.get("sabotage")) ? "shadow-" : "";
        this.dir = Path.of(options.get("dir"));
        this.log = new SectionLog(dir.resolve(node + ".log"));
        this.records = new SharedRecords(options.get("dialect"), options.get("prefix"));
        int threads = Integer.parseInt(options.get("threads"));
        this.dataPool = pool(options, "data", threads + 2);
        this.lockPool = pool(options, "locks", Integer.parseInt(options.get("lockPool")));
        LockListener listener = new LockListener() {
            @Override
            public void leaseLost(LockHandle handle, String reason) {
                count("leaseLost");
                lostReasons.put(handle, reason);
            }
        };
        LockSettings settings = LockSettings.builder().nodeId(node).defaultLease(LEASE).defaultWait(WAIT)
                .purgeInterval(Duration.ofSeconds(2)).slowWaitLog(null).listener(listener).build();
        this.locks = startService(settings);
    }

    /** Builds the service, waiting for the database while several JVMs start at once on a busy machine. */
    private JdbcLockService startService(LockSettings settings) {
        long giveUp = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (true) {
            try {
                return JdbcLockService.builder(lockPool).tablePrefix(options.get("prefix")).settings(settings).build();
            }
            catch (IllegalStateException | LockUnavailableException ex) {
                if (System.nanoTime() - giveUp > 0) {
                    throw ex;
                }
                pause(500);
            }
        }
    }

    private static HikariDataSource pool(Map<String, String> o, String name, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(o.get("url"));
        config.setUsername(o.get("user"));
        config.setPassword(o.getOrDefault("password", ""));
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        // fail fast while the database restarts or the pool is exhausted: callers must see an exception, not hang
        config.setConnectionTimeout(3000);
        config.setValidationTimeout(1000);
        config.setInitializationFailTimeout(-1);
        config.setPoolName(o.get("node") + "-" + name);
        return new HikariDataSource(config);
    }

    /**
     * Runs a worker.
     *
     * @param args {@code key=value} options
     * @throws Exception if the worker cannot start
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            options.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        TortureWorker worker = new TortureWorker(options);
        try {
            worker.run();
        }
        finally {
            worker.shutdown();
        }
        System.exit(0);
    }

    private void run() throws Exception {
        long dbNow = retrying(records::now);
        log.fact("START", "node", node, "pid", ProcessHandle.current().pid(), "jvmMicros",
                SharedRecords.micros(java.time.Instant.now()), "dbMicros", dbNow,
                "threads", options.get("threads"), "lockPool", options.get("lockPool"));
        int threads = Integer.parseInt(options.get("threads"));
        long seed = Long.parseLong(options.get("seed"));
        long deadline = System.nanoTime() + Duration.ofSeconds(Long.parseLong(options.get("seconds"))).toNanos();
        List<Thread> running = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Random random = new Random(seed * 1000 + i);
            Thread t = new Thread(() -> loop(random, deadline), node + "-T" + i);
            t.start();
            running.add(t);
        }
        String role = options.getOrDefault("role", "");
        if (!role.isEmpty()) {
            Thread t = new Thread(() -> faultRole(role), node + "-" + role);
            t.start();
            running.add(t);
        }
        for (Thread t : running) {
            t.join();
        }
    }

    private void shutdown() {
        stopping = true;
        try {
            locks.close();
        }
        catch (RuntimeException ex) {
            count("closeFailed");
        }
        // how many grants came from a release of this JVM in its own transaction, so that the report
        // shows the hand-off was exercised under the faults
        count("handOffs", locks.handOffCount());
        Map<String, Long> snapshot = new TreeMap<>();
        counters.forEach((k, v) -> snapshot.put(k, v.get()));
        log.counters(snapshot);
        log.close();
        dataPool.close();
        lockPool.close();
    }

    private boolean stopRequested(long deadline) {
        return stopping || System.nanoTime() - deadline > 0 || Files.exists(dir.resolve("stop"));
    }

    private void loop(Random random, long deadline) {
        Scope scope = new Scope(Thread.currentThread().getName());
        while (!stopRequested(deadline)) {
            try {
                oneOperation(random, scope);
            }
            catch (LockUnavailableException ex) {
                count("unavailable");
            }
            catch (LockTimeoutException ex) {
                count("timeout");
            }
            catch (DeadlockDetectedException ex) {
                count("deadlock");
            }
            catch (RuntimeException ex) {
                // anything else is a defect: the checker fails the run on it
                count("unexpected:" + ex.getClass().getSimpleName());
                log.fact("UNEXPECTED", "thread", Thread.currentThread().getName(), "error", oneLine(ex));
            }
            finally {
                scope.reset();
            }
        }
    }

    /** The owner names of one thread: one per outermost scope, one per plain handle. */
    private static final class Scope {

        private final String thread;

        private int scopes;

        private int handles;

        private int depth;

        private final Deque<Long> tokens = new ArrayDeque<>();

        /** Tokens of the handles the scope holds while nested requests run under them. */
        private final Deque<Long> held = new ArrayDeque<>();

        Scope(String thread) {
            this.thread = thread;
        }

        String scopedOwner() {
            return thread + "/s" + scopes;
        }

        String enterScope() {
            if (depth++ == 0) {
                scopes++;
            }
            return scopedOwner();
        }

        void leaveScope() {
            depth--;
        }

        String plainOwner() {
            return thread + "/h" + (++handles);
        }

        void reset() {
            depth = 0;
            tokens.clear();
            held.clear();
        }
    }

    private void oneOperation(Random random, Scope scope) {
        int r = random.nextInt(100);
        count("operations");
        if (r < 25) {
            // call(): the callback re-enters the same request to reach its handle, which only the scope holds
            LockRequest request = pathRequest(random);
            String owner = scope.enterScope();
            try {
                count("attempts");
                locks.call(request, () -> {
                    count("grants");
                    try (LockHandle h = locks.enter(request)) {
                        section(h, request, owner, true, scope, random);
                        nestUnder(h, random, request, scope);
                    }
                    return null;
                });
            }
            finally {
                scope.leaveScope();
            }
        }
        else if (r < 45) {
            LockRequest request = pathRequest(random);
            String owner = scope.enterScope();
            try {
                count("attempts");
                LockHandle h = locks.enter(request);
                count("grants");
                try {
                    section(h, request, owner, true, scope, random);
                    nestUnder(h, random, request, scope);
                }
                finally {
                    release(h);
                }
            }
            finally {
                scope.leaveScope();
            }
        }
        else if (r < 65) {
            LockRequest request = pathRequest(random);
            count("attempts");
            try (LockHandle h = locks.acquire(request)) {
                count("grants");
                section(h, request, scope.plainOwner(), true, scope, random);
            }
        }
        else if (r < 75) {
            LockRequest request = pathRequest(random);
            count("attempts");
            Optional<LockHandle> h = locks.tryAcquire(request);
            if (h.isEmpty()) {
                count("busy");
                return;
            }
            count("grants");
            try (LockHandle handle = h.get()) {
                section(handle, request, scope.plainOwner(), true, scope, random);
            }
        }
        else if (r < 85) {
            int i = random.nextInt(TortureTree.SEMAPHORES.size());
            int max = random.nextInt(3) == 0 ? TortureTree.SEMAPHORE_SMALLER_MAX[i] : TortureTree.SEMAPHORE_MAX[i];
            LockRequest request = LockRequest.semaphore(TortureTree.SEMAPHORES.get(i), max)
                    .tenant(TortureTree.TENANTS.get(random.nextInt(2))).build();
            String owner = scope.enterScope();
            try {
                count("attempts");
                LockHandle h = locks.enter(request);
                count("grants");
                try {
                    section(h, request, owner, true, scope, random);
                }
                finally {
                    release(h);
                }
            }
            finally {
                scope.leaveScope();
            }
        }
        else if (r < 95) {
            String name = TortureTree.SINGLETONS.get(random.nextInt(TortureTree.SINGLETONS.size()));
            LockRequest request = LockRequest.singleton(name).lockAtLeastFor(Duration.ofMillis(20)).build();
            String owner = scope.enterScope();
            try {
                count("attempts");
                Optional<LockHandle> h = locks.tryEnter(request);
                if (h.isEmpty()) {
                    count("busy");
                    return;
                }
                count("grants");
                try {
                    section(h.get(), request, owner, true, scope, random);
                }
                finally {
                    release(h.get());
                }
            }
            finally {
                scope.leaveScope();
            }
        }
        else {
            String tenant = TortureTree.TENANTS.get(random.nextInt(2));
            List<LockRequest> batch = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                batch.add(LockRequest.paths(TortureTree.randomLeafBelow("/p", random)).tenant(tenant).build());
            }
            count("attempts", 3);
            List<LockHandle> granted = locks.tryAcquireEach(batch);
            count("grants", granted.size());
            count("busy", 3 - granted.size());
            try {
                for (LockHandle h : granted) {
                    section(h, h.request(), scope.plainOwner(), true, scope, random);
                }
            }
            finally {
                granted.forEach(this::release);
            }
        }
    }

    /** Nested requests under a held handle, which a nested handle covered by it re-enters. */
    private void nestUnder(LockHandle h, Random random, LockRequest request, Scope scope) {
        scope.held.push(h.fencingToken());
        try {
            maybeNest(random, request, scope);
        }
        finally {
            scope.held.pop();
        }
    }

    /** Inside a scope: another scoped lock, below the outer paths (often re-entered) or elsewhere. */
    private void maybeNest(Random random, LockRequest outer, Scope scope) {
        if (scope.depth > 2 || random.nextInt(100) >= 35) {
            return;
        }
        String path = random.nextInt(4) > 0 ? TortureTree.randomBelow(outer.keys().get(0), random)
                : TortureTree.randomPath(random);
        LockRequest.Builder b = LockRequest.paths(path).tenant(outer.tenant());
        LockRequest request = (random.nextBoolean() ? b.exclusive() : b.shared()).build();
        String owner = scope.enterScope();
        try {
            count("attempts");
            count("nested");
            LockHandle h = locks.enter(request);
            count("grants");
            try {
                section(h, request, owner, false, scope, random);
                nestUnder(h, random, request, scope);
            }
            finally {
                release(h);
            }
        }
        finally {
            scope.leaveScope();
        }
    }

    private LockRequest pathRequest(Random random) {
        String tenant = TortureTree.TENANTS.get(random.nextInt(2));
        int n = random.nextInt(10) < 7 ? 1 : random.nextInt(10) < 7 ? 2 : 3;
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            paths.add(TortureTree.randomPath(random));
        }
        LockRequest.Builder b = LockRequest.paths(paths).tenant(shadowPrefix + tenant);
        return (random.nextInt(10) < 6 ? b.exclusive() : b.shared()).build();
    }

    private void release(LockHandle h) {
        try {
            h.release();
        }
        catch (LockUnavailableException ex) {
            count("releaseUnavailable");
        }
    }

    /**
     * One critical section: database time in, then for an outermost exclusive lock a fenced slow
     * read-modify-write of a record below its first path, for every other lock a slow double read
     * that must not change, then database time out and whether the handle is still valid.
     */
    private void section(LockHandle h, LockRequest request, String owner, boolean top, Scope scope, Random random) {
        char kind = switch (request.kind()) {
            case PATH -> 'P';
            case SINGLETON -> 'J';
            case SEMAPHORE -> 'M';
        };
        String tenant = request.tenant() == null ? "default"
                : request.tenant().startsWith(shadowPrefix) ? request.tenant().substring(shadowPrefix.length()) : request.tenant();
        String record = switch (kind) {
            case 'P' -> TortureTree.pathRecord(tenant, TortureTree.randomLeafBelow(request.keys().get(0), random));
            case 'J' -> TortureTree.singletonRecord(request.keys().get(0));
            default -> "-";
        };
        long token = h.fencingToken();
        // a nested request the scope already covers takes the newest token of the held grants enclosing it
        boolean reentered = scope.tokens.contains(token) || scope.held.contains(token);
        boolean writer = top && request.mode() == dev.locks.LockMode.EXCLUSIVE && !"-".equals(record);
        long in = retrying(records::now);
        long read1 = -1;
        Section.Write write = Section.Write.NONE;
        SharedRecords.Values before = null;
        if (!"-".equals(record)) {
            if (writer) {
                try {
                    write = claim(record, token) ? Section.Write.NONE : Section.Write.FENCED;
                }
                catch (SQLException ex) {
                    write = Section.Write.UNKNOWN;
                }
            }
            before = retrying(c -> records.read(c, record));
            read1 = before.value();
        }
        Section s = new Section(node + "-" + sectionSeq.incrementAndGet(), node, owner, kind, tenant,
                request.mode() == dev.locks.LockMode.EXCLUSIVE ? 'X' : 'S', request.keys(),
                token, reentered, record, request.permits(), in, Long.MAX_VALUE, false, false, Section.Write.NONE, read1, -1);
        log.begin(s);
        count("sections");
        scope.tokens.push(token);
        try {
            pause(1 + random.nextInt(15));
            long read2 = -1;
            if (writer && write == Section.Write.NONE) {
                write = fencedWrite(record, s.id(), token, before);
            }
            else if (!"-".equals(record) && !writer) {
                read2 = retrying(c -> records.read(c, record)).value();
            }
            long out = retrying(records::now);
            boolean valid = h.isValid();
            if (!valid) {
                count("lostSections");
            }
            log.end(s.ended(out, valid, write, read2));
        }
        finally {
            scope.tokens.pop();
        }
    }

    private boolean claim(String record, long token) throws SQLException {
        try (Connection c = dataPool.getConnection()) {
            boolean ok = records.claim(c, record, token);
            if (!ok) {
                count("fencedClaims");
            }
            return ok;
        }
    }

    private Section.Write fencedWrite(String record, String sectionId, long token, SharedRecords.Values before) {
        try (Connection c = dataPool.getConnection()) {
            if (records.write(c, record, sectionId, token, before)) {
                count("writes");
                return Section.Write.ACCEPTED;
            }
            count("fencedWrites");
            return Section.Write.FENCED;
        }
        catch (SQLException ex) {
            count("writeFailed");
            return Section.Write.UNKNOWN;
        }
    }

    /** Statement work that is retried while the database is down (a restart), for up to a minute. */
    @FunctionalInterface
    interface SqlWork<T> {
        T run(Connection c) throws SQLException;
    }

    <T> T retrying(SqlWork<T> work) {
        long giveUp = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try (Connection c = dataPool.getConnection()) {
                return work.run(c);
            }
            catch (SQLException ex) {
                count("dataRetries");
                if (System.nanoTime() - giveUp > 0) {
                    throw new IllegalStateException("The database stayed unreachable for a minute", ex);
                }
                pause(100);
            }
        }
    }

    /**
     * The two sides of the pause fault. The victim takes {@code /fault/pause}, claims its record,
     * reads, says so, and then tries to finish its write: the harness stops the JVM in between. The
     * taker waits for the same lock, writes, and holds it until the harness lets it go.
     */
    private void faultRole(String role) {
        if (role.equals("holder")) {
            longHolds();
            return;
        }
        try {
            awaitFile(role + ".go");
            if (stopping) {
                return;
            }
            LockRequest request = LockRequest.paths(TortureTree.PAUSE_PATH).tenant(TortureTree.PAUSE_TENANT)
                    .waitAtMost(Duration.ofSeconds(30)).build();
            String record = TortureTree.pathRecord(TortureTree.PAUSE_TENANT, TortureTree.PAUSE_PATH);
            String owner = Thread.currentThread().getName() + "/fault";
            LockHandle h = enterRetrying(request);
            long token = h.fencingToken();
            long in = retrying(records::now);
            boolean claimed = claim(record, token);
            SharedRecords.Values before = retrying(c -> records.read(c, record));
            Section s = new Section(node + "-" + sectionSeq.incrementAndGet(), node, owner, 'P', TortureTree.PAUSE_TENANT,
                    'X', List.of(TortureTree.PAUSE_PATH), token, false, record, 0, in, Long.MAX_VALUE, false, false,
                    Section.Write.NONE, before.value(), -1);
            log.begin(s);
            if (role.equals("victim")) {
                log.fact("VICTIM_READY", "token", token, "claimed", claimed);
                // the harness stops this JVM now; the loop notices the jump in time once it runs again
                long last = System.nanoTime();
                while (true) {
                    pause(20);
                    long now = System.nanoTime();
                    if (now - last > TortureWorker.LEASE.toNanos() || Files.exists(dir.resolve("stop"))) {
                        break;
                    }
                    last = now;
                }
                Section.Write write = claimed ? fencedWrite(record, s.id(), token, before) : Section.Write.FENCED;
                long out = retrying(records::now);
                boolean valid = h.isValid();
                log.end(s.ended(out, valid, write, -1));
                // the watchdog runs its renewal on its next tick and reports the loss
                long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                while (!lostReasons.containsKey(h) && System.nanoTime() - until < 0) {
                    pause(20);
                }
                String checkValid;
                try {
                    h.checkValid();
                    checkValid = "none";
                }
                catch (RuntimeException ex) {
                    checkValid = ex.getClass().getSimpleName();
                }
                boolean released = h.release();
                log.fact("VICTIM_DONE", "token", token, "write", write, "validAfterResume", valid, "leaseLostReported",
                        lostReasons.containsKey(h), "checkValid", checkValid, "released", released);
            }
            else {
                log.fact("TAKER_GRANTED", "token", token, "claimed", claimed, "inMicros", in);
                Section.Write write = claimed ? fencedWrite(record, s.id(), token, before) : Section.Write.FENCED;
                awaitFile("taker.release");
                long out = retrying(records::now);
                boolean valid = h.isValid();
                log.end(s.ended(out, valid, write, -1));
                boolean renewed = h.renew();
                log.fact("TAKER_DONE", "token", token, "write", write, "validAtEnd", valid, "renewedAfterVictimRelease",
                        renewed);
                h.release();
            }
        }
        catch (RuntimeException | SQLException ex) {
            log.fact("FAULT_ROLE_FAILED", "role", role, "error", oneLine(ex));
        }
    }

    /**
     * The kill target's slow job: holds an exclusive leaf for a second and a half at a time, so that
     * a {@code kill -9} finds it holding a lock whose lease others must wait out.
     */
    private void longHolds() {
        Random random = new Random();
        Scope scope = new Scope(Thread.currentThread().getName());
        while (!stopping && !Files.exists(dir.resolve("stop"))) {
            LockRequest request = LockRequest.paths(TortureTree.randomLeafBelow("/p", random))
                    .tenant(TortureTree.TENANTS.get(random.nextInt(2))).build();
            String owner = scope.enterScope();
            try {
                count("attempts");
                LockHandle h = locks.enter(request);
                count("grants");
                try {
                    section(h, request, owner, true, scope, random);
                    pause(1500);
                }
                finally {
                    release(h);
                }
            }
            catch (LockUnavailableException | LockTimeoutException | DeadlockDetectedException ex) {
                count("holderBusy");
            }
            finally {
                scope.leaveScope();
                scope.reset();
            }
        }
    }

    /** The fault roles must get their lock: a busy pool or a restarting database only delays them. */
    private LockHandle enterRetrying(LockRequest request) {
        long giveUp = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try {
                return locks.enter(request);
            }
            catch (LockUnavailableException | LockTimeoutException ex) {
                count("faultRoleRetries");
                if (System.nanoTime() - giveUp > 0) {
                    throw ex;
                }
                pause(50);
            }
        }
    }

    private void awaitFile(String name) {
        while (!Files.exists(dir.resolve(name)) && !Files.exists(dir.resolve("stop"))) {
            pause(20);
        }
        if (Files.exists(dir.resolve("stop")) && !Files.exists(dir.resolve(name))) {
            stopping = true;
        }
    }

    private static String oneLine(Throwable ex) {
        return (ex.getClass().getSimpleName() + ": " + ex.getMessage()).replaceAll("[\\t\\n\\r]", " ");
    }

    private void count(String name) {
        count(name, 1);
    }

    private void count(String name, long n) {
        counters.computeIfAbsent(name, k -> new AtomicLong()).addAndGet(n);
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
