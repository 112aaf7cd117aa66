package dev.locks.torture;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A worker's log: one tab-separated line per section start ({@code B}), section end ({@code E}),
 * fact ({@code F}, e.g. what the pause victim saw) and final counters ({@code C}). Every line is
 * flushed at once, so a worker killed with {@code kill -9} leaves everything it logged before.
 */
final class SectionLog implements AutoCloseable {

    private final BufferedWriter out;

    SectionLog(Path file) {
        try {
            this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    void begin(Section s) {
        line("B", s.id(), s.owner(), String.valueOf(s.kind()), s.tenant(), String.valueOf(s.mode()),
                String.join(",", s.paths()), Long.toString(s.token()), s.reentered() ? "1" : "0", s.record(),
                Integer.toString(s.permits()), Long.toString(s.inMicros()), Long.toString(s.read1()));
    }

    void end(Section s) {
        line("E", s.id(), Long.toString(s.outMicros()), s.valid() ? "1" : "0", s.write().name(), Long.toString(s.read2()));
    }

    /** A fact for the checker, as {@code key=value} pairs. */
    void fact(String name, Object... keyValues) {
        List<String> parts = new ArrayList<>();
        parts.add("F");
        parts.add(name);
        for (int i = 0; i + 1 < keyValues.length; i += 2) {
            parts.add(keyValues[i] + "=" + keyValues[i + 1]);
        }
        line(parts.toArray(String[]::new));
    }

    void counters(Map<String, Long> counters) {
        List<String> parts = new ArrayList<>();
        parts.add("C");
        counters.forEach((k, v) -> parts.add(k + "=" + v));
        line(parts.toArray(String[]::new));
    }

    private synchronized void line(String... fields) {
        try {
            out.write(String.join("\t", fields));
            out.write('\n');
            out.flush();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    @Override
    public synchronized void close() {
        try {
            out.close();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** What one worker's log says. */
    record Contents(String node, List<Section> sections, List<Map<String, String>> facts, Map<String, Long> counters) {

        /** The facts with that name, each as its key-value pairs. */
        List<Map<String, String>> facts(String name) {
            return facts.stream().filter(f -> name.equals(f.get("fact"))).toList();
        }
    }

    /** Only the facts named {@code name}, without parsing the sections. */
    static List<Map<String, String>> readFacts(Path file, String name) {
        List<Map<String, String>> facts = new ArrayList<>();
        String start = "F\t" + name + "\t";
        try (java.util.stream.Stream<String> lines = Files.exists(file) ? Files.lines(file, StandardCharsets.UTF_8)
                : java.util.stream.Stream.empty()) {
            lines.filter(l -> l.startsWith(start)).forEach(l -> facts.add(parseFact(l.split("\t", -1))));
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return facts;
    }

    private static Map<String, String> parseFact(String[] f) {
        Map<String, String> fact = new LinkedHashMap<>();
        fact.put("fact", f[1]);
        Arrays.stream(f).skip(2).forEach(kv -> {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                fact.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        });
        return fact;
    }

    /** Reads a worker's log; a section without an end line stays open ({@code ended} false). */
    static Contents read(String node, Path file) {
        Map<String, Section> sections = new LinkedHashMap<>();
        List<Map<String, String>> facts = new ArrayList<>();
        Map<String, Long> counters = new LinkedHashMap<>();
        List<String> lines;
        try {
            lines = Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8) : List.of();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        for (String line : lines) {
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "B" -> {
                    if (f.length < 13) {
                        continue; // a line cut by kill -9
                    }
                    sections.put(f[1], new Section(f[1], node, f[2], f[3].charAt(0), f[4], f[5].charAt(0),
                            List.of(f[6].split(",")), Long.parseLong(f[7]), "1".equals(f[8]), f[9],
                            Integer.parseInt(f[10]), Long.parseLong(f[11]), Long.MAX_VALUE, false, false,
                            Section.Write.NONE, Long.parseLong(f[12]), -1));
                }
                case "E" -> {
                    Section s = sections.get(f[1]);
                    if (s != null && f.length >= 6) {
                        sections.put(f[1], s.ended(Long.parseLong(f[2]), "1".equals(f[3]), Section.Write.valueOf(f[4]),
                                Long.parseLong(f[5])));
                    }
                }
                case "F" -> facts.add(parseFact(f));
                case "C" -> Arrays.stream(f).skip(1).forEach(kv -> {
                    int eq = kv.indexOf('=');
                    if (eq > 0) {
                        counters.merge(kv.substring(0, eq), Long.parseLong(kv.substring(eq + 1)), Long::sum);
                    }
                });
                default -> {
                    // ignore anything else
                }
            }
        }
        return new Contents(node, new ArrayList<>(sections.values()), facts, counters);
    }
}
