package dev.locks.torture;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A database server of the torture run's own, in a temporary data directory on a port of its own,
 * so that it can be crashed and restarted without touching the shared test servers. The harness
 * creates it, restarts it mid-run and deletes it afterwards; nothing is needed beyond the server
 * packages ({@code postgresql}, {@code mariadb-server}).
 */
abstract class PrivateDatabase implements AutoCloseable {

    protected final Path dir;

    protected final int port;

    protected PrivateDatabase(Path dir, int port) {
        this.dir = dir;
        this.port = port;
    }

    /**
     * A private PostgreSQL or MariaDB for {@code dialect} ({@code postgresql} or {@code mysql}), in a
     * new directory under the system's temporary directory (short, since it holds a Unix socket).
     */
    static PrivateDatabase create(String dialect) throws Exception {
        Path dir = Files.createTempDirectory("torture-" + dialect + "-");
        int port = freePort();
        PrivateDatabase db = "mysql".equals(dialect) ? new PrivateMariaDb(dir, port) : new PrivatePostgres(dir, port);
        try {
            db.install();
            db.start();
            db.awaitReady(Duration.ofSeconds(60));
            db.createDatabase();
            return db;
        }
        catch (Exception ex) {
            db.close();
            throw ex;
        }
    }

    private static int freePort() throws IOException {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    abstract String dialect();

    abstract String jdbcUrl();

    abstract String user();

    abstract void install() throws Exception;

    abstract void start() throws Exception;

    /** Stops the server the way a crash would: no checkpoint, no goodbye to the clients. */
    abstract void crash() throws Exception;

    abstract void stopCleanly() throws Exception;

    abstract void createDatabase() throws Exception;

    /** Crashes the server, keeps it down for {@code down}, starts it again and waits until it answers. */
    void crashAndRestart(Duration down) throws Exception {
        crash();
        Thread.sleep(down.toMillis());
        start();
        awaitReady(Duration.ofSeconds(60));
    }

    void awaitReady(Duration timeout) throws Exception {
        long until = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        while (System.nanoTime() - until < 0) {
            try (Connection c = DriverManager.getConnection(adminUrl(), user(), "")) {
                return;
            }
            catch (Exception ex) {
                last = ex;
                Thread.sleep(100);
            }
        }
        throw new IllegalStateException(dialect() + " on port " + port + " did not come up; see " + dir, last);
    }

    /** A URL that works before the test database exists. */
    abstract String adminUrl();

    @Override
    public void close() {
        try {
            stopCleanly();
        }
        catch (Exception ex) {
            try {
                crash();
            }
            catch (Exception ignored) {
                // nothing left to stop
            }
        }
        deleteTree(dir);
    }

    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        catch (IOException ex) {
            // a leftover temporary directory does no harm
        }
    }

    static boolean runningAsRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** Runs a command, as {@code user} when this JVM runs as root, and fails unless it exits 0. */
    static String run(String user, Duration timeout, String... command) throws Exception {
        List<String> cmd = new ArrayList<>();
        if (runningAsRoot() && user != null) {
            cmd.add("runuser");
            cmd.add("-u");
            cmd.add(user);
            cmd.add("--");
        }
        cmd.addAll(List.of(command));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("Timed out: " + String.join(" ", cmd));
        }
        String output = new String(p.getInputStream().readAllBytes());
        if (p.exitValue() != 0) {
            throw new IllegalStateException("Failed (" + p.exitValue() + "): " + String.join(" ", cmd) + "\n" + output);
        }
        return output;
    }

    static void chown(Path path, String user) throws Exception {
        if (runningAsRoot()) {
            run(null, Duration.ofSeconds(10), "chown", "-R", user + ":" + user, path.toString());
        }
    }
}
