package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.locks.store.WaitGraphRow;

class WaitForGraphTest {

    private final List<WaitGraphRow> rows = new ArrayList<>();

    private long ids;

    private void holds(String owner, String path, LockMode mode) {
        rows.add(new WaitGraphRow(owner, false, holder(path, mode, false)));
    }

    private void waits(String owner, String path, LockMode mode) {
        rows.add(new WaitGraphRow(owner, true, holder(path, mode, true)));
    }

    private LockHolder holder(String path, LockMode mode, boolean waiting) {
        return new LockHolder(++ids, LockKind.PATH, "t", path, mode, "n", "th", Instant.EPOCH, Instant.EPOCH,
                "00000000", waiting);
    }

    @Test
    void twoOwnersWaitingForEachOtherFormACycleThatTheYoungestBreaks() {
        holds("A", "/a", LockMode.EXCLUSIVE);
        holds("B", "/b", LockMode.EXCLUSIVE);
        waits("A", "/b", LockMode.EXCLUSIVE);
        waits("B", "/a/x", LockMode.SHARED);
        WaitForGraph graph = new WaitForGraph(rows);
        assertThat(graph.cycleToBreak("B").orElseThrow()).extracting(LockHolder::path).containsExactly("/a", "/b");
        assertThat(graph.cycleToBreak("A")).as("A queued first and leaves it to B").isEmpty();
    }

    @Test
    void sharedHoldersOfTheSamePathDoNotBlockSharedWaiters() {
        holds("A", "/a", LockMode.SHARED);
        holds("B", "/b", LockMode.SHARED);
        waits("A", "/b", LockMode.SHARED);
        waits("B", "/a", LockMode.SHARED);
        WaitForGraph graph = new WaitForGraph(rows);
        assertThat(graph.cycleToBreak("A")).isEmpty();
        assertThat(graph.cycleToBreak("B")).isEmpty();
    }

    @Test
    void aChainWithoutAClosingEdgeIsNoDeadlock() {
        holds("A", "/a", LockMode.EXCLUSIVE);
        holds("B", "/b", LockMode.EXCLUSIVE);
        holds("C", "/c", LockMode.EXCLUSIVE);
        waits("A", "/b", LockMode.EXCLUSIVE);
        waits("B", "/c", LockMode.EXCLUSIVE);
        waits("C", "/d", LockMode.EXCLUSIVE);
        WaitForGraph graph = new WaitForGraph(rows);
        for (String owner : List.of("A", "B", "C")) {
            assertThat(graph.cycleToBreak(owner)).as(owner).isEmpty();
        }
    }

    @Test
    void aThreeOwnerCycleThroughAncestorsIsFound() {
        holds("A", "/x/1", LockMode.EXCLUSIVE);
        holds("B", "/y", LockMode.EXCLUSIVE);
        holds("C", "/z/3/4", LockMode.SHARED);
        waits("A", "/y/2", LockMode.SHARED);
        waits("B", "/z", LockMode.EXCLUSIVE);
        waits("C", "/x", LockMode.SHARED);
        assertThat(new WaitForGraph(rows).cycleToBreak("C").orElseThrow()).extracting(LockHolder::path)
                .containsExactly("/x/1", "/y", "/z/3/4");
    }

    @Test
    void semaphoreWaitsAreNeverPartOfACycle() {
        rows.add(new WaitGraphRow("A", false, new LockHolder(1, LockKind.SEMAPHORE, "t", "s", LockMode.SHARED, "n",
                "th", Instant.EPOCH, Instant.EPOCH, "0", false)));
        rows.add(new WaitGraphRow("B", true, new LockHolder(2, LockKind.SEMAPHORE, "t", "s", LockMode.SHARED, "n",
                "th", Instant.EPOCH, Instant.EPOCH, "0", true)));
        holds("B", "/b", LockMode.EXCLUSIVE);
        waits("A", "/b", LockMode.EXCLUSIVE);
        assertThat(new WaitForGraph(rows).cycleToBreak("A")).isEmpty();
        assertThat(new WaitForGraph(rows).cycleToBreak("B")).isEmpty();
    }
}
