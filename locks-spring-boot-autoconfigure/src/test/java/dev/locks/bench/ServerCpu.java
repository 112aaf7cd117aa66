package dev.locks.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import dev.locks.testing.TestDatabase;

/**
 * The CPU time of the database server's processes on this machine, so that a round can report
 * the server's CPU per operation beside the client's. From eight threads on a small machine the
 * two share the cores, and their sum per operation bounds throughput (BENCHMARKS.md, twenty-first
 * pass). Read from Linux's per-thread {@code schedstat} (nanoseconds on the CPU), summed over every
 * thread of every process with the server's name; unknown for H2 (in this JVM: the client's CPU
 * already holds its work), for a server that is not on loopback, and where {@code /proc} lacks the
 * figures. A thread that ends during a round takes its time with it, which pooled connections and
 * MariaDB's cached connection threads do not.
 */
final class ServerCpu {

    /** No figures: every reading is {@link #UNKNOWN}. */
    static final ServerCpu NONE = new ServerCpu(Set.of());

    /** What {@link #nanos} answers when it cannot tell. */
    static final long UNKNOWN = -1;

    private static final Path PROC = Path.of("/proc");

    private final Set<String> processNames;

    private ServerCpu(Set<String> processNames) {
        this.processNames = processNames;
    }

    /** The server of {@code database} reached at {@code jdbcUrl}, if it runs on this machine. */
    static ServerCpu of(TestDatabase database, String jdbcUrl) {
        if (!onLoopback(jdbcUrl) || !Files.isDirectory(PROC)) {
            return NONE;
        }
        return switch (database) {
            case MYSQL -> new ServerCpu(Set.of("mariadbd", "mysqld"));
            case POSTGRESQL -> new ServerCpu(Set.of("postgres"));
            case H2 -> NONE;
        };
    }

    private static boolean onLoopback(String jdbcUrl) {
        return jdbcUrl != null && List.of("//127.0.0.1", "//localhost", "//[::1]").stream().anyMatch(jdbcUrl::contains);
    }

    /** @return the server's CPU time so far, in nanoseconds, or {@link #UNKNOWN} */
    long nanos() {
        if (processNames.isEmpty()) {
            return UNKNOWN;
        }
        long total = 0;
        boolean found = false;
        try (DirectoryStream<Path> processes = Files.newDirectoryStream(PROC, "[0-9]*")) {
            for (Path process : processes) {
                if (!processNames.contains(name(process))) {
                    continue;
                }
                long onCpu = threadsOnCpu(process);
                if (onCpu == UNKNOWN) {
                    return UNKNOWN;
                }
                total += onCpu;
                found = true;
            }
        }
        catch (IOException ex) {
            return UNKNOWN;
        }
        return found ? total : UNKNOWN;
    }

    private static String name(Path process) {
        try {
            return Files.readString(process.resolve("comm")).strip();
        }
        catch (IOException ex) {
            // the process ended while the directory was read
            return "";
        }
    }

    private static long threadsOnCpu(Path process) {
        long total = 0;
        try (DirectoryStream<Path> threads = Files.newDirectoryStream(process.resolve("task"))) {
            for (Path thread : threads) {
                try {
                    // "time on the CPU (ns)  time waiting to run (ns)  timeslices"
                    total += Long.parseLong(Files.readString(thread.resolve("schedstat")).split(" ")[0]);
                }
                catch (NoSuchFileException ex) {
                    // the thread ended between the listing and the read
                }
            }
        }
        catch (NoSuchFileException ex) {
            // the process ended (an autovacuum worker, say) and took its time with it
            return 0;
        }
        catch (IOException | RuntimeException ex) {
            return UNKNOWN;
        }
        return total;
    }
}
