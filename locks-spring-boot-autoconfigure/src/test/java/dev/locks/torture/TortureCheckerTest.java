package dev.locks.torture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * The torture checker on hand-made histories: it must flag each kind of violation, and accept
 * what the library allows (lease loss fenced off, shared locks together, other tenants).
 */
class TortureCheckerTest {

    private final List<Section> sections = new ArrayList<>();

    private final List<SharedRecords.HistoryRow> history = new ArrayList<>();

    private final Map<String, SharedRecords.Values> values = new HashMap<>();

    private long seq;

    private Section section(String owner, char mode, String path, long token, long in, long out, boolean valid) {
        return add(new Section("s" + sections.size(), "w1", owner, 'P', "t1", mode, List.of(path), token, false, "-", 0,
                in, out, true, valid, Section.Write.NONE, -1, -1));
    }

    private Section add(Section s) {
        sections.add(s);
        return s;
    }

    private Section writer(String owner, String record, long token, long in, long out, boolean valid, Section.Write write) {
        return add(new Section("s" + sections.size(), "w1", owner, 'P', "t1", 'X', List.of(record.substring(3)), token,
                false, record, 0, in, out, true, valid, write, -1, -1));
    }

    private void written(Section s, char kind, long old) {
        history.add(new SharedRecords.HistoryRow(++seq, s.record(), s.id(), s.token(), kind, old, old + 1));
        SharedRecords.Values v = values.getOrDefault(s.record(), new SharedRecords.Values(0, 0, 0));
        values.put(s.record(), kind == 'F' ? new SharedRecords.Values(old + 1, v.plain(), s.token())
                : new SharedRecords.Values(v.value(), old + 1, v.fence()));
    }

    private TortureChecker.Result check() {
        return new TortureChecker(sections, history, values, Map.of("exports", 2)).check();
    }

    @Test
    void exclusiveLocksOnTheSamePathOverlappingInTimeAreAViolation() {
        section("a", 'X', "/p/a", 1, 100, 200, true);
        section("b", 'X', "/p/a", 2, 150, 250, true);
        assertThat(check().violations()).anyMatch(v -> v.contains("overlap in database time"));
    }

    @Test
    void anAncestorAndADescendantOverlappingInTimeAreAViolation() {
        section("a", 'S', "/p", 1, 100, 200, true);
        section("b", 'X', "/p/a/0/x", 2, 150, 250, true);
        assertThat(check().passed()).isFalse();
    }

    @Test
    void sharedLocksSiblingsPrefixesAndOtherTenantsMayOverlap() {
        section("a", 'S', "/p/a", 1, 100, 200, true);
        section("b", 'S', "/p/a/0", 2, 150, 250, true);
        section("c", 'X', "/p/b", 3, 150, 250, true);
        section("d", 'X', "/p/a/1/x", 4, 300, 400, true);
        section("e", 'X', "/p/a/1/y", 5, 300, 400, true);
        add(new Section("s9", "w2", "f", 'P', "t2", 'X', List.of("/p/a/1/x"), 6, false, "-", 0, 300, 400, true, true,
                Section.Write.NONE, -1, -1));
        TortureChecker.Result result = check();
        assertThat(result.violations()).isEmpty();
        assertThat(result.figures().get("crossTenantOverlaps")).isEqualTo(1L);
    }

    @Test
    void theSameOwnerMayHoldOverlappingLocks() {
        section("a", 'X', "/p/a", 1, 100, 400, true);
        section("a", 'X', "/p/a/0", 2, 150, 250, true);
        assertThat(check().violations()).isEmpty();
    }

    @Test
    void aLostSectionMayOverlapTheNextHolderIfItHasTheLowerToken() {
        section("a", 'X', "/p/a", 1, 100, 5000, false);
        section("b", 'X', "/p/a", 2, 3200, 3300, true);
        TortureChecker.Result result = check();
        assertThat(result.violations()).isEmpty();
        assertThat(result.figures().get("lostOverlaps")).isEqualTo(1L);
    }

    @Test
    void aLostSectionWithTheHigherTokenWasGrantedTooEarly() {
        section("a", 'X', "/p/a", 1, 100, 5000, true);
        section("b", 'X', "/p/a", 2, 3200, 3300, false);
        assertThat(check().violations()).anyMatch(v -> v.contains("higher token"));
    }

    @Test
    void aLaterConflictingGrantWithASmallerTokenIsAViolation() {
        section("a", 'X', "/p/a/0", 7, 100, 200, true);
        section("b", 'S', "/p/a", 5, 300, 400, true);
        assertThat(check().violations()).anyMatch(v -> v.contains("Token did not increase"));
    }

    @Test
    void sharedGrantsOfDifferentOwnersMayTakeTokensInEitherOrder() {
        section("a", 'S', "/p/a", 7, 100, 200, true);
        section("b", 'S', "/p/a", 5, 300, 400, true);
        assertThat(check().violations()).isEmpty();
    }

    @Test
    void twoGrantsWithOneTokenAreAViolation() {
        section("a", 'X', "/p/a", 7, 100, 200, true);
        section("b", 'X', "/p/b", 7, 100, 200, true);
        assertThat(check().violations()).anyMatch(v -> v.contains("share token"));
    }

    @Test
    void aFencedWriteThatReadAStaleValueIsALostUpdate() {
        Section a = writer("a", "t1|/p/a/0/x", 1, 100, 200, true, Section.Write.ACCEPTED);
        Section b = writer("b", "t1|/p/a/0/x", 2, 300, 400, true, Section.Write.ACCEPTED);
        written(a, 'F', 0);
        written(b, 'F', 0);
        assertThat(check().violations()).anyMatch(v -> v.contains("Lost update"));
    }

    @Test
    void aRecordThatDoesNotEndAtItsNumberOfWritesIsAViolation() {
        Section a = writer("a", "t1|/p/a/0/x", 1, 100, 200, true, Section.Write.ACCEPTED);
        written(a, 'F', 0);
        values.put(a.record(), new SharedRecords.Values(2, 0, 1));
        assertThat(check().violations()).anyMatch(v -> v.contains("ends at 2"));
    }

    @Test
    void aWriteReportedAcceptedButMissingFromTheHistoryIsAViolation() {
        writer("a", "t1|/p/a/0/x", 1, 100, 200, true, Section.Write.ACCEPTED);
        assertThat(check().violations()).anyMatch(v -> v.contains("history has 0"));
    }

    @Test
    void aHeldSectionFencedOffIsAViolation() {
        writer("a", "t1|/p/a/0/x", 1, 100, 200, true, Section.Write.FENCED);
        assertThat(check().violations()).anyMatch(v -> v.contains("held section was fenced off"));
    }

    @Test
    void aLostSectionFencedOffIsCountedNotFlagged() {
        writer("a", "t1|/p/a/0/x", 1, 100, 5000, false, Section.Write.FENCED);
        TortureChecker.Result result = check();
        assertThat(result.violations()).isEmpty();
        assertThat(result.figures().get("staleWritesRejectedByFence")).isEqualTo(1L);
    }

    @Test
    void anUnfencedLostUpdateBetweenTwoHeldSectionsIsAViolation() {
        Section a = writer("a", "t1|/p/a/0/x", 1, 100, 200, true, Section.Write.NONE);
        Section b = writer("b", "t1|/p/a/0/x", 2, 150, 250, true, Section.Write.NONE);
        written(a, 'P', 0);
        written(b, 'P', 0);
        assertThat(check().violations()).anyMatch(v -> v.contains("Unfenced lost update"));
    }

    @Test
    void anUnfencedLostUpdateByALostSectionIsTheExpectedCostOfNoFence() {
        Section stale = writer("a", "t1|/p/a/0/x", 1, 100, 5000, false, Section.Write.FENCED);
        Section next = writer("b", "t1|/p/a/0/x", 2, 3200, 3300, true, Section.Write.ACCEPTED);
        written(next, 'F', 0);
        written(next, 'P', 0);
        written(stale, 'P', 0);
        TortureChecker.Result result = check();
        assertThat(result.violations()).isEmpty();
        assertThat(result.figures().get("unfencedLostUpdatesByLostSections")).isEqualTo(1L);
    }

    @Test
    void aValueThatChangesUnderAHeldReaderThroughAHeldWriterIsAViolation() {
        Section w = writer("w", "t1|/p/a/0/x", 1, 100, 200, true, Section.Write.ACCEPTED);
        written(w, 'F', 0);
        add(new Section("r", "w2", "r", 'P', "t1", 'S', List.of("/p/a/0"), 2, false, "t1|/p/a/0/x", 0, 50, 300, true, true,
                Section.Write.NONE, 0, 1));
        assertThat(check().violations()).anyMatch(v -> v.contains("changed by a write"));
    }

    /** A held permit of semaphore {@code exports} in tenant t1, taken by a holder that asked for {@code max}. */
    private Section permit(long token, int max, long in, long out) {
        return add(new Section("m" + token, "w1", "o" + token, 'M', "t1", 'S', List.of("exports"), token, false, "-", max,
                in, out, true, true, Section.Write.NONE, -1, -1));
    }

    @Test
    void semaphorePermitsAboveTheMaximumAreAViolation() {
        for (int i = 0; i < 3; i++) {
            permit(10 + i, 2, 100 + i, 200);
        }
        assertThat(check().violations()).anyMatch(v -> v.contains("Semaphore"));
    }

    @Test
    void semaphorePermitsThatFollowEachOtherStayWithinTheMaximum() {
        for (int i = 0; i < 3; i++) {
            permit(10 + i, 2, 100 + 100 * i, 200 + 100 * i);
        }
        TortureChecker.Result result = check();
        assertThat(result.violations()).isEmpty();
        assertThat(result.figures().get("semaphorePeak:t1|exports")).isEqualTo(1L);
    }

    @Test
    void morePermitsThanTheSmallestMaxOfAHolderInAreAViolation() {
        permit(10, 1, 100, 200);
        permit(11, 2, 150, 250);
        assertThat(check().violations()).anyMatch(v -> v.contains("asked for max 1"));
    }

    @Test
    void aSemaphoreSectionWithoutItsMaxIsRefusedAsAHarnessError() {
        permit(10, 0, 100, 200);
        assertThatIllegalArgumentException().isThrownBy(this::check).withMessageContaining("does not say its max");
    }

    @Test
    void aLargerMaxMayFillTheSemaphoreOnceTheSmallerMaxHasLeft() {
        permit(10, 1, 100, 200);
        permit(11, 2, 200, 300);
        permit(12, 2, 250, 350);
        assertThat(check().violations()).isEmpty();
    }

    @Test
    void aSingletonHeldTwiceAtOnceIsAViolation() {
        add(new Section("j1", "w1", "a", 'J', "default", 'X', List.of("job-a"), 1, false, "-", 0, 100, 200, true, true,
                Section.Write.NONE, -1, -1));
        add(new Section("j2", "w2", "b", 'J', "default", 'X', List.of("job-a"), 2, false, "-", 0, 150, 250, true, true,
                Section.Write.NONE, -1, -1));
        assertThat(check().passed()).isFalse();
    }
}
