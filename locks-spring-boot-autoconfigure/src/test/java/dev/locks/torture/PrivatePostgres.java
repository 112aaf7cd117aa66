package dev.locks.torture;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A private PostgreSQL: {@code initdb} into a temporary directory, {@code pg_ctl} on its own port
 * with its socket in that directory. A crash is {@code pg_ctl stop -m immediate}: no shutdown
 * checkpoint, so the restart replays the WAL, as after a power cut.
 */
final class PrivatePostgres extends PrivateDatabase {

    private static final String OS_USER = "postgres";

    private final Path bin;

    PrivatePostgres(Path dir, int port) {
        super(dir, port);
        this.bin = findBin();
    }

    private static Path findBin() {
        try (Stream<Path> versions = Files.list(Path.of("/usr/lib/postgresql"))) {
            return versions.sorted(Comparator.reverseOrder()).map(v -> v.resolve("bin"))
                    .filter(b -> Files.isExecutable(b.resolve("pg_ctl"))).findFirst()
                    .orElseThrow(() -> new IllegalStateException("No PostgreSQL server under /usr/lib/postgresql"));
        }
        catch (java.io.IOException ex) {
            throw new IllegalStateException("PostgreSQL server packages are not installed (apt-get install postgresql)", ex);
        }
    }

    @Override
    String dialect() {
        return "postgresql";
    }

    @Override
    String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/torture";
    }

    @Override
    String adminUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
    }

    @Override
    String user() {
        return "postgres";
    }

    @Override
    void install() throws Exception {
        chown(dir, OS_USER);
        PrivateDatabase.run(OS_USER, Duration.ofSeconds(120), bin.resolve("initdb").toString(), "-D", data(), "-U", "postgres",
                "--auth=trust", "-N", "-E", "UTF8", "--locale=C.UTF-8");
    }

    private String data() {
        return dir.resolve("data").toString();
    }

    @Override
    void start() throws Exception {
        PrivateDatabase.run(OS_USER, Duration.ofSeconds(60), bin.resolve("pg_ctl").toString(), "-D", data(), "-l",
                dir.resolve("server.log").toString(), "-w", "-t", "50", "-o",
                "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1 -c max_connections=200"
                        + " -c shared_buffers=32MB -c fsync=on -c synchronous_commit=on",
                "start");
    }

    @Override
    void crash() throws Exception {
        PrivateDatabase.run(OS_USER, Duration.ofSeconds(60), bin.resolve("pg_ctl").toString(), "-D", data(), "-m", "immediate",
                "-w", "stop");
    }

    @Override
    void stopCleanly() throws Exception {
        PrivateDatabase.run(OS_USER, Duration.ofSeconds(60), bin.resolve("pg_ctl").toString(), "-D", data(), "-m", "fast",
                "-w", "stop");
    }

    @Override
    void createDatabase() throws Exception {
        try (Connection c = DriverManager.getConnection(adminUrl(), user(), ""); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE torture");
        }
    }
}
