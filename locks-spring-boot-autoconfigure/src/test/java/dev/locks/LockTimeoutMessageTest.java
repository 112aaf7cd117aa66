package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** What a timeout tells about the holders, however many there are. */
class LockTimeoutMessageTest {

    @Test
    void aTimeoutNamesFiveHoldersAndCountsTheRest() {
        List<LockHolder> holders = new ArrayList<>();
        for (int i = 1; i <= 12; i++) {
            holders.add(new LockHolder(i, LockKind.SEMAPHORE, "t", "exports", LockMode.SHARED, "node-" + i, "thread",
                    Instant.EPOCH, Instant.EPOCH.plusSeconds(30), "abcdef01", false));
        }

        LockTimeoutException ex = new LockTimeoutException("semaphore 'exports' (max 12)", Duration.ofSeconds(1), holders);

        assertThat(ex.getMessage()).contains("node-5").doesNotContain("node-6").endsWith("; and 7 more");
        assertThat(ex.getHolders()).hasSize(12);
    }

    @Test
    void aTimeoutWithFewHoldersNamesThemAll() {
        List<LockHolder> holders = List.of(new LockHolder(1, LockKind.PATH, "t", "/a", LockMode.EXCLUSIVE, "node-1",
                "thread", Instant.EPOCH, Instant.EPOCH.plusSeconds(30), "abcdef01", false));

        LockTimeoutException ex = new LockTimeoutException("EXCLUSIVE /a", Duration.ZERO, holders);

        assertThat(ex.getMessage()).contains("node-1").doesNotContain("more");
    }
}
