package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import dev.locks.store.Grant;
import dev.locks.testing.H2Store;
import dev.locks.testing.InterceptedStore;

/**
 * A lock released by hand inside a transaction is freed when that transaction ends. Until then the
 * watchdog renews it as it did while the lock was held, if it watched the lock; afterwards nothing
 * renews it.
 */
class RenewalUntilTransactionEndTest {

    /** Renewed every 200 ms; the transactions below run for several renewals. */
    private static final Duration LEASE = Duration.ofMillis(600);

    private static final Duration SEVERAL_RENEWALS = Duration.ofMillis(1000);

    private final H2Store h2 = new H2Store();

    /** The grant ids of every renewal that reached the store, one entry per grant and renewal. */
    private final List<String> renewed = new CopyOnWriteArrayList<>();

    private DefaultLockService locks;

    private TransactionTemplate transaction;

    @BeforeEach
    void start() {
        locks = h2.service(InterceptedStore.of(h2.store(), (method, args, call) -> {
            if (method.equals("renew")) {
                for (Object grant : (Collection<?>) args[0]) {
                    renewed.add(((Grant) grant).grantId());
                }
            }
            return call.proceed();
        }), H2Store.quietNode("n").build());
        transaction = new TransactionTemplate(new DataSourceTransactionManager(h2.store().dataSource()));
        transaction.setIsolationLevel(TransactionDefinition.ISOLATION_READ_COMMITTED);
    }

    @AfterEach
    void stop() {
        h2.close();
    }

    @Test
    void aWatchedLockReleasedInsideATransactionIsRenewedUntilTheTransactionEnds() {
        LockHandle handle = locks.keepRenewed(locks.acquire(LockRequest.paths("/renewed").lease(LEASE).build()));

        int whileOpen = transaction.execute(status -> {
            assertThat(handle.release()).isTrue();
            int atRelease = renewalsOf(handle);
            sleep(SEVERAL_RENEWALS);
            return renewalsOf(handle) - atRelease;
        });

        assertThat(whileOpen).as("renewals between the release and the commit").isGreaterThanOrEqualTo(2);
    }

    @Test
    void aLockReleasedInsideACommittedTransactionIsNoLongerRenewedAfterIt() {
        assertNotRenewedAfter(false);
    }

    @Test
    void aLockReleasedInsideARolledBackTransactionIsNoLongerRenewedAfterIt() {
        assertNotRenewedAfter(true);
    }

    @Test
    void aLockTheWatchdogDidNotWatchIsNotRenewedWhileItsReleaseWaitsForTheTransaction() {
        LockHandle handle = locks.acquire(LockRequest.paths("/unwatched").lease(LEASE).build());

        transaction.executeWithoutResult(status -> {
            assertThat(handle.release()).isTrue();
            sleep(SEVERAL_RENEWALS);
        });

        assertThat(renewalsOf(handle)).isZero();
    }

    private void assertNotRenewedAfter(boolean rollback) {
        LockHandle handle = locks.keepRenewed(locks.acquire(LockRequest.paths("/ended").lease(LEASE).build()));

        transaction.executeWithoutResult(status -> {
            assertThat(handle.release()).isTrue();
            sleep(LEASE);
            if (rollback) {
                status.setRollbackOnly();
            }
        });
        assertThat(locks.holders(null, "/ended")).as("held after the transaction").isEmpty();
        // a renewal round that had picked the grant before the transaction ended sends it within a tick
        sleep(Duration.ofMillis(150));
        int atEnd = renewalsOf(handle);
        sleep(SEVERAL_RENEWALS);

        assertThat(renewalsOf(handle)).as("renewals after the transaction ended").isEqualTo(atEnd);
    }

    private int renewalsOf(LockHandle handle) {
        String grantId = ((GrantedLock) handle).grant().grantId();
        return (int) renewed.stream().filter(grantId::equals).count();
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
