package dev.locks.torture;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import dev.locks.HolderQuery;
import dev.locks.LockHandle;
import dev.locks.LockHolder;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.LockUnavailableException;
import dev.locks.jdbc.JdbcLockService;

/**
 * The multi-process torture run on one database: creates a private server, starts the worker
 * JVMs, injects the faults while they run, stops them, and proves with {@link TortureChecker}
 * and the faults' own expectations that nothing went wrong. Run it with {@code mvn -Ptorture}
 * ({@link TortureRun}); {@code -Dtorture.seconds=600} makes the long form.
 *
 * <p>The workers: {@code w1} (killed with {@code kill -9} while it holds locks; {@code w5} takes its
 * place), {@code w2} (stopped with SIGSTOP beyond its lease, then continued: the pause victim),
 * {@code w3} (its clock six hours ahead through {@code faketime}; it takes the paused lock), and
 * {@code w4} (a lock pool of one connection for eight threads).
 */
public final class TortureHarness {

    static final String PREFIX = "torture_";

    /** The faults every run injects. */
    static final List<String> FAULTS = List.of("kill -9 of a holder", "SIGSTOP beyond the lease", "database crash mid-run",
            "database crash with an empty lock table", "JVM clock 6 h ahead (faketime)", "lock pool of 1 for 8 threads");

    private static final Pattern FULL_TOKEN = Pattern.compile("(?<![0-9a-fA-F])[0-9a-f]{32}(?![0-9a-fA-F])");

    /** How long and how hard. */
    record Config(String dialect, int seconds, int threads, long seed, Path workDir, boolean sabotage) {

        static Config fromSystemProperties(String dialect) {
            return new Config(dialect, Integer.getInteger("torture.seconds", 75), Integer.getInteger("torture.threads", 6),
                    Long.getLong("torture.seed", System.nanoTime() % 100_000),
                    Path.of(System.getProperty("torture.dir", "target/torture")), false);
        }

        /** The negative control: no faults, and one worker whose locks do not exclude. */
        Config sabotaged(int seconds) {
            return new Config(dialect, seconds, threads, seed, workDir, true);
        }
    }

    /** One written-down expected outcome of a fault, and whether the run met it. */
    record Expectation(String fault, String expected, boolean met, String observed) {
    }

    /** Everything a run found. */
    record Report(Config config, TortureChecker.Result check, List<Expectation> expectations, Map<String, Long> figures,
            List<String> rowHistory) {

        boolean passed() {
            return check.passed() && expectations.stream().allMatch(Expectation::met);
        }

        String text() {
            StringBuilder s = new StringBuilder();
            s.append(config.sabotage() ? "Negative control (a worker whose locks do not exclude) on " : "Torture run on ")
                    .append(config.dialect()).append(" (seed ").append(config.seed()).append(", ")
                    .append(config.seconds()).append(" s): ").append(passed() ? "PASSED" : "FAILED").append('\n');
            s.append("Figures:\n");
            figures.forEach((k, v) -> s.append("  ").append(k).append(" = ").append(v).append('\n'));
            s.append("Checker:\n");
            new TreeMap<>(check.figures()).forEach((k, v) -> s.append("  ").append(k).append(" = ").append(v).append('\n'));
            s.append("Fault expectations:\n");
            for (Expectation e : expectations) {
                s.append("  [").append(e.met() ? "met" : "NOT MET").append("] ").append(e.fault()).append(": ")
                        .append(e.expected()).append(" -- observed: ").append(e.observed()).append('\n');
            }
            if (!check.violations().isEmpty()) {
                s.append("Violations:\n");
                check.violations().forEach(v -> s.append("  ").append(v).append('\n'));
            }
            if (!rowHistory.isEmpty()) {
                s.append("What the database did to those grant rows (audit triggers):\n");
                rowHistory.forEach(h -> s.append("  ").append(h).append('\n'));
            }
            return s.toString();
        }
    }

    private final Config config;

    private LockAudit audit;

    private final Path runDir;

    private final List<Expectation> expectations = new ArrayList<>();

    private final Map<String, Long> figures = new LinkedHashMap<>();

    private final List<WorkerProcess> workers = new ArrayList<>();

    private final List<Section> killedSections = new ArrayList<>();

    private final Map<String, Long> killedAt = new HashMap<>();

    private PrivateDatabase db;

    private HikariDataSource probePool;

    private JdbcLockService probe;

    private SharedRecords records;

    private TortureHarness(Config config) throws Exception {
        this.config = config;
        Files.createDirectories(config.workDir());
        this.runDir = Files.createTempDirectory(config.workDir().toAbsolutePath(), config.dialect() + "-run-");
    }

    /**
     * Runs the torture by hand.
     *
     * @param args the dialects ({@code mysql}, {@code postgresql}), then optionally the seconds of load
     * @throws Exception if a run cannot be set up
     */
    public static void main(String[] args) throws Exception {
        boolean passed = true;
        List<String> dialects = new ArrayList<>();
        int seconds = Integer.getInteger("torture.seconds", 75);
        for (String arg : args) {
            if (arg.matches("\\d+")) {
                seconds = Integer.parseInt(arg);
            }
            else {
                dialects.add(arg);
            }
        }
        for (String dialect : dialects.isEmpty() ? List.of("mysql", "postgresql") : dialects) {
            Config base = Config.fromSystemProperties(dialect);
            Report report = run(new Config(dialect, seconds, base.threads(), base.seed(), base.workDir(), false));
            System.out.println(report.text());
            passed &= report.passed();
        }
        System.exit(passed ? 0 : 1);
    }

    /** One complete run on a fresh private server, deleted afterwards. */
    static Report run(Config config) throws Exception {
        TortureHarness harness = new TortureHarness(config);
        try {
            return harness.execute();
        }
        finally {
            harness.cleanUp();
        }
    }

    private Report execute() throws Exception {
        long started = System.nanoTime();
        log("private " + config.dialect() + " server starting in a temporary directory");
        db = PrivateDatabase.create(config.dialect());
        probePool = pool(4);
        // the harness crashes the database right after its token probe: a release that did not wait for
        // the flush would come back with recovery and hold the probe's lock (and a row in the "empty"
        // table) until its lease ends; the workers keep the default
        probe = JdbcLockService.builder(probePool).tablePrefix(PREFIX).createSchema(true).durableReleases(true)
                .settings(LockSettings.builder().nodeId("harness").slowWaitLog(null).purgeInterval(null).build()).build();
        records = new SharedRecords(config.dialect(), PREFIX);
        records.create(probePool, TortureTree.recordIds());
        audit = new LockAudit(config.dialect(), PREFIX);
        audit.install(probePool);
        WorkerProcess.writeLoggingConfig(runDir);
        figures.put("setupMillis", Duration.ofNanos(System.nanoTime() - started).toMillis());

        if (config.sabotage()) {
            return sabotagedRun(started);
        }
        log("starting workers (" + config.seconds() + " s of load, seed " + config.seed() + ")");
        WorkerProcess w1 = startWorker("w1", config.threads(), config.threads() + 3, "holder", null);
        WorkerProcess w2 = startWorker("w2", config.threads(), config.threads() + 3, "victim", null);
        WorkerProcess w3 = startWorker("w3", config.threads(), config.threads() + 3, "taker", "+6h");
        WorkerProcess w4 = startWorker("w4", 8, 1, "", null);
        for (WorkerProcess w : workers) {
            if (w.awaitFact("START", Duration.ofSeconds(120)).isEmpty()) {
                throw new IllegalStateException("Worker " + w.node() + " did not start; see " + runDir);
            }
        }
        long loadStart = System.nanoTime();
        sleepUntil(loadStart, config.seconds() * 0.2);
        killAHolder(w1);
        sleepUntil(loadStart, config.seconds() * 0.4);
        pauseBeyondTheLease(w2, w3);
        sleepUntil(loadStart, config.seconds() * 0.65);
        restartTheDatabase("mid-run");
        sleepUntil(loadStart, config.seconds());

        stopWorkers();
        noRowsLeftBehind();
        tokensSurviveARestartOfAnEmptyTable();
        skewedClockHadNoEffect(w3);
        poolExhaustion(w4);
        tokensNeverLogged();
        return finish(started);
    }

    /** Three workers, one of which reports locks it took in a shadow tenant: the checker must object. */
    private Report sabotagedRun(long started) throws Exception {
        log("negative control: " + config.seconds() + " s with a worker whose locks do not exclude");
        startWorker("w1", config.threads(), 4, "", null);
        startWorker("w2", config.threads(), 4, "sabotage", null);
        startWorker("w3", config.threads(), 4, "", null);
        for (WorkerProcess w : workers) {
            if (w.awaitFact("START", Duration.ofSeconds(120)).isEmpty()) {
                throw new IllegalStateException("Worker " + w.node() + " did not start; see " + runDir);
            }
        }
        sleepUntil(System.nanoTime(), config.seconds());
        stopWorkers();
        return finish(started);
    }

    private void stopWorkers() throws Exception {
        log("stopping workers");
        Files.createFile(runDir.resolve("stop"));
        for (WorkerProcess w : workers) {
            if (killedAt.containsKey(w.node())) {
                continue;
            }
            boolean ended = w.awaitExit(Duration.ofSeconds(60));
            expect("shutdown", w.node() + " stops within a minute when asked and exits 0", ended && w.exitValue() == 0,
                    ended ? "exit " + w.exitValue() : "had to be killed");
        }
    }

    private WorkerProcess startWorker(String node, int threads, int lockPool, String role, String skew) throws Exception {
        Map<String, String> options = new LinkedHashMap<>();
        options.put("url", db.jdbcUrl());
        options.put("user", db.user());
        options.put("password", "");
        options.put("dialect", config.dialect());
        options.put("prefix", PREFIX);
        options.put("node", node);
        options.put("threads", Integer.toString(threads));
        options.put("lockPool", Integer.toString(lockPool));
        options.put("seconds", Integer.toString(config.seconds() + 120));
        options.put("seed", Long.toString(config.seed() * 10 + workers.size()));
        options.put("dir", runDir.toString());
        if (role.equals("sabotage")) {
            options.put("sabotage", "true");
        }
        else if (!role.isEmpty()) {
            options.put("role", role);
        }
        WorkerProcess w = WorkerProcess.start(options, skew);
        workers.add(w);
        return w;
    }

    // ---------------------------------------------------------------- kill -9

    private void killAHolder(WorkerProcess victim) throws Exception {
        log("kill -9 " + victim.node() + " while it holds locks");
        List<LockHolder> holding = List.of();
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        // wait for the slow holder thread, which keeps its lock for 1.5 s, to take a lock: the kill then
        // surely lands inside the hold. A hold already under way may be about to end (seed 1614 killed
        // just after such a release), so only a grant not yet seen at the first look counts
        Set<Long> underWay = null;
        while (holding.isEmpty() && System.nanoTime() - until < 0) {
            List<LockHolder> rows = liveRowsOf(victim.node()).stream().filter(r -> r.thread().endsWith("-holder")).toList();
            if (underWay == null) {
                underWay = rows.stream().map(LockHolder::lockId).collect(Collectors.toSet());
            }
            Set<Long> seenFirst = underWay;
            holding = rows.stream().filter(r -> !seenFirst.contains(r.lockId())).toList();
            if (holding.isEmpty()) {
                Thread.sleep(5);
            }
        }
        victim.kill();
        long killMicros = dbNow();
        figures.put("killedHeldRowsSeenBefore", (long) holding.size());
        killedAt.put(victim.node(), killMicros);
        List<LockHolder> left = liveRowsOf(victim.node());
        // the rows it left are held until their lease ends: nobody may get a conflicting lock before
        Map<Long, Integer> maxByToken = openPermitMaxima(victim);
        for (LockHolder row : left) {
            char kind = row.kind().code();
            int permits = kind == 'M' ? maxByToken.getOrDefault(row.lockId(), configuredMax(row.path())) : 0;
            killedSections.add(new Section("killed-" + row.lockId(), victim.node(), "killed:" + victim.node() + ":"
                    + row.ownerHint(), kind, row.tenant(), row.mode() == dev.locks.LockMode.EXCLUSIVE ? 'X' : 'S',
                    List.of(row.path()), row.lockId(), false, "-", permits, killMicros, SharedRecords.micros(row.expiresAt()),
                    true, true, Section.Write.NONE, -1, -1));
        }
        startWorker("w5", config.threads(), config.threads() + 3, "", null);
        long latestExpiry = left.stream().mapToLong(r -> SharedRecords.micros(r.expiresAt())).max().orElse(killMicros);
        long freedAt = -1;
        long giveUp = System.nanoTime() + TortureWorker.LEASE.plusSeconds(10).toNanos();
        while (System.nanoTime() - giveUp < 0) {
            if (liveRowsOf(victim.node()).isEmpty()) {
                freedAt = dbNow();
                break;
            }
            Thread.sleep(50);
        }
        long leaseMicros = TortureWorker.LEASE.toNanos() / 1000;
        figures.put("killedHeldRows", (long) left.size());
        expect("kill -9", "the killed worker held locks when it died (exit 137)", !left.isEmpty() && victim.exitValue() == 137,
                left.size() + " live row(s), exit " + victim.exitValue());
        expect("kill -9", "its locks free once their lease ends, within lease + 2 s of the kill",
                freedAt > 0 && freedAt >= latestExpiry && freedAt - killMicros <= leaseMicros + 2_000_000,
                freedAt < 0 ? "still held" : "free " + (freedAt - killMicros) / 1000 + " ms after the kill (last lease end "
                        + (latestExpiry - killMicros) / 1000 + " ms after it)");
    }

    private List<LockHolder> liveRowsOf(String node) {
        while (true) {
            try {
                return probe.list(new HolderQuery(null, null, null, node, 10_000));
            }
            catch (LockUnavailableException ex) {
                sleep(100);
            }
        }
    }

    // ---------------------------------------------------------------- SIGSTOP / SIGCONT

    private void pauseBeyondTheLease(WorkerProcess victim, WorkerProcess taker) throws Exception {
        log("SIGSTOP " + victim.node() + " beyond its lease while it holds " + TortureTree.PAUSE_PATH);
        Files.createFile(runDir.resolve("victim.go"));
        Optional<Map<String, String>> ready = victim.awaitFact("VICTIM_READY", Duration.ofSeconds(30));
        if (ready.isEmpty()) {
            expect("SIGSTOP", "the victim takes the lock", false, "it never did; see " + victim.log());
            return;
        }
        Files.createFile(runDir.resolve("taker.go"));
        Thread.sleep(300);
        victim.signal("STOP");
        long stopped = System.nanoTime();
        Optional<Map<String, String>> granted = taker.awaitFact("TAKER_GRANTED", TortureWorker.LEASE.plusSeconds(20));
        long minPause = TortureWorker.LEASE.plusSeconds(1).toNanos();
        while (System.nanoTime() - stopped < minPause) {
            Thread.sleep(20);
        }
        long pausedMillis = Duration.ofNanos(System.nanoTime() - stopped).toMillis();
        victim.signal("CONT");
        figures.put("pauseMillis", pausedMillis);
        Optional<Map<String, String>> done = victim.awaitFact("VICTIM_DONE", Duration.ofSeconds(30));
        List<LockHolder> holders = holders(TortureTree.PAUSE_TENANT, TortureTree.PAUSE_PATH);
        Files.createFile(runDir.resolve("taker.release"));
        Optional<Map<String, String>> takerDone = taker.awaitFact("TAKER_DONE", Duration.ofSeconds(30));

        long victimToken = Long.parseLong(ready.get().get("token"));
        long takerToken = granted.map(g -> Long.parseLong(g.get("token"))).orElse(-1L);
        expect("SIGSTOP", "another node (" + taker.node() + ", clock +6h) gets the lock while the victim is stopped, with a higher token",
                granted.isPresent() && takerToken > victimToken,
                "victim token " + victimToken + ", taker " + (granted.isPresent() ? "token " + takerToken : "never granted")
                        + ", paused " + pausedMillis + " ms, lease " + TortureWorker.LEASE.toMillis() + " ms");
        Map<String, String> v = done.orElse(Map.of());
        expect("SIGSTOP", "the paused node's handle reports the loss (isValid false, LockLostException, leaseLost event)",
                "false".equals(v.get("validAfterResume")) && "LockLostException".equals(v.get("checkValid"))
                        && "true".equals(v.get("leaseLostReported")),
                done.isPresent() ? "isValid=" + v.get("validAfterResume") + ", checkValid threw " + v.get("checkValid")
                        + ", leaseLost event=" + v.get("leaseLostReported") : "the victim never finished");
        expect("SIGSTOP", "its stale write is rejected by the fence", "FENCED".equals(v.get("write")),
                "write " + v.get("write"));
        boolean takerStillHolds = holders.size() == 1 && holders.get(0).node().equals(taker.node());
        Map<String, String> t = takerDone.orElse(Map.of());
        expect("SIGSTOP", "its release does not free the new holder's lock",
                "false".equals(v.get("released")) && takerStillHolds && "true".equals(t.get("renewedAfterVictimRelease"))
                        && "true".equals(t.get("validAtEnd")),
                "release()=" + v.get("released") + ", holders after it: " + holders.stream().map(LockHolder::node).toList()
                        + ", taker renewed afterwards=" + t.get("renewedAfterVictimRelease") + ", taker valid=" + t.get("validAtEnd"));
        expect("SIGSTOP", "the new holder's write goes through", "ACCEPTED".equals(t.get("write")), "write " + t.get("write"));
    }

    private List<LockHolder> holders(String tenant, String path) {
        while (true) {
            try {
                return probe.holders(tenant, path);
            }
            catch (LockUnavailableException ex) {
                sleep(100);
            }
        }
    }

    // ---------------------------------------------------------------- database restart

    private void restartTheDatabase(String when) throws Exception {
        log("crash and restart the private " + config.dialect() + " server (" + when + ")");
        long before = probeToken();
        long downFrom = dbNow();
        long t0 = System.nanoTime();
        db.crashAndRestart(Duration.ofSeconds(1));
        long outageMillis = Duration.ofNanos(System.nanoTime() - t0).toMillis();
        long after = probeToken();
        figures.put("restartOutageMillis:" + when, outageMillis);
        expect("database restart (" + when + ")", "fencing tokens keep increasing across the crash", after > before,
                "token " + before + " before, " + after + " after an outage of " + outageMillis + " ms (down from "
                        + Instant.ofEpochSecond(0, downFrom * 1000) + ")");
    }

    /** Takes and releases a probe lock, retrying while the server comes back; returns its token. */
    private long probeToken() {
        LockRequest request = LockRequest.paths("/fault/restart").tenant("t1").waitAtMost(Duration.ofSeconds(5)).build();
        long giveUp = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try (LockHandle h = probe.acquire(request)) {
                return h.fencingToken();
            }
            catch (LockUnavailableException ex) {
                if (System.nanoTime() - giveUp > 0) {
                    throw ex;
                }
                sleep(200);
            }
        }
    }

    private void tokensSurviveARestartOfAnEmptyTable() throws Exception {
        long token = probeToken();
        probe.store().purgeExpired();
        long rows = countRows(PREFIX + "held");
        expect("database restart (empty table)", "the lock table is empty before the crash, the worst case for a counter that restarts from max(id)",
                rows == 0, rows + " row(s)");
        restartTheDatabase("empty table");
        figures.put("lastTokenBeforeEmptyRestart", token);
    }

    // ---------------------------------------------------------------- after the run

    private void noRowsLeftBehind() throws Exception {
        Thread.sleep(TortureWorker.LEASE.toMillis() + 500);
        long live = liveRows();
        probe.store().purgeExpired();
        long held = countRows(PREFIX + "held");
        long waiting = countRows(PREFIX + "wait");
        expect("end of run", "no live lock after the workers exit and their leases lapse", live == 0, live + " live row(s)");
        expect("end of run", "no lock or queue row left after the purge", held == 0 && waiting == 0,
                held + " held, " + waiting + " waiting row(s)");
    }

    private long liveRows() {
        return liveRowsOf(null).size();
    }

    private void skewedClockHadNoEffect(WorkerProcess skewed) {
        SectionLog.Contents c = SectionLog.read(skewed.node(), skewed.log());
        Map<String, String> start = c.facts("START").stream().findFirst().orElse(Map.of());
        long skewMicros = start.isEmpty() ? 0 : Long.parseLong(start.get("jvmMicros")) - Long.parseLong(start.get("dbMicros"));
        long held = c.sections().stream().filter(Section::heldThroughout).count();
        figures.put("skewSeconds:" + skewed.node(), skewMicros / 1_000_000);
        expect("clock skew", skewed.node() + " runs with its JVM clock hours off the database's and still gets and keeps locks",
                Math.abs(skewMicros) >= Duration.ofHours(5).toNanos() / 1000 && held > 0,
                "JVM clock " + Duration.ofNanos(skewMicros * 1000).toMinutes() + " min off, " + held + " held sections");
    }

    private void poolExhaustion(WorkerProcess starved) {
        SectionLog.Contents c = SectionLog.read(starved.node(), starved.log());
        long held = c.sections().stream().filter(Section::heldThroughout).count();
        long unavailable = c.counters().getOrDefault("unavailable", 0L);
        long timeouts = c.counters().getOrDefault("timeout", 0L);
        long unexpected = c.counters().entrySet().stream().filter(e -> e.getKey().startsWith("unexpected:"))
                .mapToLong(Map.Entry::getValue).sum();
        figures.put("poolExhaustion:heldSections", held);
        figures.put("poolExhaustion:unavailable", unavailable);
        expect("pool exhaustion", starved.node() + " (8 threads, 1 lock connection) sees LockUnavailableException or waits,"
                + " never another error; its grants are checked with everyone else's",
                unexpected == 0 && unavailable + timeouts + held > 0,
                held + " held sections, " + unavailable + " LockUnavailableException, " + timeouts + " timeouts, "
                        + unexpected + " other errors");
    }

    private void tokensNeverLogged() throws Exception {
        List<String> leaks = new ArrayList<>();
        for (WorkerProcess w : workers) {
            Path out = runDir.resolve(w.node() + ".out");
            if (!Files.exists(out)) {
                continue;
            }
            for (String line : Files.readAllLines(out)) {
                Matcher m = FULL_TOKEN.matcher(line);
                if (m.find() && leaks.size() < 5) {
                    leaks.add(w.node() + ": " + line);
                }
            }
        }
        expect("secrecy", "no 32-hex owner token or grant id appears in any worker's log (lost leases, restarts, kills included)",
                leaks.isEmpty(), leaks.isEmpty() ? "none" : String.join(" | ", leaks));
    }

    /**
     * The max each open semaphore section of a killed worker asked for, by its token: the row the
     * worker left keeps that max in force for others until its lease ends.
     */
    private static Map<Long, Integer> openPermitMaxima(WorkerProcess victim) {
        Map<Long, Integer> maxima = new HashMap<>();
        for (Section s : SectionLog.read(victim.node(), victim.log()).sections()) {
            if (s.kind() == 'M' && !s.ended()) {
                maxima.put(s.token(), s.permits());
            }
        }
        return maxima;
    }

    /** A semaphore's largest max, for a killed row whose section was not logged yet: it holds no one to less. */
    private static int configuredMax(String semaphore) {
        return TortureTree.SEMAPHORE_MAX[TortureTree.SEMAPHORES.indexOf(semaphore)];
    }

    private Report finish(long started) throws Exception {
        List<Section> sections = new ArrayList<>();
        Map<String, Long> counters = new TreeMap<>();
        List<String> unexpected = new ArrayList<>();
        long threads = 0;
        for (WorkerProcess w : workers) {
            threads += w.threads();
            SectionLog.Contents c = SectionLog.read(w.node(), w.log());
            Long killed = killedAt.get(w.node());
            for (Section s : c.sections()) {
                // a section its worker died in held its lock up to the kill
                sections.add(!s.ended() && killed != null ? s.ended(killed, true, Section.Write.UNKNOWN, -1) : s);
            }
            c.counters().forEach((k, v) -> counters.merge(k, v, Long::sum));
            c.facts("UNEXPECTED").forEach(f -> unexpected.add(w.node() + " " + f.get("thread") + ": " + f.get("error")));
            c.facts("FAULT_ROLE_FAILED").forEach(f -> unexpected.add(w.node() + " " + f.get("role") + ": " + f.get("error")));
        }
        sections.addAll(killedSections);
        Map<String, Integer> max = new HashMap<>();
        for (int i = 0; i < TortureTree.SEMAPHORES.size(); i++) {
            max.put(TortureTree.SEMAPHORES.get(i), TortureTree.SEMAPHORE_MAX[i]);
        }
        TortureChecker.Result check = new TortureChecker(sections, records.history(probePool), records.all(probePool), max).check();
        expect("all", "no error other than LockUnavailableException, LockTimeoutException or DeadlockDetectedException",
                unexpected.isEmpty(), unexpected.isEmpty() ? "none" : String.join(" | ", unexpected.subList(0, Math.min(5, unexpected.size()))));
        figures.put("processes", (long) workers.size());
        figures.put("threads", threads);
        counters.forEach((k, v) -> figures.put("workers:" + k, v));
        figures.put("faultsInjected", config.sabotage() ? 0L : (long) FAULTS.size());
        figures.put("violations", check.figures().getOrDefault("violations", 0L)
                + expectations.stream().filter(e -> !e.met()).count());
        figures.put("totalMillis", Duration.ofNanos(System.nanoTime() - started).toMillis());
        List<String> rowHistory = check.violations().isEmpty() ? List.of() : audit.explain(probePool, check.violations());
        Report report = new Report(config, check, List.copyOf(expectations), figures, rowHistory);
        Files.writeString(config.workDir().resolve("report-" + config.dialect() + (config.sabotage() ? "-negative-control" : "")
                + ".txt"), report.text());
        return report;
    }

    // ---------------------------------------------------------------- plumbing

    private void expect(String fault, String expected, boolean met, String observed) {
        expectations.add(new Expectation(fault, expected, met, observed));
        log((met ? "met: " : "NOT MET: ") + fault + ": " + expected + " -- " + observed);
    }

    private HikariDataSource pool(int size) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(db.jdbcUrl());
        c.setUsername(db.user());
        c.setPassword("");
        c.setMaximumPoolSize(size);
        c.setMinimumIdle(0);
        c.setConnectionTimeout(2000);
        c.setPoolName("harness");
        return new HikariDataSource(c);
    }

    private long dbNow() {
        long giveUp = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try (Connection c = probePool.getConnection()) {
                return records.now(c);
            }
            catch (Exception ex) {
                if (System.nanoTime() - giveUp > 0) {
                    throw new IllegalStateException("The private database does not answer", ex);
                }
                sleep(100);
            }
        }
    }

    private long countRows(String table) throws Exception {
        try (Connection c = probePool.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private void cleanUp() {
        for (WorkerProcess w : workers) {
            if (w.isAlive()) {
                try {
                    w.signal("CONT");
                    w.kill();
                }
                catch (Exception ignored) {
                    // gone already
                }
            }
        }
        if (probe != null) {
            try {
                probe.close();
            }
            catch (RuntimeException ignored) {
                // the server may be gone
            }
        }
        if (probePool != null) {
            probePool.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private static void sleepUntil(long start, double seconds) {
        long until = start + (long) (seconds * 1e9);
        while (System.nanoTime() - until < 0) {
            sleep(Math.max(1, (until - System.nanoTime()) / 1_000_000));
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    private void log(String message) {
        System.out.println("[torture " + config.dialect() + "] " + message);
    }
}
