package dev.locks.torture;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

class LockAuditTest {

    @Test
    void rowsWhoseDeleteCameBeforeTheOtherInsertDidNotCoexist() {
        List<LockAudit.Event> events = List.of(
                new LockAudit.Event(1, "I", 12, "t+30", "2026-11-23 05:38:00.100000"),
                new LockAudit.Event(2, "D", 12, null, "2026-11-23 05:38:00.200000"),
                new LockAudit.Event(3, "I", 15, "t+30", "2026-11-23 05:38:00.300000"));

        assertThat(LockAudit.verdict(events, 12, 15)).endsWith("they did not coexist");
    }

    @Test
    void timesThatDisagreeWithTheAuditOrderShowTheClockWentBack() {
        List<LockAudit.Event> events = List.of(
                new LockAudit.Event(1, "I", 12, "t+30", "2026-11-23 05:38:00.100000"),
                new LockAudit.Event(2, "D", 12, null, "2026-11-23 05:38:00.200000"),
                new LockAudit.Event(3, "I", 15, "t+30", "2026-11-23 05:38:00.125000"));

        assertThat(LockAudit.verdict(events, 12, 15)).endsWith("the database clock went back between the two");
    }

    @Test
    void aRowStillPresentWhenTheOtherWasInsertedCoexistedWithIt() {
        List<LockAudit.Event> events = List.of(
                new LockAudit.Event(1, "I", 12, "t+30", "2026-11-23 05:38:00.100000"),
                new LockAudit.Event(2, "I", 15, "t+30", "2026-11-23 05:38:00.150000"),
                new LockAudit.Event(3, "D", 12, null, "2026-11-23 05:38:00.200000"));

        assertThat(LockAudit.verdict(events, 12, 15)).endsWith("they coexisted");
    }
}
