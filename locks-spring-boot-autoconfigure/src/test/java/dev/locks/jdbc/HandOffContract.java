package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.locks.LockHandle;
import dev.locks.LockHolder;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.LockTimeoutException;

/**
 * A release handing its lock to a waiter of the same JVM in the release's own transaction
 * (issue 4, fast hand-off). The node here backs off for a minute, so that its waiters sleep and
 * only a release of this JVM can wake them or grant them the lock.
 */
abstract class HandOffContract extends LockServiceContract {

    private static final Duration PATIENT = Duration.ofSeconds(30);

    private JdbcLockService patient;

    @BeforeEach
    void startPatientNode() {
        patient = node("node-patient", mainPool(), LockSettings.builder().nodeId("node-patient").slowWaitLog(null)
                .backoff(Duration.ofMinutes(1), 1.0, Duration.ofMinutes(1), Duration.ZERO)
                    .waiterLease(Duration.ofMinutes(5)));
    }

    @Test
    void aReleaseHandsTheLockToTheWaiterQueuedFirstWithAHigherToken() throws Exception {
        LockHandle held = patient.acquire(x("/h").build());
        CompletableFuture<LockHandle> first = waitFor(x("/h/a"));
        CompletableFuture<LockHandle> second = waitFor(x("/h"));

        held.release();

        LockHandle got = first.get(20, TimeUnit.SECONDS);
        assertThat(got.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(got.isValid()).isTrue();
        assertThat(patient.handOffCount()).isEqualTo(1);
        sleep(Duration.ofMillis(200));
        assertThat(second).as("the second waiter still waits behind the first").isNotDone();
        got.release();
        assertThat(second.get(20, TimeUnit.SECONDS).fencingToken()).isGreaterThan(got.fencingToken());
        second.join().release();
    }

    @Test
    void aHandedOverLockIsHeldInTheStoreAndItsWaitingRecordIsGone() throws Exception {
        LockHandle held = patient.acquire(x("/rows").build());
        CompletableFuture<LockHandle> waiter = waitFor(x("/rows"));

        held.release();

        LockHandle got = waiter.get(20, TimeUnit.SECONDS);
        List<LockHolder> holders = locks.holders(tenant, "/rows");
        assertThat(holders).extracting(LockHolder::lockId).containsExactly(got.fencingToken());
        assertThat(holders).extracting(LockHolder::waiting).containsExactly(false);
        got.release();
        assertThat(locks.holders(tenant, "/rows")).isEmpty();
    }

    @Test
    void aHandOffThatCannotGrantStillReleases() throws Exception {
        JdbcLockService other = newNode("node-b");
        LockHandle mine = patient.acquire(s("/s").build());
        LockHandle theirs = other.acquire(s("/s").build());
        CompletableFuture<LockHandle> writer = waitFor(x("/s"), Duration.ofSeconds(2));

        mine.release();

        assertThat(locks.holders(tenant, "/s")).extracting(LockHolder::node).containsExactly("node-b");
        assertThatThrownBy(writer::join).isInstanceOf(CompletionException.class)
                .hasCauseInstanceOf(LockTimeoutException.class);
        theirs.release();
    }

    @Test
    void aHandOffDoesNotOvertakeAnEarlierWaiterOnAnotherNode() throws Exception {
        JdbcLockService other = newNode("node-b");
        LockHandle held = patient.acquire(x("/fair").build());
        CompletableFuture<LockHandle> remote = CompletableFuture.supplyAsync(
                () -> other.acquire(x("/fair").waitAtMost(PATIENT).build()));
        awaitWaiting(other);
        CompletableFuture<LockHandle> local = waitFor(x("/fair"), Duration.ofSeconds(3));

        held.release();

        LockHandle remoteGot = remote.get(20, TimeUnit.SECONDS);
        assertThatThrownBy(local::join).as("the local waiter queued later").isInstanceOf(CompletionException.class)
                .hasCauseInstanceOf(LockTimeoutException.class);
        remoteGot.release();
    }

    @Test
    void aSemaphorePermitIsHandedToAWaiter() throws Exception {
        LockRequest.Builder permit = LockRequest.semaphore("exports", 1).tenant(tenant);
        LockHandle held = patient.acquire(permit.build());
        CompletableFuture<LockHandle> waiter = waitFor(LockRequest.semaphore("exports", 1).tenant(tenant));

        held.release();

        LockHandle got = waiter.get(20, TimeUnit.SECONDS);
        assertThat(got.fencingToken()).isGreaterThan(held.fencingToken());
        assertThat(patient.tryAcquire(permit.build())).as("the one permit is taken").isEmpty();
        got.release();
    }

    @Test
    void aPermitTheFirstWaitersSmallerMaxCannotTakeGoesToAWaiterWithALargerMax() throws Exception {
        // nodes disagree on the max during a rolling change of it
        LockHandle first = patient.acquire(LockRequest.semaphore("reports", 3).tenant(tenant).build());
        LockHandle second = patient.acquire(LockRequest.semaphore("reports", 3).tenant(tenant).build());
        CompletableFuture<LockHandle> smallerMax = waitFor(LockRequest.semaphore("reports", 1).tenant(tenant));
        CompletableFuture<LockHandle> largerMax = waitFor(LockRequest.semaphore("reports", 3).tenant(tenant));

        // handed to the first waiter, which one holder already fills; the second fits beside both
        first.release();

        LockHandle got = largerMax.get(20, TimeUnit.SECONDS);
        assertThat(smallerMax).as("its max of 1 is still full").isNotDone();
        got.release();
        second.release();
        smallerMax.get(20, TimeUnit.SECONDS).release();
    }

    @Test
    void aReleaseOfALockAlreadyLostStillHandsTheWayToAWaiter() throws Exception {
        LockHandle held = patient.acquire(x("/lost").build());
        CompletableFuture<LockHandle> waiter = waitFor(x("/lost"));
        // an operator force-releases the holder: its release finds nothing, the waiter still gets the lock
        locks.forceRelease(locks.holders(tenant, "/lost").get(0).lockId());

        assertThat(held.release()).isFalse();

        assertThat(waiter.get(20, TimeUnit.SECONDS).fencingToken()).isGreaterThan(held.fencingToken());
        waiter.join().release();
    }

    private CompletableFuture<LockHandle> waitFor(LockRequest.Builder request) throws InterruptedException {
        return waitFor(request, PATIENT);
    }

    @Test
    void aGrantNobodyTookIsDiscardedOutsideTheCallersTransaction() {
        LockHandle orphan = patient.acquire(x("/orphan").build());
        JdbcLockService other = newNode("node-b");
        TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(mainPool()));

        transaction.executeWithoutResult(status -> {
            patient.store().discard(grantOf(orphan));
            // still inside the transaction: another node already sees the lock free
            assertThat(other.tryAcquire(x("/orphan").build())).isPresent();
        });
    }

    @Test
    void aReleaseInsideTheCallersTransactionWakesAWaiterOfThisJvmWhenTheTransactionCommits() throws Exception {
        LockHandle held = patient.acquire(x("/committed").build());
        CompletableFuture<LockHandle> waiter = waitFor(x("/committed"));
        TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(mainPool()));

        transaction.executeWithoutResult(status -> {
            held.release();
            // a waiter woken by the release itself has looked by now, found the lock held, and gone back to sleep
            sleep(Duration.ofMillis(200));
            assertThat(waiter).as("held until the commit").isNotDone();
        });

        LockHandle got = waiter.get(20, TimeUnit.SECONDS);
        assertThat(got.fencingToken()).isGreaterThan(held.fencingToken());
        got.release();
    }

    @Test
    void aReleaseInsideTheCallersTransactionWakesAWaiterOfThisJvmWhenTheTransactionRollsBack() throws Exception {
        LockHandle held = patient.acquire(x("/rolled-back").build());
        CompletableFuture<LockHandle> waiter = waitFor(x("/rolled-back"));
        TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(mainPool()));

        transaction.executeWithoutResult(status -> {
            held.release();
            sleep(Duration.ofMillis(200));
            status.setRollbackOnly();
        });

        waiter.get(20, TimeUnit.SECONDS).release();
    }

    /** Starts a request on the patient node and returns once it is queued and asleep. */
    private CompletableFuture<LockHandle> waitFor(LockRequest.Builder request, Duration wait)
            throws InterruptedException {
        int before = patient.waitingCount();
        LockRequest built = request.waitAtMost(wait).build();
        CompletableFuture<LockHandle> future = CompletableFuture.supplyAsync(() -> patient.acquire(built));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (patient.waitingCount() <= before && !future.isDone() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(future).as("the request waits").isNotDone();
        // past its queueing, asleep on its backoff of a minute
        Thread.sleep(200);
        return future;
    }

    private static void awaitWaiting(JdbcLockService node) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (node.waitingCount() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(node.waitingCount()).isPositive();
        Thread.sleep(100);
    }
}
