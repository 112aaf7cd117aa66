package dev.locks.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/**
 * Where benchmark figures go: printed, and appended as Markdown table rows to
 * {@code target/benchmarks/results.md}, from which BENCHMARKS.md is written. A missed target is
 * marked, and fails the run only when {@code -Dlocks.bench.enforce=true} (a shared, noisy machine
 * should not break a build by itself).
 */
final class Results {

    private static final Path FILE = Path.of("target", "benchmarks", "results.md");

    private Results() {
    }

    /** A section with a table of comparisons: the scenario and the database. */
    static synchronized void section(String title) {
        heading(title);
        write("| measure | ours | peer | ratio | target | |\n|---|---|---|---|---|---|");
    }

    /** A section header alone. */
    static synchronized void heading(String title) {
        write("\n### " + title + "\n");
        System.out.println("[bench] " + OffsetDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.SECONDS) + " " + title);
    }

    /**
     * A row comparing two figures.
     *
     * @param higherIsBetter true for throughput, false for latency
     * @param target the bound on {@code ratio} (ours ÷ theirs), or NaN for none
     * @return true if the target is met or there is none
     */
    static synchronized boolean compare(String measure, String ours, String peer, double ratio, boolean higherIsBetter,
            double target) {
        boolean met = Double.isNaN(target) || (higherIsBetter ? ratio >= target : ratio <= target);
        String bound = Double.isNaN(target) ? "" : (higherIsBetter ? "≥ " : "≤ ") + format(target) + "×";
        write("| " + measure + " | " + ours + " | " + peer + " | " + format(ratio) + "× | " + bound + " | "
                + (Double.isNaN(target) ? "" : met ? "met" : "**missed**") + " |");
        if (!met && Boolean.getBoolean("locks.bench.enforce")) {
            throw new AssertionError("Benchmark target missed: " + measure + " ratio " + format(ratio) + ", target " + bound);
        }
        return met;
    }

    /** A row with a single figure and its bound. */
    static synchronized boolean figure(String measure, String value, String bound, boolean met) {
        write("| " + measure + " | " + value + " | | | " + bound + " | " + (bound.isEmpty() ? "" : met ? "met" : "**missed**")
                + " |");
        if (!met && Boolean.getBoolean("locks.bench.enforce")) {
            throw new AssertionError("Benchmark target missed: " + measure + " = " + value + ", target " + bound);
        }
        return met;
    }

    /** A raw Markdown line, e.g. a row of a table started with {@link #note}. */
    static synchronized void line(String text) {
        write(text);
    }

    static synchronized void note(String text) {
        write("\n" + text);
    }

    static String perSecond(double rate) {
        return String.format(Locale.ROOT, "%,.0f/s", rate);
    }

    static String millis(double nanos) {
        return String.format(Locale.ROOT, "%.2f ms", nanos / 1e6);
    }

    static String micros(double nanos) {
        return String.format(Locale.ROOT, "%.0f µs", nanos / 1e3);
    }

    static String format(double value) {
        return String.format(Locale.ROOT, "%.2f", value);
    }

    private static void write(String line) {
        System.out.println(line);
        try {
            Files.createDirectories(FILE.getParent());
            Files.writeString(FILE, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }
        catch (IOException ex) {
            System.err.println("Cannot write " + FILE + ": " + ex);
        }
    }
}
