package dev.locks.torture;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A {@link TortureWorker} in a JVM of its own, started with the test classpath; optionally with
 * libfaketime preloaded so that its clock is off by hours. Knows how to kill, stop and continue it.
 */
final class WorkerProcess {

    private final String node;

    private final Process process;

    private final Path log;

    private final int threads;

    private WorkerProcess(String node, Process process, Path log, int threads) {
        this.node = node;
        this.process = process;
        this.log = log;
        this.threads = threads;
    }

    /**
     * @param options the worker's {@code key=value} options; {@code node}, {@code dir} and {@code threads} required
     * @param clockSkew a libfaketime offset such as {@code +6h}, or null for the real clock
     */
    static WorkerProcess start(Map<String, String> options, String clockSkew) throws IOException {
        String node = options.get("node");
        Path dir = Path.of(options.get("dir"));
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // small heaps and the client compiler: several of these share two cores
        command.addAll(List.of("-Xmx192m", "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dlogback.configurationFile=" + dir.resolve("logback-worker.xml"), "-cp", classpath(),
                TortureWorker.class.getName()));
        options.forEach((k, v) -> command.add(k + "=" + v));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve(node + ".out").toFile());
        if (clockSkew != null) {
            // the library itself rather than the faketime command, which forks: signals must reach the JVM
            builder.environment().put("LD_PRELOAD", libfaketime().toString());
            builder.environment().put("FAKETIME", clockSkew);
        }
        Process p = builder.start();
        return new WorkerProcess(node, p, dir.resolve(node + ".log"), Integer.parseInt(options.get("threads")));
    }

    /** Debian's libfaketime (package {@code faketime}), multi-threaded flavour. */
    static Path libfaketime() throws IOException {
        for (String dir : List.of("/usr/lib/x86_64-linux-gnu/faketime", "/usr/lib/aarch64-linux-gnu/faketime",
                "/usr/lib/faketime", "/usr/local/lib/faketime")) {
            Path lib = Path.of(dir, "libfaketimeMT.so.1");
            if (Files.exists(lib)) {
                return lib;
            }
        }
        throw new IOException("libfaketime is missing: apt-get install faketime");
    }

    /** The test classpath: surefire puts it in a property, a plain {@code java -cp} run in {@code java.class.path}. */
    static String classpath() {
        String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }

    static void writeLoggingConfig(Path dir) throws IOException {
        Files.writeString(dir.resolve("logback-worker.xml"), """
                <configuration>
                  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
                    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{36} - %msg%n</pattern></encoder>
                  </appender>
                  <logger name="dev.locks" level="DEBUG"/>
                  <root level="WARN"><appender-ref ref="OUT"/></root>
                </configuration>
                """);
    }

    String node() {
        return node;
    }

    long pid() {
        return process.pid();
    }

    int threads() {
        return threads;
    }

    Path log() {
        return log;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** {@code kill -9}; returns when the process is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    void signal(String signal) throws Exception {
        PrivateDatabase.run(null, Duration.ofSeconds(10), "kill", "-" + signal, Long.toString(process.pid()));
    }

    /** Waits for the worker to end; kills it if it does not in time. Returns whether it ended by itself. */
    boolean awaitExit(Duration timeout) throws InterruptedException {
        if (process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            return true;
        }
        kill();
        return false;
    }

    int exitValue() {
        return process.exitValue();
    }

    /** Waits until the worker's log has the fact, or the timeout passes. */
    java.util.Optional<Map<String, String>> awaitFact(String fact, Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - until < 0) {
            List<Map<String, String>> facts = SectionLog.readFacts(log, fact);
            if (!facts.isEmpty()) {
                return java.util.Optional.of(facts.get(facts.size() - 1));
            }
            Thread.sleep(100);
        }
        return java.util.Optional.empty();
    }
}
