package dev.locks.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import dev.locks.HolderQuery;
import dev.locks.LockHandle;
import dev.locks.LockHolder;
import dev.locks.LockKind;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;

/**
 * Tenants never see, block or release each other's locks, including tenants whose names differ
 * only in case, a trailing space, a LIKE wildcard or a character that could run into the path.
 */
class TenantIsolationTest {

    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    abstract static class Contract {

        private HikariDataSource pool;

        private String prefix;

        private JdbcLockService nodeA;

        private JdbcLockService nodeB;

        private String run;

        abstract TestDatabase database();

        @BeforeAll
        void createSchema() {
            prefix = TestDatabase.uniquePrefix();
            pool = database().newPool(8);
            JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true).build().close();
        }

        @AfterAll
        void dropSchema() {
            TestDatabase.dropTables(pool, prefix);
            pool.close();
        }

        @BeforeEach
        void start() {
            run = UUID.randomUUID().toString().substring(0, 8);
            nodeA = node("node-a");
            nodeB = node("node-b");
        }

        @AfterEach
        void stop() {
            nodeA.close();
            nodeB.close();
        }

        private JdbcLockService node(String id) {
            return JdbcLockService.builder(pool).tablePrefix(prefix)
                    .settings(LockSettings.builder().nodeId(id).slowWaitLog(null).purgeInterval(null).build()).build();
        }

        /** Tenant names that a careless store could confuse with {@code acme}. */
        private List<String> lookalikes() {
            String acme = "acme-" + run;
            return List.of(acme, acme.toUpperCase(), acme + " ", acme + "%", acme.substring(0, acme.length() - 1) + "_",
                    acme + "/x", acme + "\\", "é" + acme, "e\u0301" + acme + "x");
        }

        @Test
        void theSameLocksInLookalikeTenantsAreHeldAtOnce() {
            List<LockHandle> handles = new ArrayList<>();
            try {
                for (String tenant : lookalikes()) {
                    handles.add(nodeA.tryAcquire(LockRequest.paths("/").exclusive().tenant(tenant).build()).orElseThrow(
                            () -> new AssertionError("root of tenant '" + tenant + "' was blocked by another tenant")));
                    handles.add(nodeB.tryAcquire(LockRequest.singleton("job").tenant(tenant).build()).orElseThrow());
                    handles.add(nodeB.tryAcquire(LockRequest.semaphore("exports", 1).tenant(tenant).build()).orElseThrow());
                }
            }
            finally {
                handles.forEach(LockHandle::release);
            }
        }

        @Test
        void aTenantSeesOnlyItsOwnHolders() {
            List<String> tenants = lookalikes();
            List<LockHandle> handles = new ArrayList<>();
            try {
                for (String tenant : tenants) {
                    handles.add(nodeA.acquire(LockRequest.paths("/shared/dir").tenant(tenant).build()));
                }
                for (String tenant : tenants) {
                    String canonical = java.text.Normalizer.normalize(tenant, java.text.Normalizer.Form.NFC);
                    assertThat(nodeB.holders(tenant, "/shared")).as("holders in '%s'", tenant)
                            .singleElement().satisfies(h -> assertThat(h.tenant()).isEqualTo(canonical));
                    assertThat(nodeB.list(new HolderQuery(LockKind.PATH, canonical, "/shared", null, 100)))
                            .extracting(LockHolder::tenant).containsExactly(canonical);
                }
            }
            finally {
                handles.forEach(LockHandle::release);
            }
        }

        @Test
        void listingByTenantFindsTheTenantWhateverItsCanonicalSpelling() {
            String composed = "caf\u00E9-" + run;
            String decomposed = "cafe\u0301-" + run;
            try (LockHandle h = nodeA.acquire(LockRequest.paths("/menu").tenant(decomposed).build())) {
                // holders() and the request both take the tenant in NFC; the operator's listing must too
                assertThat(nodeB.holders(decomposed, "/menu")).hasSize(1);
                assertThat(nodeB.list(new HolderQuery(null, composed, null, null, 10))).hasSize(1);
                assertThat(nodeB.list(new HolderQuery(null, decomposed, null, null, 10))).hasSize(1);
            }
        }

        @Test
        void aHandleReleasesOnlyItsOwnTenantsLock() {
            String mine = "mine-" + run;
            String theirs = "theirs-" + run;
            LockHandle theirLock = nodeB.acquire(LockRequest.paths("/doc").tenant(theirs).build());
            try {
                LockHandle myLock = nodeA.acquire(LockRequest.paths("/doc").tenant(mine).build());
                assertThat(myLock.release()).isTrue();
                assertThat(myLock.release()).isFalse();
                assertThat(nodeA.holders(theirs, "/doc")).singleElement().satisfies(h -> assertThat(h.node()).isEqualTo("node-b"));
                assertThat(nodeA.tryAcquire(LockRequest.paths("/doc").tenant(theirs).build())).isEmpty();
                assertThat(theirLock.isValid()).isTrue();
            }
            finally {
                theirLock.release();
            }
        }

        @Test
        void waitingInOneTenantDoesNotBlockAnother() throws Exception {
            String busy = "busy-" + run;
            String free = "free-" + run;
            LockHandle holder = nodeA.acquire(LockRequest.paths("/q").tenant(busy).build());
            Thread waiter = new Thread(() -> {
                try {
                    nodeA.acquire(LockRequest.paths("/q").tenant(busy).waitAtMost(java.time.Duration.ofSeconds(3)).build())
                            .release();
                }
                catch (RuntimeException ignored) {
                    // times out: that is fine
                }
            });
            waiter.start();
            try {
                Thread.sleep(300);
                // a queued waiter in the busy tenant must not hold up the same path elsewhere
                assertThat(nodeB.tryAcquire(LockRequest.paths("/q").tenant(free).build())).isPresent().get()
                        .satisfies(LockHandle::release);
            }
            finally {
                holder.release();
                waiter.join();
            }
        }
    }

    @Nested
    class OnH2 extends Contract {
        @Override
        TestDatabase database() {
            return TestDatabase.H2;
        }
    }

    @Nested
    class OnMariaDb extends Contract {
        @Override
        TestDatabase database() {
            return TestDatabase.MYSQL;
        }
    }

    @Nested
    class OnPostgres extends Contract {
        @Override
        TestDatabase database() {
            return TestDatabase.POSTGRESQL;
        }
    }
}
