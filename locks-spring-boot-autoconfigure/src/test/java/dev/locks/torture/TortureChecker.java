package dev.locks.torture;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Proves, from the workers' section logs and the records' write history, that a run kept the
 * library's promises. A section is <em>held</em> when its handle was still valid after its end
 * time was read (so its lease covered the whole interval), <em>lost</em> when the handle had
 * turned invalid, <em>died</em> when its worker was killed inside it (its interval then ends at
 * the kill). The rules:
 * <ol>
 * <li><b>Exclusion.</b> Two conflicting sections (same tenant and kind, overlapping paths or equal
 * name, different owners, at least one exclusive) never overlap in database time when both were
 * held. A lost section may overlap a held one only if it has the lower token (the lock was taken
 * from it, not given to it early).</li>
 * <li><b>Tokens.</b> Of two conflicting held sections, the earlier has the smaller token; distinct
 * grants never share a token.</li>
 * <li><b>Fenced data.</b> Each record's fenced writes chain without a gap (every write read the
 * previous write's value), with increasing tokens, and the record ends at the number of writes;
 * every write a section reports as accepted is in the history, and no fenced-off write is; a held
 * section is never fenced off.</li>
 * <li><b>Unfenced data.</b> A read-modify-write without the fence may lose an update only to a
 * lost section: a lost update between two held sections is a violation.</li>
 * <li><b>Readers.</b> The fenced value under a held shared lock changes only through writes of
 * lost sections (readers do not fence).</li>
 * <li><b>Semaphores.</b> Held permits of one semaphore never exceed its maximum at any instant, nor
 * the smallest max that a holder in at that instant asked for (workers disagree on a max, as nodes
 * do during a rolling change of it).</li>
 * </ol>
 */
final class TortureChecker {

    private static final int EXAMPLES = 20;

    private final List<Section> sections;

    private final List<SharedRecords.HistoryRow> history;

    private final Map<String, SharedRecords.Values> finalValues;

    private final Map<String, Integer> semaphoreMax;

    private final List<String> violations = new ArrayList<>();

    private final Map<String, Long> figures = new TreeMap<>();

    /**
     * @param sections every section of the run, with died sections closed at their worker's kill
     *                 and the rows a killed worker left behind as held sections until their lease end
     * @param history the records' write history in commit order
     * @param finalValues the records at the end
     * @param semaphoreMax permits per semaphore name
     */
    TortureChecker(List<Section> sections, List<SharedRecords.HistoryRow> history,
            Map<String, SharedRecords.Values> finalValues, Map<String, Integer> semaphoreMax) {
        this.sections = sections;
        this.history = history;
        this.finalValues = finalValues;
        this.semaphoreMax = semaphoreMax;
    }

    /** The result: violations (none in a good run) and what was checked. */
    record Result(List<String> violations, Map<String, Long> figures) {

        boolean passed() {
            return violations.isEmpty();
        }
    }

    Result check() {
        figures.put("sections", (long) sections.size());
        figures.put("sectionsHeld", sections.stream().filter(TortureChecker::held).count());
        figures.put("sectionsLost", sections.stream().filter(s -> s.ended() && !s.valid()).count());
        checkExclusion();
        checkTokens();
        checkFencedHistory();
        checkUnfencedHistory();
        checkReaders();
        checkSemaphores();
        return new Result(List.copyOf(violations), Map.copyOf(figures));
    }

    private static boolean held(Section s) {
        return s.ended() && s.valid();
    }

    private static boolean lost(Section s) {
        return s.ended() && !s.valid();
    }

    private void violation(String text) {
        figures.merge("violations", 1L, Long::sum);
        if (violations.size() < EXAMPLES) {
            violations.add(text);
        }
    }

    private void bump(String figure) {
        figures.merge(figure, 1L, Long::sum);
    }

    private void checkExclusion() {
        List<Section> byStart = new ArrayList<>(sections);
        byStart.removeIf(s -> !s.ended());
        byStart.sort(Comparator.comparingLong(Section::inMicros));
        List<Section> active = new ArrayList<>();
        long pairs = 0;
        for (Section s : byStart) {
            active.removeIf(a -> a.outMicros() <= s.inMicros());
            for (Section a : active) {
                if (!a.conflictsWith(s)) {
                    if (!a.tenant().equals(s.tenant()) && a.wouldConflictInOneTenant(s)) {
                        // evidence of isolation: the same locks held at once in two tenants
                        bump("crossTenantOverlaps");
                    }
                    continue;
                }
                pairs++;
                if (held(a) && held(s)) {
                    violation("Conflicting sections overlap in database time: " + a + " and " + s);
                }
                else if (held(a) || held(s)) {
                    Section keeper = held(a) ? a : s;
                    Section loser = held(a) ? s : a;
                    bump("lostOverlaps");
                    if (loser.token() >= keeper.token()) {
                        violation("A lost section overlaps a held one with a higher token (granted early?): " + loser
                                + " and " + keeper);
                    }
                }
                else {
                    bump("lostLostOverlaps");
                }
            }
            active.add(s);
        }
        figures.put("conflictingOverlapsChecked", pairs);
    }

    private void checkTokens() {
        Map<Long, Section> byToken = new HashMap<>();
        for (Section s : sections) {
            if (s.reentered() || synthetic(s)) {
                continue;
            }
            Section other = byToken.putIfAbsent(s.token(), s);
            if (other != null) {
                violation("Two grants share token " + s.token() + ": " + other + " and " + s);
            }
        }
        Map<String, List<Section>> groups = new HashMap<>();
        for (Section s : sections) {
            if (!held(s) || s.reentered() || s.kind() == 'M') {
                continue;
            }
            for (String leaf : coveredLeaves(s)) {
                groups.computeIfAbsent(s.kind() + "|" + s.tenant() + "|" + leaf, k -> new ArrayList<>()).add(s);
            }
        }
        long checked = 0;
        for (List<Section> group : groups.values()) {
            List<Section> byIn = new ArrayList<>(group);
            byIn.sort(Comparator.comparingLong(Section::inMicros));
            List<Section> byOut = new ArrayList<>(group);
            byOut.sort(Comparator.comparingLong(Section::outMicros));
            int next = 0;
            Section maxAll = null;
            Section maxExclusive = null;
            for (Section s : byIn) {
                while (next < byOut.size() && byOut.get(next).outMicros() < s.inMicros()) {
                    Section t = byOut.get(next++);
                    if (maxAll == null || t.token() > maxAll.token()) {
                        maxAll = t;
                    }
                    if (t.exclusive() && (maxExclusive == null || t.token() > maxExclusive.token())) {
                        maxExclusive = t;
                    }
                }
                if (synthetic(s)) {
                    continue;
                }
                // two shared sections of different owners may be granted in either order
                Section earlier = s.exclusive() ? maxAll : maxExclusive;
                checked++;
                if (earlier != null && earlier.token() >= s.token()) {
                    violation("Token did not increase: " + earlier + " ended before " + s + " began");
                }
            }
        }
        figures.put("tokenOrderChecks", checked);
    }

    private static boolean synthetic(Section s) {
        return s.owner().startsWith("killed:");
    }

    private static List<String> coveredLeaves(Section s) {
        if (s.kind() == 'J') {
            return List.of(s.paths().get(0));
        }
        List<String> leaves = new ArrayList<>();
        for (String path : s.paths()) {
            if (path.equals(TortureTree.PAUSE_PATH)) {
                leaves.add(path);
                continue;
            }
            for (String leaf : TortureTree.leaves()) {
                if (TortureTree.overlaps(path, leaf)) {
                    leaves.add(leaf);
                }
            }
        }
        return leaves;
    }

    private void checkFencedHistory() {
        Map<String, Section> byId = new HashMap<>();
        sections.forEach(s -> byId.put(s.id(), s));
        Map<String, List<SharedRecords.HistoryRow>> perRecord = perRecord('F');
        Map<String, Integer> writesPerSection = new HashMap<>();
        long writes = 0;
        for (Map.Entry<String, List<SharedRecords.HistoryRow>> e : perRecord.entrySet()) {
            long expected = 0;
            long lastToken = Long.MIN_VALUE;
            for (SharedRecords.HistoryRow row : e.getValue()) {
                writes++;
                writesPerSection.merge(row.sectionId(), 1, Integer::sum);
                if (row.oldValue() != expected) {
                    violation("Lost update on " + e.getKey() + ": write " + row.seq() + " by " + row.sectionId()
                            + " read " + row.oldValue() + " but the value was " + expected);
                }
                if (row.token() <= lastToken) {
                    violation("Fenced write " + row.seq() + " on " + e.getKey() + " with token " + row.token()
                            + " after token " + lastToken);
                }
                expected = row.newValue();
                lastToken = row.token();
                Section s = byId.get(row.sectionId());
                if (s != null && s.ended() && s.write() == Section.Write.FENCED) {
                    violation("A write reported as fenced off is in the history: " + s);
                }
            }
            SharedRecords.Values end = finalValues.get(e.getKey());
            if (end == null || end.value() != expected) {
                violation("Record " + e.getKey() + " ends at " + (end == null ? "nothing" : end.value()) + " after "
                        + e.getValue().size() + " fenced writes");
            }
        }
        finalValues.forEach((id, v) -> {
            if (!perRecord.containsKey(id) && v.value() != 0) {
                violation("Record " + id + " is " + v.value() + " without any fenced write in the history");
            }
        });
        for (Section s : sections) {
            int n = writesPerSection.getOrDefault(s.id(), 0);
            if (s.write() == Section.Write.ACCEPTED && n != 1) {
                violation("Section " + s + " reports an accepted write but the history has " + n);
            }
            if (n > 1) {
                violation("Section " + s + " wrote " + n + " times");
            }
            if (held(s) && s.write() == Section.Write.FENCED) {
                violation("A held section was fenced off (a later token claimed its record while it held the lock): " + s);
            }
            if (lost(s) && s.write() == Section.Write.FENCED) {
                bump("staleWritesRejectedByFence");
            }
            if (lost(s) && s.write() == Section.Write.ACCEPTED) {
                bump("lostSectionWritesBeforeNextClaim");
            }
        }
        figures.put("fencedWrites", writes);
    }

    private Map<String, List<SharedRecords.HistoryRow>> perRecord(char kind) {
        Map<String, List<SharedRecords.HistoryRow>> perRecord = new TreeMap<>();
        for (SharedRecords.HistoryRow row : history) {
            if (row.kind() == kind) {
                perRecord.computeIfAbsent(row.recordId(), k -> new ArrayList<>()).add(row);
            }
        }
        return perRecord;
    }

    private void checkUnfencedHistory() {
        Map<String, Section> byId = new HashMap<>();
        sections.forEach(s -> byId.put(s.id(), s));
        for (Map.Entry<String, List<SharedRecords.HistoryRow>> e : perRecord('P').entrySet()) {
            List<SharedRecords.HistoryRow> rows = e.getValue();
            for (int i = 0; i < rows.size(); i++) {
                SharedRecords.HistoryRow row = rows.get(i);
                long previous = i == 0 ? 0 : rows.get(i - 1).newValue();
                if (row.oldValue() == previous) {
                    continue;
                }
                // this write read a value that writes between then and now had already replaced
                int k = i - 1;
                while (k >= 0 && rows.get(k).newValue() != row.oldValue()) {
                    k--;
                }
                Section writer = byId.get(row.sectionId());
                boolean violated = false;
                for (int j = k + 1; j < i; j++) {
                    Section between = byId.get(rows.get(j).sectionId());
                    if (writer != null && held(writer) && between != null && held(between)) {
                        violated = true;
                        violation("Unfenced lost update on " + e.getKey() + " between two held sections: " + between
                                + " wrote inside " + writer);
                    }
                }
                if (!violated) {
                    bump("unfencedLostUpdatesByLostSections");
                }
            }
            SharedRecords.Values end = finalValues.get(e.getKey());
            if (end == null || end.plain() != rows.get(rows.size() - 1).newValue()) {
                violation("Record " + e.getKey() + " plain counter does not match its last write");
            }
        }
    }

    private void checkReaders() {
        Map<String, List<SharedRecords.HistoryRow>> fenced = perRecord('F');
        Map<String, Section> byId = new HashMap<>();
        sections.forEach(s -> byId.put(s.id(), s));
        long checked = 0;
        for (Section s : sections) {
            if (!held(s) || s.read1() < 0 || s.read2() < 0) {
                continue;
            }
            checked++;
            if (s.read1() == s.read2()) {
                continue;
            }
            if (s.read2() < s.read1()) {
                violation("A fenced value went back under " + s);
                continue;
            }
            boolean byHeldWriter = false;
            for (SharedRecords.HistoryRow row : fenced.getOrDefault(s.record(), List.of())) {
                if (row.newValue() > s.read1() && row.newValue() <= s.read2()) {
                    Section writer = byId.get(row.sectionId());
                    if (writer == null || held(writer)) {
                        byHeldWriter = true;
                        violation("The value under " + s + " changed by a write of " + (writer == null ? row.sectionId() : writer));
                    }
                }
            }
            if (!byHeldWriter) {
                bump("staleWritesSeenByReaders");
            }
        }
        figures.put("readerChecks", checked);
    }

    private void checkSemaphores() {
        Map<String, List<Section>> bySemaphore = new HashMap<>();
        for (Section s : sections) {
            if (s.kind() == 'M' && s.permits() < 1) {
                // a section built without its holder's max would pass for a violation of the engine
                throw new IllegalArgumentException("Semaphore section " + s.id() + " does not say its max: " + s);
            }
            if (s.kind() == 'M' && held(s)) {
                bySemaphore.computeIfAbsent(s.tenant() + "|" + s.paths().get(0), k -> new ArrayList<>()).add(s);
            }
        }
        bySemaphore.forEach((key, list) -> {
            String name = key.substring(key.indexOf('|') + 1);
            int max = semaphoreMax.getOrDefault(name, Integer.MAX_VALUE);
            // time, +1 or -1, the holder's own max
            List<long[]> events = new ArrayList<>();
            for (Section s : list) {
                events.add(new long[] { s.inMicros(), 1, s.permits() });
                events.add(new long[] { s.outMicros(), -1, s.permits() });
            }
            // at equal times an end comes before a start: [in, out) intervals
            events.sort(Comparator.<long[]>comparingLong(e -> e[0]).thenComparingLong(e -> e[1]));
            TreeMap<Long, Integer> maxesIn = new TreeMap<>();
            int in = 0;
            int peak = 0;
            for (long[] e : events) {
                in += (int) e[1];
                maxesIn.merge(e[2], (int) e[1], (a, b) -> a + b == 0 ? null : a + b);
                peak = Math.max(peak, in);
                if (in > max) {
                    violation("Semaphore " + key + " had " + in + " permits held at " + e[0] + " (max " + max + ")");
                }
                else if (in > 0 && in > maxesIn.firstKey()) {
                    violation("Semaphore " + key + " had " + in + " permits held at " + e[0]
                            + " while a holder that asked for max " + maxesIn.firstKey() + " was in");
                }
            }
            figures.merge("semaphorePeak:" + key, (long) peak, Math::max);
        });
    }
}
