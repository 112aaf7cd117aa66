package dev.locks.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.delete;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;

import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;

import dev.locks.DefaultLockService;
import dev.locks.LockHandle;
import dev.locks.LockLostException;
import dev.locks.LockRequest;
import dev.locks.LockSettings;
import dev.locks.jdbc.JdbcLockService;
import dev.locks.testing.TestDatabase;

/**
 * The {@code locks} endpoint over HTTP (MockMvc) on one database: its JSON, its filters, the holders
 * of one path, and force-release.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LocksEndpointContract {

    private final String prefix = TestDatabase.uniquePrefix();

    private HikariDataSource pool;

    private HikariDataSource otherPool;

    private final List<AutoCloseable> toClose = new ArrayList<>();

    /** Another node of the cluster, outside the context. */
    private JdbcLockService nodeB;

    private String tenant;

    protected abstract TestDatabase database();

    @BeforeAll
    void createSchema() {
        pool = database().newPool(8);
        otherPool = database().newPool(8);
        JdbcLockService.builder(pool).tablePrefix(prefix).createSchema(true).build().close();
    }

    @BeforeEach
    void startNodes() {
        tenant = "t-" + UUID.randomUUID();
        nodeB = node("node-b", otherPool);
    }

    @AfterEach
    void stopNodes() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        toClose.clear();
    }

    @AfterAll
    void dropSchema() {
        if (pool != null) {
            TestDatabase.dropTables(pool, prefix);
            pool.close();
        }
        if (otherPool != null) {
            otherPool.close();
        }
    }

    private JdbcLockService node(String id, HikariDataSource ds) {
        JdbcLockService service = JdbcLockService.builder(ds).tablePrefix(prefix)
                .settings(LockSettings.builder().nodeId(id).slowWaitLog(null).renewalTick(Duration.ofMillis(20)).build())
                .build();
        toClose.add(service);
        return service;
    }

    /** The application: its own lock service bean (node-a), the endpoint exposed over the web. */
    private WebApplicationContextRunner application() {
        // not the pool itself: the context would close it
        return ActuatorContexts.webApplication()
                .withBean(DataSource.class, () -> new DelegatingDataSource(pool))
                .withUserConfiguration(UserLockService.class)
                .withPropertyValues("test.locks.prefix=" + prefix, "management.endpoints.web.exposure.include=locks");
    }

    private interface MvcTest {
        void run(MockMvc mvc, JdbcLockService locks) throws Exception;
    }

    private void withMvc(WebApplicationContextRunner runner, MvcTest test) {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            test.run(MockMvcBuilders.webAppContextSetup(context).build(), context.getBean(JdbcLockService.class));
        });
    }

    private LockRequest.Builder x(String path) {
        return LockRequest.paths(path).exclusive().tenant(tenant);
    }

    @Test
    void listsPathLocksWithTheirHoldersInTheDocumentedShape() {
        withMvc(application(), (mvc, locks) -> {
            LockHandle dallas = locks.acquire(x("/Shared/marketing/Dallas").build());
            LockHandle qa = nodeB.acquire(LockRequest.paths("/Shared/QA").shared().tenant(tenant).build());
            mvc.perform(get("/actuator/locks").param("tenant", tenant))
                    .andExpect(status().isOk())
                    .andExpect(jsonPath("$.node").value("node-a"))
                    .andExpect(jsonPath("$.heldByThisNode").value(1))
                    .andExpect(jsonPath("$.waitingOnThisNode").value(0))
                    .andExpect(jsonPath("$.truncated").value(false))
                    .andExpect(jsonPath("$.paths", hasSize(2)))
                    .andExpect(jsonPath("$.paths[0].lockId").value(dallas.fencingToken()))
                    .andExpect(jsonPath("$.paths[0].tenant").value(tenant))
                    .andExpect(jsonPath("$.paths[0].path").value("/Shared/marketing/Dallas"))
                    .andExpect(jsonPath("$.paths[0].mode").value("exclusive"))
                    .andExpect(jsonPath("$.paths[0].node").value("node-a"))
                    .andExpect(jsonPath("$.paths[0].thread").value(Thread.currentThread().getName()))
                    .andExpect(jsonPath("$.paths[0].since").isString())
                    .andExpect(jsonPath("$.paths[0].expiresAt").value(dallas.expiresAt().toString()))
                    .andExpect(jsonPath("$.paths[0].owner").isString())
                    .andExpect(jsonPath("$.paths[0].*", hasSize(9)))
                    .andExpect(jsonPath("$.paths[1].path").value("/Shared/QA"))
                    .andExpect(jsonPath("$.paths[1].mode").value("shared"))
                    .andExpect(jsonPath("$.paths[1].node").value("node-b"))
                    .andExpect(jsonPath("$.paths[1].lockId").value(qa.fencingToken()))
                    .andExpect(jsonPath("$.singletons", hasSize(0)))
                    .andExpect(jsonPath("$.semaphores", hasSize(0)));
        });
    }

    @Test
    void groupsSemaphorePermitsByNameAndListsSingletons() {
        withMvc(application(), (mvc, locks) -> {
            locks.acquire(LockRequest.semaphore("exports", 3).tenant(tenant).build());
            nodeB.acquire(LockRequest.semaphore("exports", 3).tenant(tenant).build());
            locks.acquire(LockRequest.semaphore("imports", 3).tenant(tenant).build());
            LockHandle nightly = nodeB.acquire(LockRequest.singleton("nightly-report").tenant(tenant).build());
            mvc.perform(get("/actuator/locks").param("tenant", tenant))
                    .andExpect(status().isOk())
                    .andExpect(jsonPath("$.semaphores", hasSize(2)))
                    .andExpect(jsonPath("$.semaphores[0].name").value("exports"))
                    .andExpect(jsonPath("$.semaphores[0].tenant").value(tenant))
                    .andExpect(jsonPath("$.semaphores[0].permitsInUse").value(2))
                    .andExpect(jsonPath("$.semaphores[0].permits[*].node", contains("node-a", "node-b")))
                    .andExpect(jsonPath("$.semaphores[1].name").value("imports"))
                    .andExpect(jsonPath("$.semaphores[1].permitsInUse").value(1))
                    .andExpect(jsonPath("$.singletons", hasSize(1)))
                    .andExpect(jsonPath("$.singletons[0].name").value("nightly-report"))
                    .andExpect(jsonPath("$.singletons[0].node").value("node-b"))
                    .andExpect(jsonPath("$.singletons[0].lockId").value(nightly.fencingToken()))
                    .andExpect(jsonPath("$.paths", hasSize(0)));
        });
    }

    @Test
    void filtersByPathSubtreeNodeAndKind() {
        withMvc(application(), (mvc, locks) -> {
            locks.acquire(x("/Shared/marketing/Dallas").build());
            nodeB.acquire(x("/Shared/marketing/Austin").build());
            locks.acquire(x("/Shared/marketingX").build());
            locks.acquire(x("/private/kpatel").build());
            locks.acquire(LockRequest.singleton("/Shared/marketing").tenant(tenant).build());
            mvc.perform(get("/actuator/locks").param("tenant", tenant).param("path", "/Shared/marketing")
                    .param("kind", "path"))
                    .andExpect(jsonPath("$.paths[*].path", contains("/Shared/marketing/Dallas", "/Shared/marketing/Austin")))
                    .andExpect(jsonPath("$.singletons", hasSize(0)));
            mvc.perform(get("/actuator/locks").param("tenant", tenant).param("node", "node-b"))
                    .andExpect(jsonPath("$.paths[*].path", contains("/Shared/marketing/Austin")));
            mvc.perform(get("/actuator/locks").param("tenant", tenant).param("kind", "SINGLETON"))
                    .andExpect(jsonPath("$.paths", hasSize(0)))
                    .andExpect(jsonPath("$.singletons[*].name", contains("/Shared/marketing")));
            mvc.perform(get("/actuator/locks").param("tenant", "t-" + UUID.randomUUID()))
                    .andExpect(jsonPath("$.paths", hasSize(0)));
        });
    }

    @Test
    void marksTheListTruncatedBeyondTheLimit() {
        withMvc(application(), (mvc, locks) -> {
            for (int i = 0; i < 3; i++) {
                locks.acquire(x("/many/" + i).build());
            }
            mvc.perform(get("/actuator/locks").param("tenant", tenant).param("limit", "2"))
                    .andExpect(jsonPath("$.paths[*].path", contains("/many/0", "/many/1")))
                    .andExpect(jsonPath("$.truncated").value(true));
            mvc.perform(get("/actuator/locks").param("tenant", tenant).param("limit", "3"))
                    .andExpect(jsonPath("$.paths", hasSize(3)))
                    .andExpect(jsonPath("$.truncated").value(false));
        });
    }

    @Test
    void marksTheHoldersOfOnePathTruncatedWhenMoreThanTheLargestLimitHoldIt() {
        withMvc(application(), (mvc, locks) -> {
            // 10,001 rows under /big, a hundred paths per grant to keep the statements small
            for (int grant = 0; grant <= 100; grant++) {
                List<String> paths = new ArrayList<>();
                for (int i = 0; i < (grant < 100 ? 100 : 1); i++) {
                    paths.add("/big/" + grant + "/" + i);
                }
                locks.acquire(LockRequest.paths(paths).exclusive().tenant(tenant).build());
            }
            mvc.perform(get("/actuator/locks/path/big").param("tenant", tenant).param("limit", "10000"))
                    .andExpect(status().isOk())
                    .andExpect(jsonPath("$.paths", hasSize(10_000)))
                    .andExpect(jsonPath("$.truncated").value(true));
        });
    }

    @Test
    void showsEveryHolderThatOverlapsOnePath() {
        withMvc(application(), (mvc, locks) -> {
            nodeB.acquire(s("/Shared").build());
            locks.acquire(s("/Shared/marketing/Dallas").build());
            locks.acquire(s("/Shared/marketing/Dallas/2024/q1").build());
            locks.acquire(s("/Shared/marketing/Austin").build());
            mvc.perform(get("/actuator/locks/path/Shared/marketing/Dallas/2024").param("tenant", tenant))
                    .andExpect(status().isOk())
                    .andExpect(jsonPath("$.paths[*].path",
                            containsInAnyOrder("/Shared", "/Shared/marketing/Dallas", "/Shared/marketing/Dallas/2024/q1")));
        });
    }

    @Test
    void takesPathSegmentsWithSpacesAndPercentSignsLiterally() {
        withMvc(application(), (mvc, locks) -> {
            locks.acquire(x("/Shared/Q&A 100%/a_b").build());
            locks.acquire(x("/Shared/Q&A 1000/a_b").build());
            mvc.perform(get("/actuator/locks/path/{a}/{b}/{c}", "Shared", "Q&A 100%", "a_b").param("tenant", tenant))
                    .andExpect(status().isOk())
                    .andExpect(jsonPath("$.paths[*].path", contains("/Shared/Q&A 100%/a_b")));
        });
    }

    @Test
    void showsTheHoldersOfASemaphoreOrSingletonByName() {
        withMvc(application(), (mvc, locks) -> {
            locks.acquire(LockRequest.semaphore("exports:acme", 5).tenant(tenant).build());
            nodeB.acquire(LockRequest.semaphore("exports:acme", 5).tenant(tenant).build());
            locks.acquire(LockRequest.semaphore("exports:other", 5).tenant(tenant).build());
            locks.acquire(LockRequest.singleton("jobs/nightly").tenant(tenant).build());
            mvc.perform(get("/actuator/locks/semaphore/exports:acme").param("tenant", tenant))
                    .andExpect(status().isOk())
                    .andExpect(jsonPath("$.semaphores", hasSize(1)))
                    .andExpect(jsonPath("$.semaphores[0].permitsInUse").value(2));
            mvc.perform(get("/actuator/locks/singleton/jobs/nightly").param("tenant", tenant))
                    .andExpect(jsonPath("$.singletons[*].name", contains("jobs/nightly")));
        });
    }

    @Test
    void answersBadRequestForAnUnknownKindAnInvalidPathOrLimit() {
        withMvc(application(), (mvc, locks) -> {
            mvc.perform(get("/actuator/locks").param("kind", "mutex"))
                    .andExpect(status().isBadRequest()).andExpect(status().reason("Invalid kind"));
            mvc.perform(get("/actuator/locks/path/a/../b"))
                    .andExpect(status().isBadRequest()).andExpect(status().reason("Invalid lock path or name"));
            mvc.perform(get("/actuator/locks").param("limit", "0"))
                    .andExpect(status().isBadRequest()).andExpect(status().reason("Invalid limit"));
        });
    }

    @Test
    void refusesForceReleaseUnlessTheApplicationGrantsWriteAccess() {
        withMvc(application(), (mvc, locks) -> {
            LockHandle held = locks.acquire(x("/job").build());
            int status = mvc.perform(delete("/actuator/locks/{id}", held.fencingToken())).andReturn().getResponse()
                    .getStatus();
            assertThat(status).isIn(404, 405);
            assertThat(held.isValid()).isTrue();
            assertThat(locks.holders(tenant, "/job")).hasSize(1);
        });
    }

    @Test
    void forceReleaseLetsAWaiterProceedAndInvalidatesTheOldHoldersHandle() {
        withMvc(application().withPropertyValues("management.endpoint.locks.access=unrestricted"), (mvc, locks) -> {
            // the stuck holder runs under the watchdog (a scoped lock), which notices the loss at its next renewal
            LockHandle stuck = locks.enter(x("/job").lease(Duration.ofMillis(600)).build());
            try {
                CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(
                        () -> nodeB.acquire(x("/job").waitAtMost(Duration.ofSeconds(20)).build()));
                await().atMost(Duration.ofSeconds(5)).until(() -> nodeB.waitingCount() == 1);

                mvc.perform(delete("/actuator/locks/{id}", stuck.fencingToken()))
                        .andExpect(status().isOk())
                        .andExpect(jsonPath("$.lockId").value(stuck.fencingToken()))
                        .andExpect(jsonPath("$.released", is(true)));

                LockHandle next = waiter.get(10, TimeUnit.SECONDS);
                assertThat(next.fencingToken()).isGreaterThan(stuck.fencingToken());
                await().atMost(Duration.ofSeconds(5)).until(() -> !stuck.isValid());
                assertThatThrownBy(stuck::checkValid).isInstanceOf(LockLostException.class)
                        .hasMessageContaining("force-released");
                assertThat(next.isValid()).isTrue();
                next.release();
            }
            finally {
                assertThat(stuck.release()).isFalse();
            }
        });
    }

    @Test
    void listsRequestsWaitingOnAnyNodeInQueueOrder() {
        withMvc(application(), (mvc, locks) -> {
            LockHandle held = locks.acquire(x("/queue").build());
            CompletableFuture<Void> waiter = CompletableFuture.runAsync(
                    () -> nodeB.acquire(x("/queue/item").waitAtMost(Duration.ofSeconds(20)).build()).release());
            await().atMost(Duration.ofSeconds(5)).until(() -> nodeB.waitingCount() == 1);
            mvc.perform(get("/actuator/locks").param("tenant", tenant))
                    .andExpect(status().isOk())
                    .andExpect(jsonPath("$.paths", hasSize(1)))
                    .andExpect(jsonPath("$.waiters", hasSize(1)))
                    .andExpect(jsonPath("$.waiters[0].path").value("/queue/item"))
                    .andExpect(jsonPath("$.waiters[0].kind").value("path"))
                    .andExpect(jsonPath("$.waiters[0].mode").value("exclusive"))
                    .andExpect(jsonPath("$.waiters[0].node").value("node-b"))
                    .andExpect(jsonPath("$.waiters[0].ticket").isNumber());
            held.release();
            waiter.get(20, TimeUnit.SECONDS);
            mvc.perform(get("/actuator/locks").param("tenant", tenant))
                    .andExpect(jsonPath("$.waiters", hasSize(0)));
        });
    }

    @Test
    void forceReleasingAnUnknownLockReportsNothingReleased() {
        withMvc(application().withPropertyValues("management.endpoint.locks.access=unrestricted"), (mvc, locks) ->
                mvc.perform(delete("/actuator/locks/{id}", Long.MAX_VALUE - 1))
                        .andExpect(status().isOk())
                        .andExpect(jsonPath("$.released", is(false))));
    }

    @Test
    void forceReleasingOnePathOfAGrantAnswersAndFreesEveryPathOfIt() {
        withMvc(application().withPropertyValues("management.endpoint.locks.access=unrestricted"), (mvc, locks) -> {
            // a move: its source and destination are two rows, with two lockIds, of one grant
            locks.acquire(LockRequest.paths("/Shared/marketing/Dallas", "/Shared/Dallas").exclusive().tenant(tenant).build());
            long destination = locks.holders(tenant, "/Shared/Dallas").get(0).lockId();

            mvc.perform(delete("/actuator/locks/{id}", destination))
                    .andExpect(status().isOk())
                    .andExpect(jsonPath("$.lockId").value(destination))
                    .andExpect(jsonPath("$.released", is(true)))
                    .andExpect(jsonPath("$.paths[*].path", containsInAnyOrder("/Shared/marketing/Dallas", "/Shared/Dallas")))
                    .andExpect(jsonPath("$.paths[*].tenant", contains(tenant, tenant)))
                    .andExpect(jsonPath("$.paths[*].node", contains("node-a", "node-a")))
                    .andExpect(jsonPath("$.paths[0].*", hasSize(9)))
                    .andExpect(jsonPath("$.singletons", hasSize(0)))
                    .andExpect(jsonPath("$.semaphores", hasSize(0)));

            assertThat(nodeB.tryAcquire(x("/Shared").build())).as("both paths are free").isPresent();
        });
    }

    @Test
    void forceReleasingAGrantWhoseLeaseEndedAnswersNothingReleasedBeforeThePurge() {
        withMvc(application().withPropertyValues("management.endpoint.locks.access=unrestricted"), (mvc, locks) -> {
            LockHandle lapsed = locks.acquire(x("/lapsed").lease(Duration.ofMillis(300)).build());
            // the next purge is a minute away: the row stays in the table, expired
            await().atMost(Duration.ofSeconds(5)).until(() -> locks.holders(tenant, "/lapsed").isEmpty());

            mvc.perform(delete("/actuator/locks/{id}", lapsed.fencingToken()))
                    .andExpect(status().isOk())
                    .andExpect(jsonPath("$.released", is(false)))
                    .andExpect(jsonPath("$.paths", hasSize(0)));
        });
    }

    @Test
    void forceReleaseLogsWhoAskedAndEveryLockReleased() {
        withMvc(application().withPropertyValues("management.endpoint.locks.access=unrestricted"), (mvc, locks) -> {
            locks.acquire(LockRequest.paths("/Shared/marketing/Dallas", "/Shared/Dallas").exclusive().tenant(tenant).build());
            long destination = locks.holders(tenant, "/Shared/Dallas").get(0).lockId();

            List<String> logged = logDuring(() -> mvc.perform(delete("/actuator/locks/{id}", destination)
                    .principal(() -> "alice")).andExpect(status().isOk()));

            assertThat(logged).singleElement().asString()
                    .contains("'alice'", "/Shared/marketing/Dallas", "/Shared/Dallas", tenant, "node-a",
                            Thread.currentThread().getName());
        });
    }

    @Test
    void forceReleaseLogsACallerWithoutPrincipalAsUnauthenticated() {
        withMvc(application().withPropertyValues("management.endpoint.locks.access=unrestricted"), (mvc, locks) -> {
            LockHandle held = locks.acquire(x("/job").build());

            List<String> logged = logDuring(() -> mvc.perform(delete("/actuator/locks/{id}", held.fencingToken()))
                    .andExpect(status().isOk()));

            assertThat(logged).singleElement().asString().contains("an unauthenticated caller", "/job");
        });
    }

    @Test
    void forceReleaseShowsNoOwnerTokenNorGrantIdInItsAnswerOrLog() {
        withMvc(application().withPropertyValues("management.endpoint.locks.access=unrestricted"), (mvc, locks) -> {
            locks.acquire(LockRequest.paths("/Shared/marketing/Dallas", "/Shared/Dallas").exclusive().tenant(tenant).build());
            long destination = locks.holders(tenant, "/Shared/Dallas").get(0).lockId();
            List<String> secrets = ownerTokensAndGrantIds();
            List<String> texts = new ArrayList<>();

            texts.addAll(logDuring(() -> texts.add(mvc.perform(delete("/actuator/locks/{id}", destination).principal(() -> "alice"))
                    .andExpect(jsonPath("$.paths", hasSize(2)))
                    .andReturn().getResponse().getContentAsString())));

            assertThat(secrets).hasSize(4);
            assertThat(texts).hasSize(2).allSatisfy(text -> {
                assertThat(text).doesNotContainPattern("(?<![0-9a-fA-F])[0-9a-f]{32}(?![0-9a-fA-F])");
                secrets.forEach(secret -> assertThat(text).doesNotContain(secret));
            });
        });
    }

    private interface Request {
        void run() throws Exception;
    }

    /** What the lock service logs at INFO and above while {@code request} runs. */
    private static List<String> logDuring(Request request) throws Exception {
        Logger log = (Logger) LoggerFactory.getLogger(DefaultLockService.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        Level level = log.getLevel();
        log.setLevel(Level.INFO);
        appender.start();
        log.addAppender(appender);
        try {
            request.run();
        }
        finally {
            log.detachAppender(appender);
            log.setLevel(level);
        }
        return appender.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    /** The owner tokens and grant ids of the tenant's held rows: capabilities, never to be shown. */
    private List<String> ownerTokensAndGrantIds() throws Exception {
        List<String> secrets = new ArrayList<>();
        try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT owner_token, grant_id FROM " + prefix + "held WHERE tenant = ?")) {
            ps.setString(1, tenant);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    secrets.add(rs.getString(1));
                    secrets.add(rs.getString(2));
                }
            }
        }
        return secrets;
    }

    private LockRequest.Builder s(String path) {
        return LockRequest.paths(path).shared().tenant(tenant);
    }
}
