package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

class LocalWakeupsTest {

    private final LocalWakeups wakeups = new LocalWakeups();

    @Test
    void aReleaseWakesEveryOverlappingWaiterButOnlyTheFirstQueuedSkipsItsLook() throws Exception {
        LocalWakeups.Waiter later = wakeups.register(LockKind.PATH, "t", paths("/a/b"), 5);
        LocalWakeups.Waiter first = wakeups.register(LockKind.PATH, "t", paths("/a"), 3);

        wakeups.released(LockKind.PATH, "t", paths("/a/b"), true);

        assertThat(first.await(0)).isTrue();
        assertThat(later.await(0)).isTrue();
        assertThat(first.takeOverlappingRelease()).isTrue();
        assertThat(later.takeOverlappingRelease()).isFalse();
    }

    @Test
    void aLockKeptForLockAtLeastForLetsNoWaiterSkipItsLook() throws Exception {
        LocalWakeups.Waiter waiter = wakeups.register(LockKind.PATH, "t", paths("/a"), 1);

        wakeups.released(LockKind.PATH, "t", paths("/a"), false);

        assertThat(waiter.await(0)).isTrue();
        assertThat(waiter.takeOverlappingRelease()).isFalse();
    }

    @Test
    void aReleaseOfADisjointPathOrAnotherTenantWakesNobody() throws Exception {
        LocalWakeups.Waiter waiter = wakeups.register(LockKind.PATH, "t", paths("/a/b"), 1);

        wakeups.released(LockKind.PATH, "t", paths("/a/c"), true);
        wakeups.released(LockKind.PATH, "other", paths("/a/b"), true);

        assertThat(waiter.await(0)).isFalse();
        assertThat(waiter.takeOverlappingRelease()).isFalse();
    }

    @Test
    void aRequeuedWaiterGoesToTheBack() throws Exception {
        LocalWakeups.Waiter requeued = wakeups.register(LockKind.PATH, "t", paths("/a"), 1);
        LocalWakeups.Waiter other = wakeups.register(LockKind.PATH, "t", paths("/a"), 2);
        requeued.requeued(9);

        wakeups.released(LockKind.PATH, "t", paths("/a"), true);

        assertThat(other.takeOverlappingRelease()).isTrue();
        assertThat(requeued.takeOverlappingRelease()).isFalse();
    }

    private static List<LockPath> paths(String... paths) {
        PathNormalizer normalizer = new PathNormalizer(true, 4000);
        return java.util.Arrays.stream(paths).map(normalizer::normalize).toList();
    }
}
