package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.locks.store.Grant;
import dev.locks.store.GrantRequest;
import dev.locks.store.GrantResult;

class LocalWakeupsTest {

    private static final long SOON = TimeUnit.SECONDS.toNanos(10);

    private final LocalWakeups wakeups = new LocalWakeups();

    @Test
    void aReleaseWakesEveryOverlappingWaiterButOnlyTheFirstQueuedSkipsItsLook() throws Exception {
        LocalWakeups.Waiter later = wakeups.register(queued("/a/b", 5));
        LocalWakeups.Waiter first = wakeups.register(queued("/a", 3));

        wakeups.released(LockKind.PATH, "t", paths("/a/b"), LocalWakeups.Release.FREED);

        assertThat(first.await(0)).isTrue();
        assertThat(later.await(0)).isTrue();
        assertThat(first.takeOverlappingRelease()).isTrue();
        assertThat(later.takeOverlappingRelease()).isFalse();
    }

    @Test
    void aLockKeptForLockAtLeastForLetsNoWaiterSkipItsLook() throws Exception {
        LocalWakeups.Waiter waiter = wakeups.register(queued("/a", 1));

        wakeups.released(LockKind.PATH, "t", paths("/a"), LocalWakeups.Release.KEPT);

        assertThat(waiter.await(0)).isTrue();
        assertThat(waiter.takeOverlappingRelease()).isFalse();
    }

    @Test
    void aReleaseOfADisjointPathOrAnotherTenantWakesNobody() throws Exception {
        LocalWakeups.Waiter waiter = wakeups.register(queued("/a/b", 1));

        wakeups.released(LockKind.PATH, "t", paths("/a/c"), LocalWakeups.Release.FREED);
        wakeups.released(LockKind.PATH, "other", paths("/a/b"), LocalWakeups.Release.FREED);

        assertThat(waiter.await(0)).isFalse();
        assertThat(waiter.takeOverlappingRelease()).isFalse();
    }

    @Test
    void aRequeuedWaiterGoesToTheBack() throws Exception {
        LocalWakeups.Waiter requeued = wakeups.register(queued("/a", 1));
        LocalWakeups.Waiter other = wakeups.register(queued("/a", 2));
        requeued.requeued(queued("/a", 9));

        wakeups.released(LockKind.PATH, "t", paths("/a"), LocalWakeups.Release.FREED);

        assertThat(other.takeOverlappingRelease()).isTrue();
        assertThat(requeued.takeOverlappingRelease()).isFalse();
    }

    @Test
    void aReleaseElsewhereInTheTenantLetsOnlyTheFirstQueuedSkipItsLook() throws Exception {
        LocalWakeups.Waiter later = wakeups.register(queued("/x", 7));
        LocalWakeups.Waiter first = wakeups.register(queued("/y", 4));

        wakeups.releasedInScope(LockKind.PATH, "t");

        assertThat(later.await(0)).isTrue();
        assertThat(first.await(0)).isTrue();
        assertThat(first.takeOverlappingRelease()).isTrue();
        assertThat(later.takeOverlappingRelease()).isFalse();
    }

    @Test
    void aPermitReleaseWakesOnlyTheFirstQueuedWaiterOfThatSemaphore() throws Exception {
        LocalWakeups.Waiter later = wakeups.register(permit("/exports", 5));
        LocalWakeups.Waiter first = wakeups.register(permit("/exports", 3));
        LocalWakeups.Waiter otherSemaphore = wakeups.register(permit("/imports", 1));

        wakeups.released(LockKind.SEMAPHORE, "t", paths("/exports"), LocalWakeups.Release.FREED);

        assertThat(first.await(0)).isTrue();
        assertThat(first.takeOverlappingRelease()).isTrue();
        assertThat(later.await(0)).isFalse();
        assertThat(otherSemaphore.await(0)).isFalse();
    }

    @Test
    void twoPermitReleasesBeforeTheFirstWaiterTriesWakeTheFirstTwo() throws Exception {
        LocalWakeups.Waiter third = wakeups.register(permit("/exports", 7));
        LocalWakeups.Waiter second = wakeups.register(permit("/exports", 5));
        LocalWakeups.Waiter first = wakeups.register(permit("/exports", 3));

        wakeups.released(LockKind.SEMAPHORE, "t", paths("/exports"), LocalWakeups.Release.FREED);
        wakeups.released(LockKind.SEMAPHORE, "t", paths("/exports"), LocalWakeups.Release.FREED);

        assertThat(first.takeOverlappingRelease()).isTrue();
        assertThat(second.takeOverlappingRelease()).isTrue();
        assertThat(third.await(0)).isFalse();
    }

    @Test
    void aPlaceTheFirstWaitersSmallerMaxCannotTakeGoesToTheFirstWaiterBehindItWithALargerMax() throws Exception {
        LocalWakeups.Waiter sameMax = wakeups.register(permit("/exports", 5, 1));
        LocalWakeups.Waiter largerMax = wakeups.register(permit("/exports", 7, 3));
        LocalWakeups.Waiter laterLargerMax = wakeups.register(permit("/exports", 9, 3));
        GrantRequest busy = permit("/exports", 3, 1);
        wakeups.register(busy);

        wakeups.notTakenBy(busy);

        assertThat(largerMax.takeOverlappingRelease()).isTrue();
        assertThat(sameMax.await(0)).isFalse();
        assertThat(laterLargerMax.await(0)).isFalse();
    }

    @Test
    void aPlaceNotTakenGoesToNoWaiterQueuedEarlier() throws Exception {
        LocalWakeups.Waiter earlier = wakeups.register(permit("/exports", 2, 3));
        GrantRequest busy = permit("/exports", 3, 1);
        wakeups.register(busy);

        wakeups.notTakenBy(busy);

        assertThat(earlier.await(0)).isFalse();
    }

    @Test
    void aPermitHandedOverWakesNoWaiter() throws Exception {
        LocalWakeups.Waiter waiter = wakeups.register(permit("/exports", 1));

        wakeups.released(LockKind.SEMAPHORE, "t", paths("/exports"), LocalWakeups.Release.HANDED_OVER);

        assertThat(waiter.await(0)).isFalse();
    }

    @Test
    void aPermitKeptForLockAtLeastForLetsTheFirstWaiterLook() throws Exception {
        LocalWakeups.Waiter later = wakeups.register(permit("/exports", 5));
        LocalWakeups.Waiter first = wakeups.register(permit("/exports", 3));

        wakeups.released(LockKind.SEMAPHORE, "t", paths("/exports"), LocalWakeups.Release.KEPT);

        assertThat(first.await(0)).isTrue();
        assertThat(first.takeOverlappingRelease()).as("the lock may still be kept: look first").isFalse();
        assertThat(later.await(0)).isFalse();
    }

    @Test
    void aWaiterLeavingWithAnUntriedPlacePassesItToTheNext() throws Exception {
        LocalWakeups.Waiter first = wakeups.register(permit("/exports", 3));
        LocalWakeups.Waiter next = wakeups.register(permit("/exports", 5));
        wakeups.released(LockKind.SEMAPHORE, "t", paths("/exports"), LocalWakeups.Release.FREED);

        first.close();

        assertThat(next.await(0)).isTrue();
        assertThat(next.takeOverlappingRelease()).isTrue();
    }

    @Test
    void aWaiterLeavingAfterTryingItsPlacePassesNothingOn() throws Exception {
        LocalWakeups.Waiter first = wakeups.register(permit("/exports", 3));
        LocalWakeups.Waiter next = wakeups.register(permit("/exports", 5));
        wakeups.released(LockKind.SEMAPHORE, "t", paths("/exports"), LocalWakeups.Release.FREED);
        first.takeOverlappingRelease();

        first.close();

        assertThat(next.await(0)).isFalse();
    }

    @Test
    void aPermitReleaseElsewhereWakesTheFirstWaiterOfEachSemaphore() throws Exception {
        LocalWakeups.Waiter exportsLater = wakeups.register(permit("/exports", 5));
        LocalWakeups.Waiter exportsFirst = wakeups.register(permit("/exports", 3));
        LocalWakeups.Waiter imports = wakeups.register(permit("/imports", 4));

        wakeups.releasedInScope(LockKind.SEMAPHORE, "t");

        assertThat(exportsFirst.takeOverlappingRelease()).isTrue();
        assertThat(imports.takeOverlappingRelease()).isTrue();
        assertThat(exportsLater.await(0)).isFalse();
    }

    @Test
    void aWaiterLeavingWakesTheOverlappingWaitersQueuedAfterItOnly() throws Exception {
        LocalWakeups.Waiter before = wakeups.register(queued("/a", 1));
        LocalWakeups.Waiter after = wakeups.register(queued("/a/b", 5));
        LocalWakeups.Waiter disjoint = wakeups.register(queued("/c", 6));

        wakeups.left(queued("/a", 3));

        assertThat(after.await(0)).isTrue();
        assertThat(after.takeOverlappingRelease()).as("a leaving waiter frees no lock: look first").isFalse();
        assertThat(before.await(0)).isFalse();
        assertThat(disjoint.await(0)).isFalse();
    }

    @Test
    void aPermitWaiterLeavingLetsTheNextQueuedTry() throws Exception {
        LocalWakeups.Waiter next = wakeups.register(permit("/exports", 5));
        LocalWakeups.Waiter last = wakeups.register(permit("/exports", 7));

        wakeups.left(permit("/exports", 3));

        assertThat(next.takeOverlappingRelease()).isTrue();
        assertThat(last.await(0)).isFalse();
    }

    @Test
    void aReleaseClaimsTheFirstQueuedOverlappingWaiterWhileItSleeps() throws Exception {
        LocalWakeups.Waiter first = wakeups.register(queued("/a", 3));
        LocalWakeups.Waiter later = wakeups.register(queued("/a/b", 5));
        first.await(0);
        later.await(0);

        assertThat(wakeups.claimFirst(LockKind.PATH, "t", paths("/a/b"))).isSameAs(first);
    }

    @Test
    void aWaiterWorkingForItselfCannotBeClaimed() throws Exception {
        LocalWakeups.Waiter waiter = wakeups.register(queued("/a", 1));

        assertThat(wakeups.claimFirst(LockKind.PATH, "t", paths("/a"))).isNull();
        waiter.await(0);
        waiter.work(System.nanoTime() + SOON);
        assertThat(wakeups.claimFirst(LockKind.PATH, "t", paths("/a"))).isNull();
    }

    @Test
    void aClaimedWaiterIsNotClaimedTwice() throws Exception {
        LocalWakeups.Waiter waiter = wakeups.register(queued("/a", 1));
        waiter.await(0);

        assertThat(wakeups.claimFirst(LockKind.PATH, "t", paths("/a"))).isSameAs(waiter);
        assertThat(wakeups.claimFirst(LockKind.PATH, "t", paths("/a"))).isNull();
    }

    @Test
    void aDeliveredGrantWakesTheWaiterAndIsTakenOnce() throws Exception {
        LocalWakeups.Waiter waiter = wakeups.register(queued("/a", 1));
        waiter.await(0);
        LocalWakeups.HandedOver handed = granted(42);

        assertThat(wakeups.claimFirst(LockKind.PATH, "t", paths("/a")).deliver(handed)).isTrue();

        assertThat(waiter.await(0)).isTrue();
        assertThat(waiter.work(System.nanoTime() + SOON)).isSameAs(handed);
        assertThat(waiter.work(System.nanoTime() + SOON)).isNull();
        assertThat(waiter.gaveUp()).isFalse();
    }

    @Test
    void aClaimGivenBackLeavesTheWaiterAsleepAndClaimableAgain() throws Exception {
        LocalWakeups.Waiter waiter = wakeups.register(queued("/a", 1));
        waiter.await(0);

        wakeups.claimFirst(LockKind.PATH, "t", paths("/a")).unclaim();

        assertThat(waiter.await(0)).as("not woken").isFalse();
        assertThat(wakeups.claimFirst(LockKind.PATH, "t", paths("/a"))).isSameAs(waiter);
    }

    @Test
    void aWaiterWakingDuringAHandOffThatIsGivenBackGoesOnWithNothingHandedOver() throws Exception {
        LocalWakeups.Waiter waiter = wakeups.register(queued("/a", 1));
        waiter.await(0);
        LocalWakeups.Waiter claimed = wakeups.claimFirst(LockKind.PATH, "t", paths("/a"));

        CompletableFuture<LocalWakeups.HandedOver> taken = workAsync(waiter);
        Thread.sleep(50);
        assertThat(taken).isNotDone();
        claimed.unclaim();

        assertThat(taken.get(10, TimeUnit.SECONDS)).isNull();
        assertThat(waiter.gaveUp()).isFalse();
    }

    @Test
    void aWaiterWakingDuringAHandOffWaitsForItsAnswer() throws Exception {
        LocalWakeups.Waiter waiter = wakeups.register(queued("/a", 1));
        waiter.await(0);
        LocalWakeups.Waiter claimed = wakeups.claimFirst(LockKind.PATH, "t", paths("/a"));
        LocalWakeups.HandedOver handed = granted(42);

        CompletableFuture<LocalWakeups.HandedOver> taken = workAsync(waiter);
        Thread.sleep(50);
        assertThat(taken).isNotDone();
        claimed.deliver(handed);

        assertThat(taken.get(10, TimeUnit.SECONDS)).isSameAs(handed);
    }

    @Test
    void aWaiterWhoseDeadlinePassesDuringAHandOffGivesUpAndTheGrantIsRefused() throws Exception {
        LocalWakeups.Waiter waiter = wakeups.register(queued("/a", 1));
        waiter.await(0);
        LocalWakeups.Waiter claimed = wakeups.claimFirst(LockKind.PATH, "t", paths("/a"));

        assertThat(waiter.work(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20))).isNull();

        assertThat(waiter.gaveUp()).isTrue();
        assertThat(claimed.deliver(granted(42))).isFalse();
        assertThat(waiter.close()).isNull();
    }

    @Test
    void aWaiterClosedBeforeTakingADeliveredGrantReturnsItForRelease() throws Exception {
        LocalWakeups.Waiter waiter = wakeups.register(queued("/a", 1));
        waiter.await(0);
        LocalWakeups.HandedOver handed = granted(42);
        wakeups.claimFirst(LockKind.PATH, "t", paths("/a")).deliver(handed);

        assertThat(waiter.close()).isSameAs(handed);
    }

    @Test
    void aClosedWaiterIsNeitherWokenNorClaimed() throws Exception {
        LocalWakeups.Waiter waiter = wakeups.register(queued("/a", 1));
        waiter.await(0);
        waiter.close();

        wakeups.released(LockKind.PATH, "t", paths("/a"), LocalWakeups.Release.FREED);

        assertThat(wakeups.claimFirst(LockKind.PATH, "t", paths("/a"))).isNull();
        assertThat(waiter.await(0)).isFalse();
    }

    @Test
    void aTenantWhoseLastWaiterLeftIsForgotten() {
        LocalWakeups.Waiter first = wakeups.register(queued("/a", 1));
        LocalWakeups.Waiter second = wakeups.register(queued("/b", 2));

        first.close();
        assertThat(wakeups.scopeCount()).isEqualTo(1);
        second.close();

        assertThat(wakeups.scopeCount()).isZero();
    }

    @Test
    void aPermitFreedWhileTheFirstWaiterLeavesReachesTheNextEveryTime() throws Exception {
        // the release and the leaving race: the tell lands on the leaver before it closes (and is passed
        // on) or skips it, never on a waiter already gone
        int rounds = 50_000;
        int untold = 0;
        java.util.concurrent.ExecutorService releaser = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            for (int round = 0; round < rounds; round++) {
                LocalWakeups raced = new LocalWakeups();
                LocalWakeups.Waiter leaving = raced.register(permit("/exports", 1));
                LocalWakeups.Waiter next = raced.register(permit("/exports", 2));
                java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
                java.util.concurrent.Future<?> release = releaser.submit(() -> {
                    start.await();
                    raced.released(LockKind.SEMAPHORE, "t", paths("/exports"), LocalWakeups.Release.FREED);
                    return null;
                });
                start.countDown();
                leaving.close();
                release.get();
                if (!next.takeOverlappingRelease()) {
                    untold++;
                }
            }
        }
        finally {
            releaser.shutdownNow();
        }

        assertThat(untold).as("rounds of " + rounds + " where the freed permit reached nobody").isZero();
    }

    private static LocalWakeups.HandedOver granted(long token) {
        return new LocalWakeups.HandedOver(GrantResult.granted(new Grant("g", "o", token, 1, java.time.Instant.now())),
                System.nanoTime(), false);
    }

    private static GrantRequest queued(String path, long ticket) {
        return new GrantRequest(LockKind.PATH, "t", paths(path), LockMode.EXCLUSIVE, Duration.ofSeconds(30), 1, "owner",
                "grant-" + ticket, "node", "thread", ticket, false);
    }

    private static GrantRequest permit(String name, long ticket) {
        return permit(name, ticket, 3);
    }

    private static GrantRequest permit(String name, long ticket, int max) {
        return new GrantRequest(LockKind.SEMAPHORE, "t", paths(name), LockMode.SHARED, Duration.ofSeconds(30), max, "owner",
                "grant-" + ticket, "node", "thread", ticket, false);
    }

    private static List<LockPath> paths(String... paths) {
        PathNormalizer normalizer = new PathNormalizer(true, 4000);
        return java.util.Arrays.stream(paths).map(normalizer::normalize).toList();
    }

    /** The waiter's thread coming back to work, as it does when its sleep ends. */
    private static CompletableFuture<LocalWakeups.HandedOver> workAsync(LocalWakeups.Waiter waiter) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return waiter.work(System.nanoTime() + SOON);
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        });
    }
}
