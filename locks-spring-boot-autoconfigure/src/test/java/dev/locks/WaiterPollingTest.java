package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.locks.store.LockStore;
import dev.locks.testing.H2Store;
import dev.locks.testing.InterceptedStore;

/**
 * How often a waiter looks again while another owner holds its lock. The store here is a JDBC store on
 * H2 whose waiter side counts the looks, and says it announces releases, or answers its looks with
 * changing holders, when a test tells it to. The lock is held by another owner throughout, so every
 * look fails.
 * <ul>
 * <li>While the store announces other nodes' releases, a waiter polls at the notified interval
 * instead of its backoff; just after queueing it keeps the backoff, for a release that saw no queued
 * waiter yet.
 * <li>A waiter that sees the holders change hands looks again quickly, since the next release may be
 * its turn; one with a request queued ahead of it does not, since that request is served first.
 * </ul>
 */
class WaiterPollingTest {

    private static final Duration WAIT = Duration.ofMillis(1000);

    private final AtomicInteger looks = new AtomicInteger();

    private long enqueueDelayMillis;

    private boolean announces;

    /**
     * Null: looks answer what the store holds. Otherwise every look answers these rows, true for a
     * waiting request, whose first holder is a new one each time.
     */
    private List<Boolean> changingHoldersAnswer;

    /** What the waiter asks for; the holder takes all of it first. */
    private LockRequest request = LockRequest.paths("/polled").waitAtMost(WAIT).build();

    private final H2Store h2 = new H2Store();

    private int services;

    /** When each look was made, on this JVM's clock. */
    private final List<Long> lookTimes = new CopyOnWriteArrayList<>();

    /** When the waiter's first enqueue began and how long it took; it sets the waiter's window of backoff. */
    private volatile long enqueueStarted;

    private volatile long enqueueTook;

    @AfterEach
    void stop() {
        h2.close();
    }

    @Test
    void aWaiterPollsAtTheNotifiedIntervalWhileReleasesAreAnnounced() {
        announces = true;

        looksDuringAWaitOnAHeldLock();

        // the waiter polls with its backoff for twice the enqueue's time first (the test below), which on
        // a busy machine is long enough for several looks; after that, at 200 ms, about four in the rest
        // of the second; at the 10 ms backoff it would be nearer a hundred
        long settled = enqueueStarted + 3 * enqueueTook + Duration.ofMillis(20).toNanos();
        assertThat(lookTimes.stream().filter(t -> t - settled > 0).count()).isBetween(1L, 7L);
    }

    @Test
    void aWaiterPollsWithItsBackoffWhenReleasesAreNotAnnounced() {
        int unannounced = looksDuringAWaitOnAHeldLock();

        assertThat(unannounced).isGreaterThan(20);
    }

    @Test
    void aWaiterPollsWithItsBackoffForTwiceItsEnqueueTimeBeforeRelyingOnNotices() {
        // a release that looked for waiters before the queue row committed sends no notice
        enqueueDelayMillis = 100;
        announces = true;

        int announced = looksDuringAWaitOnAHeldLock();

        // about twenty looks in the first 200 ms at the backoff, then about four at 200 ms
        assertThat(announced).isGreaterThan(15);
    }

    @Test
    void aWaiterFirstInLineLooksAgainQuicklyWhenTheHoldersChange() {
        changingHoldersAnswer = List.of(false);

        int first = looksDuringAWaitOnAHeldLock();

        // every look restarts the 2 ms backoff: several hundred looks in 1 s, up to the node's budget
        assertThat(first).isGreaterThan(200);
    }

    @Test
    void aWaiterBehindAQueuedRequestKeepsItsBackoffWhenTheHoldersChange() {
        changingHoldersAnswer = List.of(false, true);

        int behind = looksDuringAWaitOnAHeldLock();

        // the backoff climbs to its 10 ms ceiling and stays there: about a hundred looks in 1 s
        assertThat(behind).isLessThan(150);
    }

    @Test
    void aSemaphoreWaiterWhoseTurnComesNextLooksAgainQuicklyThoughAnotherWaitsAhead() {
        // one permit held and one waiter ahead, of two permits: the next release frees room for both
        request = LockRequest.semaphore("polled", 2).waitAtMost(WAIT).build();
        changingHoldersAnswer = List.of(false, true);

        int next = looksDuringAWaitOnAHeldLock();

        assertThat(next).isGreaterThan(200);
    }

    @Test
    void aSemaphoreWaiterWithMoreAheadThanPermitsKeepsItsBackoff() {
        request = LockRequest.semaphore("polled", 2).waitAtMost(WAIT).build();
        changingHoldersAnswer = List.of(false, false, true);

        int behind = looksDuringAWaitOnAHeldLock();

        assertThat(behind).isLessThan(150);
    }

    private int looksDuringAWaitOnAHeldLock() {
        DefaultLockService holder = service(h2.store());
        DefaultLockService waiter = service(counting(h2.store()));
        List<LockHandle> held = new ArrayList<>();
        int permits = request.kind() == LockKind.SEMAPHORE ? request.permits() : 1;
        for (int i = 0; i < permits; i++) {
            held.add(holder.acquire(request));
        }
        assertThatThrownBy(() -> waiter.acquire(request)).isInstanceOf(LockTimeoutException.class);
        held.forEach(LockHandle::release);
        return looks.get();
    }

    private DefaultLockService service(LockStore store) {
        return h2.service(store, H2Store.quietNode("n" + services++).notifiedPollInterval(Duration.ofMillis(200)).build());
    }

    private LockStore counting(LockStore store) {
        return InterceptedStore.of(store, (method, args, call) -> {
            if (method.equals("announcesReleases")) {
                return announces;
            }
            if (method.equals("conflicts")) {
                lookTimes.add(System.nanoTime());
                int look = looks.incrementAndGet();
                if (changingHoldersAnswer != null) {
                    return changingHolders(look, changingHoldersAnswer);
                }
            }
            if (method.equals("enqueue")) {
                long started = System.nanoTime();
                Thread.sleep(enqueueDelayMillis);
                Object ticket = call.proceed();
                if (enqueueStarted == 0) {
                    enqueueStarted = started;
                    enqueueTook = System.nanoTime() - started;
                }
                return ticket;
            }
            return call.proceed();
        });
    }

    private static List<LockHolder> changingHolders(long look, List<Boolean> answer) {
        List<LockHolder> holders = new ArrayList<>();
        for (int i = 0; i < answer.size(); i++) {
            // the first row changes at every look, the others stay
            holders.add(holder(i == 0 ? look : -i, answer.get(i)));
        }
        return holders;
    }

    private static LockHolder holder(long id, boolean waiting) {
        return new LockHolder(id, LockKind.PATH, "default", "/polled", LockMode.EXCLUSIVE, "elsewhere", "worker",
                Instant.now(), Instant.now().plusSeconds(30), "owner", waiting);
    }
}
