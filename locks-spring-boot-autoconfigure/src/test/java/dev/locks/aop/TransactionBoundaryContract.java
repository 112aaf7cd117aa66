package dev.locks.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.assertj.core.api.AbstractThrowableAssert;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.locks.LockHandle;
import dev.locks.LockHolder;
import dev.locks.LockListener;
import dev.locks.LockLostException;
import dev.locks.LockUnavailableException;
import dev.locks.annotation.PathLocked;
import dev.locks.testing.TrappingDataSource;

/**
 * The transaction boundary (DESIGN §1, Transactions): a lock is never released before the work it
 * protects is committed, and a rolled-back transaction still releases it.
 *
 * <p>The writer commits slowly (its transaction sleeps in {@code beforeCommit}), so that a release
 * before the commit would let the reader on another node in while the row is still invisible.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(90)
abstract class TransactionBoundaryContract extends AnnotationContract {

    private static final long SLOW_COMMIT_MILLIS = 800;

    private LockTestNodes nodes;

    private String table;

    /** Lock advisor outside @Transactional (the default). */
    private Documents writer;

    private TransactionTemplate writerTransactions;

    private LeaseEvents writerLosses;

    private LeaseEvents insideLosses;

    /** Another node that reads under the same lock. */
    private Documents reader;

    /** Lock advisor ordered inside @Transactional: the transaction is active when the lock is taken. */
    private Documents insideWriter;

    /** Lock tables on a DataSource of their own; the work commits on the application's. */
    private Documents separateWriter;

    private TransactionTemplate separateTransactions;

    /** A node whose statements deleting held rows can be made to fail. */
    private Documents trappedWriter;

    private TransactionTemplate trappedTransactions;

    private TrappingDataSource trapping;

    @BeforeAll
    void start() throws Exception {
        nodes = new LockTestNodes(database());
        table = nodes.prefix() + "docs";
        try (Connection c = nodes.probePool().getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + table + " (id INT NOT NULL, body VARCHAR(100))");
            if (!c.getAutoCommit()) {
                c.commit();
            }
        }
        List<String> props = List.of("docs.table=" + table);
        ConfigurableApplicationContext a = nodes.node("node-a", props, Application.class);
        writer = a.getBean(Documents.class);
        writerLosses = a.getBean(LeaseEvents.class);
        writerTransactions = new TransactionTemplate(a.getBean(PlatformTransactionManager.class));
        reader = nodes.node("node-b", props, Application.class).getBean(Documents.class);
        ConfigurableApplicationContext inside = nodes.node("node-inside", props, Application.class,
                TransactionsOutsideLocks.class);
        insideWriter = inside.getBean(Documents.class);
        insideLosses = inside.getBean(LeaseEvents.class);
        DataSource lockPool = nodes.pool(4);
        ConfigurableApplicationContext separate = nodes.start(nodes.pool(10),
                nodes.defaults("node-separate", List.of("docs.table=" + table, "locks.jdbc.data-source-bean=lockDataSource")),
                context -> context.registerBean("lockDataSource", DataSource.class, () -> lockPool),
                Application.class);
        separateWriter = separate.getBean(Documents.class);
        separateTransactions = new TransactionTemplate(separate.getBean(PlatformTransactionManager.class));
        trapping = new TrappingDataSource(nodes.pool(10), TrappingDataSource.releasesIn(nodes.prefix()));
        ConfigurableApplicationContext trapped = nodes.start(trapping.dataSource(), nodes.defaults("node-trapped", props),
                Application.class);
        trappedWriter = trapped.getBean(Documents.class);
        trappedTransactions = new TransactionTemplate(trapped.getBean(PlatformTransactionManager.class));
    }

    @AfterAll
    void stop() throws Exception {
        if (nodes == null) {
            return;
        }
        try (Connection c = nodes.probePool().getConnection(); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + table);
            if (!c.getAutoCommit()) {
                c.commit();
            }
        }
        finally {
            nodes.close();
        }
    }

    @Test
    void anotherNodeTakingTheLockSeesTheCommittedRow() throws Exception {
        assertReaderSeesRow(101, afterInsert -> writer.writeSlowly(101, afterInsert));
    }

    @Test
    void withTheLockOrderedInsideTheTransactionTheReleaseStillWaitsForTheCommit() throws Exception {
        assertReaderSeesRow(102, afterInsert -> insideWriter.writeSlowly(102, afterInsert));
    }

    @Test
    void withSeparateLockTablesTheReleaseFollowsTheCommit() throws Exception {
        assertReaderSeesRow(103, afterInsert -> separateWriter.writeSlowly(103, afterInsert));
    }

    @Test
    void insideAnOuterTransactionTheReleaseWaitsForTheOuterCommit() throws Exception {
        assertReaderSeesRow(104, afterInsert -> writerTransactions.executeWithoutResult(status -> {
            writer.write(104);
            assertThat(nodes.isLocked("/docs/104")).as("held after the method, until the outer commit").isTrue();
            afterInsert.run();
            slowCommit();
        }));
    }

    @Test
    void insideAnOuterTransactionOnAnotherDataSourceTheReleaseFollowsTheOuterCommit() throws Exception {
        assertReaderSeesRow(105, afterInsert -> separateTransactions.executeWithoutResult(status -> {
            separateWriter.write(105);
            assertThat(nodes.isLocked("/docs/105")).isTrue();
            afterInsert.run();
            slowCommit();
        }));
    }

    @Test
    void aWaiterOnTheSameNodeSeesTheCommittedRow() throws Exception {
        // a waiter of this JVM may get the lock in the release's own transaction, after the commit
        assertReaderSeesRow(106, writer, afterInsert -> writer.writeSlowly(106, untilTheReaderSleeps(afterInsert)));
    }

    @Test
    void withTheLockOrderedInsideTheTransactionAWaiterOnTheSameNodeSeesTheCommittedRow() throws Exception {
        // the release joins the transaction, so it hands nothing over before the commit
        assertReaderSeesRow(107, insideWriter,
                afterInsert -> insideWriter.writeSlowly(107, untilTheReaderSleeps(afterInsert)));
    }

    @Test
    void insideAnOuterTransactionAWaiterOnTheSameNodeSeesTheCommittedRow() throws Exception {
        assertReaderSeesRow(108, writer, afterInsert -> writerTransactions.executeWithoutResult(status -> {
            writer.write(108);
            untilTheReaderSleeps(afterInsert).run();
            slowCommit();
        }));
    }

    @Test
    void aRolledBackTransactionReleasesTheLock() {
        assertThatThrownBy(() -> writer.writeThenFail(201)).hasMessage("rejected 201");
        assertThat(nodes.isLocked("/docs/201")).isFalse();
        assertThat(rows(201)).isZero();
    }

    @Test
    void aRolledBackTransactionReleasesALockTakenInsideIt() {
        assertThatThrownBy(() -> insideWriter.writeThenFail(202)).hasMessage("rejected 202");
        assertThat(nodes.isLocked("/docs/202")).isFalse();
        assertThat(rows(202)).isZero();
    }

    @Test
    void aRolledBackOuterTransactionReleasesTheLock() {
        writerTransactions.executeWithoutResult(status -> {
            writer.write(203);
            status.setRollbackOnly();
        });
        assertThat(nodes.isLocked("/docs/203")).isFalse();
        assertThat(rows(203)).isZero();
    }

    @Test
    void aRolledBackOuterTransactionOnAnotherDataSourceReleasesTheLock() {
        separateTransactions.executeWithoutResult(status -> {
            separateWriter.write(204);
            status.setRollbackOnly();
        });
        assertThat(nodes.isLocked("/docs/204")).isFalse();
        assertThat(rows(204)).isZero();
    }

    @Test
    void aReleaseThatFailsWhenItJoinsTheOuterCommitRollsTheWorkBackSaysSoAndFreesTheLock() {
        trapping.failNext("connection reset (test)", 1);

        // the lock is taken inside the outer transaction, so its release joins that commit
        assertThatThrownBy(() -> trappedTransactions.executeWithoutResult(status -> trappedWriter.write(207)))
                .isInstanceOf(LockUnavailableException.class)
                .hasMessageContaining("/docs/207").hasMessageContaining("connection reset (test)");
        assertThat(rows(207)).as("the work was rolled back").isZero();
        assertThat(nodes.isLocked("/docs/207")).as("released after the rollback").isFalse();
    }

    @Test
    void aLockKnownLostBeforeTheCommitRollsTheWorkBack() {
        assertRolledBackForItsLostLock(301, () -> writer.writeThen(301, () -> loseTheLock(writerLosses, "/docs/301")))
                .hasMessageContaining("force-released");
    }

    @Test
    void withTheLockOrderedInsideTheTransactionALockKnownLostBeforeTheCommitRollsTheWorkBack() {
        assertRolledBackForItsLostLock(302,
                () -> insideWriter.writeThen(302, () -> loseTheLock(insideLosses, "/docs/302")));
    }

    @Test
    void insideAnOuterTransactionALockKnownLostBeforeTheOuterCommitRollsTheWorkBack() {
        assertRolledBackForItsLostLock(303, () -> writerTransactions.executeWithoutResult(
                status -> writer.writeThen(303, () -> loseTheLock(writerLosses, "/docs/303"))));
    }

    @Test
    void withTheLockOrderedInsideTheTransactionALockForceReleasedSinceItsLastRenewalRollsTheWorkBack() {
        // the release's DELETE, joining the commit, finds nothing; the next renewal is 20 s away
        assertRolledBackForItsLostLock(309, () -> insideWriter.writeWithALongLeaseThen(309, () -> forceRelease("/docs/309")))
                .hasMessageContaining("at its release");
    }

    @Test
    void insideAnOuterTransactionALockForceReleasedSinceItsLastRenewalRollsTheWorkBack() {
        assertRolledBackForItsLostLock(311, () -> writerTransactions.executeWithoutResult(
                status -> writer.writeWithALongLeaseThen(311, () -> forceRelease("/docs/311"))))
                .hasMessageContaining("at its release");
    }

    @Test
    void withoutATransactionALockFoundGoneAtItsReleaseIsReportedLost() {
        writer.runWithoutTransaction(310, () -> forceRelease("/docs/310"));

        assertThat(writerLosses.lostPaths).contains("/docs/310");
    }

    @Test
    void aLockHeldPastARenewalLetsTheWorkCommit() {
        // past the three-second lease, which only renewals (every second) keep alive
        writer.writeThen(304, () -> PathLockedContract.sleep(4000));
        assertThat(rows(304)).isEqualTo(1);
        assertThat(nodes.isLocked("/docs/304")).isFalse();
    }

    @Test
    void aTransactionBegunInsideALockedMethodRollsBackWhenTheLockIsKnownLost() {
        assertRolledBackForItsLostLock(307,
                () -> writer.writeInATransactionBegunInside(307, () -> loseTheLock(writerLosses, "/docs/307")));
    }

    @Test
    void aReadOnlyTransactionIsNotCheckedAtItsCommit() {
        assertThat(writer.countThen(308, () -> loseTheLock(writerLosses, "/docs/308"))).isZero();
        assertThat(nodes.isLocked("/docs/308")).isFalse();
    }

    @Test
    void twoCallsLockingOnePathInOneTransactionCommit() {
        // the second re-enters the first's lock, which stays in the thread's scope until the commit
        writerTransactions.executeWithoutResult(status -> {
            writer.write(305);
            writer.write(305);
        });
        assertThat(rows(305)).isEqualTo(2);
        assertThat(nodes.isLocked("/docs/305")).isFalse();
    }

    @Test
    void aCallInsideAnotherOnTheSamePathInOneTransactionCommits() {
        writerTransactions.executeWithoutResult(status -> writer.writeThen(306, () -> writer.write(306)));
        assertThat(rows(306)).isEqualTo(2);
        assertThat(nodes.isLocked("/docs/306")).isFalse();
    }

    @Test
    void aReadOnlyOuterTransactionReleasesAfterItsCommit() {
        TransactionTemplate readOnly = new TransactionTemplate(writerTransactions.getTransactionManager());
        readOnly.setReadOnly(true);
        readOnly.executeWithoutResult(status -> {
            writer.count(205);
            assertThat(nodes.isLocked("/docs/205")).isTrue();
        });
        assertThat(nodes.isLocked("/docs/205")).isFalse();
    }

    @Test
    void withoutATransactionTheLockIsReleasedWhenTheMethodReturns() {
        writer.countWithoutTransaction(206);
        assertThat(nodes.isLocked("/docs/206")).isFalse();
    }

    /**
     * Runs the writer on a thread of its own; once it has inserted, the reader on node B asks for the
     * same lock and counts the rows as soon as it has it.
     */
    private void assertReaderSeesRow(int id, java.util.function.Consumer<Runnable> write) throws Exception {
        assertReaderSeesRow(id, reader, write);
    }

    /** As {@link #assertReaderSeesRow(int, java.util.function.Consumer)}, with the reader given. */
    private void assertReaderSeesRow(int id, Documents reader, java.util.function.Consumer<Runnable> write)
            throws Exception {
        CountDownLatch inserted = new CountDownLatch(1);
        CompletableFuture<Void> writing = CompletableFuture.runAsync(() -> write.accept(inserted::countDown));
        assertThat(inserted.await(20, TimeUnit.SECONDS)).isTrue();
        int seen = reader.count(id);
        writing.get(20, TimeUnit.SECONDS);
        assertThat(seen).as("rows the next holder of the lock sees").isEqualTo(1);
        assertThat(nodes.isLocked("/docs/" + id)).isFalse();
    }

    /**
     * Lets the reader in once the row is inserted, then gives it time to queue and fall asleep, so
     * that the release finds a waiter of its JVM to hand the lock to.
     */
    private static Runnable untilTheReaderSleeps(Runnable afterInsert) {
        return () -> {
            afterInsert.run();
            PathLockedContract.sleep(300);
        };
    }

    /**
     * Runs work that writes row {@code id} under the lock {@code /docs/id} and loses that lock before
     * the commit: it must fail naming the lock, leave no row, and leave the lock free.
     */
    private AbstractThrowableAssert<?, ? extends Throwable> assertRolledBackForItsLostLock(int id,
            ThrowingCallable work) {
        AbstractThrowableAssert<?, ? extends Throwable> thrown = assertThatThrownBy(work)
                .isInstanceOf(LockLostException.class).hasMessageContaining("/docs/" + id);
        assertThat(rows(id)).as("the work was rolled back").isZero();
        assertThat(nodes.isLocked("/docs/" + id)).isFalse();
        return thrown;
    }

    /**
     * Force-releases the lock on {@code path} from the probe, as an operator would, and waits until
     * the holder's renewals (every third of its lease) have noticed.
     */
    private void loseTheLock(LeaseEvents holder, String path) {
        forceRelease(path);
        await().atMost(Duration.ofSeconds(10)).until(() -> holder.lostPaths.contains(path));
    }

    /** Force-releases the one lock on {@code path} from the probe, as an operator would. */
    private void forceRelease(String path) {
        List<LockHolder> holders = nodes.probe().holders(null, path);
        assertThat(holders).hasSize(1);
        assertThat(nodes.probe().forceRelease(holders.get(0).lockId())).isTrue();
    }

    private int rows(int id) {
        return new JdbcTemplate(nodes.probePool()).queryForObject("SELECT COUNT(*) FROM " + table + " WHERE id = ?",
                Integer.class, id);
    }

    /**
     * Makes the current transaction's commit slow: the pause comes after every {@code beforeCommit}
     * callback (where a release joining the transaction happens) and before the commit itself.
     */
    static void slowCommit() {
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void beforeCompletion() {
                PathLockedContract.sleep(SLOW_COMMIT_MILLIS);
            }
        });
    }

    /** Writes and reads rows under the lock of their id. */
    public static class Documents {

        private final JdbcTemplate jdbc;

        private final String table;

        private final TransactionTemplate transactions;

        public Documents(DataSource dataSource, String table, PlatformTransactionManager transactionManager) {
            this.jdbc = new JdbcTemplate(dataSource);
            this.table = table;
            this.transactions = new TransactionTemplate(transactionManager);
        }

        /** Locks without a transaction of its own, then writes in one it begins inside. */
        @PathLocked(paths = "'/docs/' + #id", lease = "3s")
        public void writeInATransactionBegunInside(int id, Runnable then) {
            transactions.executeWithoutResult(status -> {
                jdbc.update("INSERT INTO " + table + " (id, body) VALUES (?, 'v1')", id);
                then.run();
            });
        }

        @PathLocked(paths = "'/docs/' + #id", lease = "3s")
        @Transactional(readOnly = true)
        public int countThen(int id, Runnable then) {
            then.run();
            return jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE id = ?", Integer.class, id);
        }

        @PathLocked(paths = "'/docs/' + #id")
        @Transactional
        public void writeSlowly(int id, Runnable afterInsert) {
            jdbc.update("INSERT INTO " + table + " (id, body) VALUES (?, 'v1')", id);
            slowCommit();
            afterInsert.run();
        }

        @PathLocked(paths = "'/docs/' + #id")
        @Transactional
        public void write(int id) {
            jdbc.update("INSERT INTO " + table + " (id, body) VALUES (?, 'v1')", id);
        }

        /** A short lease, renewed every second: a lost lock is noticed within the method. */
        @PathLocked(paths = "'/docs/' + #id", lease = "3s")
        @Transactional
        public void writeThen(int id, Runnable then) {
            jdbc.update("INSERT INTO " + table + " (id, body) VALUES (?, 'v1')", id);
            then.run();
        }

        @PathLocked(paths = "'/docs/' + #id")
        @Transactional
        public void writeThenFail(int id) {
            jdbc.update("INSERT INTO " + table + " (id, body) VALUES (?, 'v1')", id);
            throw new IllegalStateException("rejected " + id);
        }

        @PathLocked(paths = "'/docs/' + #id", waitAtMost = "20s")
        @Transactional(readOnly = true)
        public int count(int id) {
            return jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE id = ?", Integer.class, id);
        }

        @PathLocked(paths = "'/docs/' + #id", lease = "60s")
        @Transactional
        public void writeWithALongLeaseThen(int id, Runnable then) {
            jdbc.update("INSERT INTO " + table + " (id, body) VALUES (?, 'v1')", id);
            then.run();
        }

        @PathLocked(paths = "'/docs/' + #id", lease = "3s")
        public void runWithoutTransaction(int id, Runnable then) {
            then.run();
        }

        @PathLocked(paths = "'/docs/' + #id")
        public int countWithoutTransaction(int id) {
            return jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE id = ?", Integer.class, id);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Application {

        @Bean
        Documents documents(DataSource dataSource, @Value("${docs.table}") String table,
                PlatformTransactionManager transactionManager) {
            return new Documents(dataSource, table, transactionManager);
        }

        @Bean
        LeaseEvents leaseEvents() {
            return new LeaseEvents();
        }
    }

    /** The paths whose leases the node's watchdog found lost. */
    static class LeaseEvents implements LockListener {

        final Set<String> lostPaths = ConcurrentHashMap.newKeySet();

        @Override
        public void leaseLost(LockHandle handle, String reason) {
            lostPaths.addAll(handle.request().keys());
        }
    }

    /** Puts the transaction interceptor outside the lock advisor. */
    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement(order = 0)
    static class TransactionsOutsideLocks {
    }
}
