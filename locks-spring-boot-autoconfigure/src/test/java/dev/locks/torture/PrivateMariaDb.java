package dev.locks.torture;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;

/**
 * A private MariaDB: {@code mariadb-install-db} into a temporary directory (root with an empty
 * password over TCP), {@code mariadbd --no-defaults} on its own port and socket, so that the
 * machine's configuration and shared server stay out of it. A crash is {@code kill -9} of the
 * server; InnoDB recovers from its redo log on the restart.
 */
final class PrivateMariaDb extends PrivateDatabase {

    private static final String OS_USER = "mysql";

    private Process server;

    PrivateMariaDb(Path dir, int port) {
        super(dir, port);
    }

    @Override
    String dialect() {
        return "mysql";
    }

    @Override
    String jdbcUrl() {
        return "jdbc:mysql://127.0.0.1:" + port + "/torture?connectTimeout=2000&socketTimeout=30000";
    }

    @Override
    String adminUrl() {
        return "jdbc:mysql://127.0.0.1:" + port + "/?connectTimeout=2000";
    }

    @Override
    String user() {
        return "root";
    }

    @Override
    void install() throws Exception {
        Files.createDirectories(dir.resolve("data"));
        chown(dir, OS_USER);
        PrivateDatabase.run(null, Duration.ofSeconds(120), "mariadb-install-db", "--no-defaults",
                "--datadir=" + dir.resolve("data"), "--user=" + OS_USER, "--auth-root-authentication-method=normal",
                "--skip-test-db");
    }

    @Override
    void start() throws Exception {
        server = new ProcessBuilder("mariadbd", "--no-defaults", "--datadir=" + dir.resolve("data"),
                "--port=" + port, "--bind-address=127.0.0.1", "--socket=" + dir.resolve("mysqld.sock"),
                "--pid-file=" + dir.resolve("mysqld.pid"), "--user=" + OS_USER,
                "--log-error=" + dir.resolve("server.log"), "--skip-log-bin", "--innodb-buffer-pool-size=64M",
                "--innodb-flush-log-at-trx-commit=1", "--max-connections=300")
                .redirectErrorStream(true).redirectOutput(dir.resolve("stdout.log").toFile()).start();
    }

    @Override
    void crash() throws Exception {
        if (server != null) {
            server.destroyForcibly();
            server.waitFor();
            server = null;
        }
    }

    @Override
    void stopCleanly() throws Exception {
        if (server != null) {
            server.destroy();
            if (!server.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
                crash();
            }
            server = null;
        }
    }

    @Override
    void createDatabase() throws Exception {
        try (Connection c = DriverManager.getConnection(adminUrl(), user(), ""); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE torture");
        }
    }
}
