package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.locks.InvalidLockPathException;
import dev.locks.LockHandle;
import dev.locks.LockHolder;
import dev.locks.LockKind;
import dev.locks.LockMode;
import dev.locks.LockRequest;
import dev.locks.LockSettings;

/** The conflict rule of DESIGN.md §1 on a real store. */
abstract class PathSemanticsContract extends LockServiceContract {

    @Test
    void exclusiveDallasBlocksItsSubtreeAndAncestorsAndLeavesSiblingsFree() {
        try (LockHandle dallas = tryX("/Shared/marketing/Dallas").orElseThrow()) {
            assertThat(tryX("/Shared/marketing/Dallas/q3/report.xlsx")).isEmpty();
            assertThat(tryX("/Shared/marketing/Dallas")).isEmpty();
            assertThat(tryX("/Shared/marketing")).isEmpty();
            assertThat(tryX("/Shared")).isEmpty();
            assertThat(tryX("/")).isEmpty();
            assertThat(locks.tryAcquire(s("/Shared").build())).isEmpty();
            assertThat(locks.tryAcquire(s("/Shared/marketing/Dallas/x").build())).isEmpty();
            for (String free : List.of("/Shared/Engineering/test", "/Shared/QA", "/Shared/marketing/Austin",
                    "/private/kpatel", "/Shared/marketing/Dallas2", "/Shared/marketing/Dalla")) {
                Optional<LockHandle> h = tryX(free);
                assertThat(h).as(free).isPresent();
                h.get().release();
            }
        }
        assertThat(tryX("/Shared")).isPresent();
    }

    /**
     * The largest request the limits allow: the most paths, each under a top folder of its own and as
     * deep as the paths and ancestors allowed together permit, with as many characters as allowed.
     */
    private static List<String> largestRequest() {
        int paths = LockSettings.MOST_PATHS_PER_REQUEST;
        int depth = (LockSettings.MOST_KEYS_PER_REQUEST - 1) / paths;
        int length = LockSettings.MOST_CHARACTERS_PER_REQUEST / paths;
        String segment = "s".repeat(length / depth - 1);
        List<String> request = new ArrayList<>();
        for (int i = 0; i < paths; i++) {
            String top = "/top-" + i;
            request.add(top + ("/" + segment).repeat(depth - 1));
        }
        return request;
    }

    @Test
    void aRequestAtEverySizeLimitIsGrantedOnAWorkersStackAndConflictsLikeAnyOther() throws Exception {
        List<String> paths = largestRequest();
        AtomicReference<Object> outcome = new AtomicReference<>();
        // a worker thread's stack, not the test runner's main thread (8 MB on Linux): H2's parser recurses
        Thread worker = new Thread(null, () -> {
            try {
                outcome.set(locks.tryAcquire(LockRequest.paths(paths).tenant(tenant).build()));
            }
            catch (Throwable failure) {
                outcome.set(failure);
            }
        }, "small-stack", 512 * 1024);
        worker.start();
        worker.join(120_000);

        assertThat(outcome.get()).isInstanceOf(Optional.class);
        LockHandle handle = ((Optional<?>) outcome.get()).map(LockHandle.class::cast).orElseThrow();
        assertThat(tryX(paths.get(paths.size() - 1))).isEmpty();
        assertThat(tryX("/top-0")).isEmpty();
        assertThat(handle.release()).isTrue();
        assertThat(tryX("/top-0")).isPresent().get().matches(LockHandle::release);
    }

    enum Relation {
        EQUAL("/a/b", "/a/b", true), ANCESTOR("/a", "/a/b/c", true), DESCENDANT("/a/b/c", "/a", true),
        ROOT_AND_ANY("/", "/x/y", true), SIBLING("/a/b", "/a/c", false), PREFIX_NOT_ANCESTOR("/a/b", "/a/bc", false),
        UNRELATED("/a", "/b", false);

        final String first;

        final String second;

        final boolean overlapping;

        Relation(String first, String second, boolean overlapping) {
            this.first = first;
            this.second = second;
            this.overlapping = overlapping;
        }
    }

    Stream<Arguments> conflictCells() {
        List<Arguments> cells = new ArrayList<>();
        for (Relation relation : Relation.values()) {
            for (LockMode first : LockMode.values()) {
                for (LockMode second : LockMode.values()) {
                    for (boolean sameOwner : new boolean[] { true, false }) {
                        for (boolean sameTenant : new boolean[] { true, false }) {
                            cells.add(Arguments.of(relation, first, second, sameOwner, sameTenant));
                        }
                    }
                }
            }
        }
        return cells.stream();
    }

    @ParameterizedTest(name = "{0} {1} then {2}, same owner {3}, same tenant {4}")
    @MethodSource("conflictCells")
    void secondLockIsRefusedExactlyWhenTheRuleSaysTheyConflict(Relation relation, LockMode first, LockMode second,
            boolean sameOwner, boolean sameTenant) {
        boolean conflict = relation.overlapping && (first == LockMode.EXCLUSIVE || second == LockMode.EXCLUSIVE)
                && !sameOwner && sameTenant;
        LockRequest a = LockRequest.paths(relation.first).mode(first).tenant(tenant).build();
        LockRequest b = LockRequest.paths(relation.second).mode(second).tenant(sameTenant ? tenant : tenant + "-other")
                .build();
        Optional<LockHandle> secondHandle;
        if (sameOwner) {
            // the scoped forms share one owner per thread
            secondHandle = locks.call(a, () -> {
                Optional<LockHandle> h = locks.tryEnter(b);
                h.ifPresent(LockHandle::release);
                return h;
            });
        }
        else {
            try (LockHandle held = locks.tryAcquire(a).orElseThrow()) {
                secondHandle = locks.tryAcquire(b);
                secondHandle.ifPresent(LockHandle::release);
            }
        }
        assertThat(secondHandle.isPresent()).as("granted").isEqualTo(!conflict);
    }

    @Test
    void likeWildcardsAndEscapeCharactersAreOrdinaryCharacters() {
        for (String special : List.of("%", "_", "!", "\\", "'", "\"", "%_!\\", "😀")) {
            String path = "/w/a" + special;
            try (LockHandle held = tryX(path).orElseThrow()) {
                assertThat(tryX(path + "/child")).as("child of " + path).isEmpty();
                assertThat(tryX("/w/a")).as("/w/a beside " + path).isPresent().get().matches(LockHandle::release);
                assertThat(tryX("/w/ab")).as("/w/ab beside " + path).isPresent().get().matches(LockHandle::release);
                assertThat(tryX("/w/a" + special + "x")).as("sibling of " + path).isPresent().get()
                        .matches(LockHandle::release);
                assertThat(tryX("/w")).as("parent of " + path).isEmpty();
            }
        }
    }

    @Test
    void trailingSpacesAndCaseAreSignificant() {
        try (LockHandle held = tryX("/docs/Report").orElseThrow()) {
            assertThat(tryX("/docs/Report ")).isPresent().get().matches(LockHandle::release);
            assertThat(tryX("/docs/report")).isPresent().get().matches(LockHandle::release);
            assertThat(tryX("/docs/Report/")).isEmpty();
        }
    }

    @Test
    void pathsOfFourThousandCharactersLockAndConflict() {
        String segment = "/" + "x".repeat(99);
        String longPath = segment.repeat(40);
        assertThat(longPath).hasSize(4000);
        String parent = longPath.substring(0, 3900);
        String sibling = parent + "/" + "y".repeat(99);
        try (LockHandle held = tryX(longPath).orElseThrow()) {
            assertThat(tryX(parent)).isEmpty();
            assertThat(tryX(sibling)).isPresent().get().matches(LockHandle::release);
        }
        try (LockHandle held = tryX(parent).orElseThrow()) {
            assertThat(tryX(longPath)).isEmpty();
        }
    }

    @Test
    void deepPathsConflictWithEveryAncestor() {
        StringBuilder deep = new StringBuilder();
        List<String> ancestors = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            ancestors.add(deep.length() == 0 ? "/" : deep.toString());
            deep.append("/d").append(i);
        }
        try (LockHandle held = locks.tryAcquire(s(deep.toString()).build()).orElseThrow()) {
            for (String ancestor : ancestors) {
                assertThat(tryX(ancestor)).as(ancestor).isEmpty();
                assertThat(locks.tryAcquire(s(ancestor).build())).as("shared " + ancestor).isPresent().get()
                        .matches(LockHandle::release);
            }
        }
    }

    @Test
    void aMultiPathRequestIsGrantedAllOrNothing() {
        try (LockHandle dst = tryX("/dst").orElseThrow()) {
            assertThat(tryX("/src", "/dst")).isEmpty();
            // nothing half-held: /src stayed free
            assertThat(tryX("/src")).isPresent().get().matches(LockHandle::release);
        }
        try (LockHandle both = tryX("/src", "/dst").orElseThrow()) {
            assertThat(tryX("/src")).isEmpty();
            assertThat(tryX("/dst/x")).isEmpty();
        }
    }

    @Test
    void overlappingPathsInOneRequestAreMerged() {
        try (LockHandle h = tryX("/m/a/b", "/m/a", "/m//a/").orElseThrow()) {
            List<LockHolder> holders = locks.holders(tenant, "/m");
            assertThat(holders).extracting(LockHolder::path).containsExactly("/m/a");
        }
    }

    @Test
    void tenantsNeitherSeeNorBlockEachOther() {
        try (LockHandle mine = tryX("/data").orElseThrow()) {
            LockRequest other = LockRequest.paths("/data").tenant(tenant + "-b").build();
            try (LockHandle theirs = locks.tryAcquire(other).orElseThrow()) {
                assertThat(locks.holders(tenant + "-b", "/data")).hasSize(1);
                assertThat(locks.holders(tenant, "/data")).hasSize(1);
            }
        }
    }

    @Test
    void holdersListsAncestorsTheNodeAndTheSubtreeButNotSiblings() {
        JdbcLockService other = newNode("node-b");
        List<LockHandle> held = new ArrayList<>();
        held.add(locks.tryAcquire(s("/h").build()).orElseThrow());
        held.add(other.tryAcquire(s("/h/a/b").build()).orElseThrow());
        held.add(locks.tryAcquire(s("/h/c").build()).orElseThrow());
        try {
            List<LockHolder> holders = locks.holders(tenant, "/h/a");
            assertThat(holders).extracting(LockHolder::path).containsExactlyInAnyOrder("/h", "/h/a/b");
            LockHolder b = holders.stream().filter(h -> h.path().equals("/h/a/b")).findFirst().orElseThrow();
            assertThat(b.node()).isEqualTo("node-b");
            assertThat(b.thread()).isEqualTo(Thread.currentThread().getName());
            assertThat(b.mode()).isEqualTo(LockMode.SHARED);
            assertThat(b.expiresAt()).isAfter(b.since());
        }
        finally {
            held.forEach(LockHandle::release);
        }
    }

    @Test
    void fencingTokensIncreaseAcrossReleasesOnOverlappingPaths() {
        long last = 0;
        for (String path : List.of("/f", "/f/a", "/f", "/f/a/b", "/", "/f/a")) {
            try (LockHandle h = tryX(path).orElseThrow()) {
                assertThat(h.fencingToken()).as(path).isGreaterThan(last);
                last = h.fencingToken();
            }
        }
    }

    @Test
    void tryAcquireEachReturnsOnlyTheFreeOnes() {
        try (LockHandle busy = tryX("/rows/2").orElseThrow()) {
            JdbcLockService other = newNode("node-b");
            List<LockRequest> batch = List.of(x("/rows/1").build(), x("/rows/2").build(), x("/rows/3").build());
            List<LockHandle> claimed = other.tryAcquireEach(batch);
            assertThat(claimed).extracting(h -> h.request().keys().get(0)).containsExactly("/rows/1", "/rows/3");
            claimed.forEach(LockHandle::release);
        }
    }

    @Test
    void tryAcquireEachThatFailsPartWayReleasesWhatItHadGranted() {
        List<LockRequest> batch = List.of(x("/rows/1").build(), x("rows/2").build());

        assertThatThrownBy(() -> locks.tryAcquireEach(batch)).isInstanceOf(InvalidLockPathException.class);

        assertThat(locks.holders(tenant, "/rows/1")).isEmpty();
    }

    @Test
    void withCaseInsensitivePathsAWordEndingInCapitalSigmaConflictsWithItsLowerCaseSpelling() {
        JdbcLockService folding = node("node-folding", mainPool(),
                LockSettings.builder().nodeId("node-folding").caseSensitive(false).slowWaitLog(null));
        try (LockHandle upper = folding.tryAcquire(x("/\u039B\u039F\u0393\u039F\u03A3.TXT").build()).orElseThrow()) {
            assertThat(folding.tryAcquire(x("/\u03BB\u03BF\u03B3\u03BF\u03C2.txt").build())).isEmpty();
        }
    }

    @Test
    void operatorsListLiveLocksByTenantPathPrefixAndNode() {
        JdbcLockService other = newNode("node-b");
        List<LockHandle> held = new ArrayList<>();
        held.add(tryX("/ops/a").orElseThrow());
        held.add(other.tryAcquire(x("/ops/b/c").build()).orElseThrow());
        held.add(tryX("/elsewhere").orElseThrow());
        try {
            assertThat(locks.list(new dev.locks.HolderQuery(null, tenant, null, null, 100))).hasSize(3);
            assertThat(locks.list(new dev.locks.HolderQuery(null, tenant, "/ops", null, 100)))
                    .extracting(LockHolder::path).containsExactly("/ops/a", "/ops/b/c");
            assertThat(locks.list(new dev.locks.HolderQuery(null, tenant, "/", "node-b", 100)))
                    .extracting(LockHolder::path).containsExactly("/ops/b/c");
            assertThat(locks.list(new dev.locks.HolderQuery(null, tenant + "-nobody", null, null, 100))).isEmpty();
        }
        finally {
            held.forEach(LockHandle::release);
        }
    }

    @Test
    void aPathPrefixWithNoKindListsPathLocksInItsSubtreeAndOnlyTheSingletonsAndSemaphoresOfThatName() {
        List<LockHandle> held = new ArrayList<>();
        held.add(tryX("/ops/a").orElseThrow());
        held.add(locks.tryAcquire(LockRequest.singleton("/ops").tenant(tenant).build()).orElseThrow());
        held.add(locks.tryAcquire(LockRequest.semaphore("/ops", 2).tenant(tenant).build()).orElseThrow());
        held.add(locks.tryAcquire(LockRequest.singleton("/ops/nightly").tenant(tenant).build()).orElseThrow());
        held.add(locks.tryAcquire(LockRequest.semaphore("/ops/exports", 2).tenant(tenant).build()).orElseThrow());
        try {
            assertThat(locks.list(new dev.locks.HolderQuery(null, tenant, "/ops", null, 100)))
                    .extracting(LockHolder::kind, LockHolder::path).containsExactly(tuple(LockKind.PATH, "/ops/a"),
                            tuple(LockKind.SINGLETON, "/ops"), tuple(LockKind.SEMAPHORE, "/ops"));
        }
        finally {
            held.forEach(LockHandle::release);
        }
    }

    @Test
    void withCaseInsensitivePathsAPrefixWithNoKindFindsPathLocksFoldedAndSingletonsByTheirExactName() {
        JdbcLockService folding = node("node-folding", mainPool(),
                LockSettings.builder().nodeId("node-folding").caseSensitive(false).slowWaitLog(null));
        List<LockHandle> held = new ArrayList<>();
        held.add(folding.tryAcquire(x("/Jobs/Nightly/report").build()).orElseThrow());
        held.add(folding.tryAcquire(LockRequest.singleton("/Jobs/Nightly").tenant(tenant).build()).orElseThrow());
        held.add(folding.tryAcquire(LockRequest.singleton("/jobs/nightly").tenant(tenant).build()).orElseThrow());
        try {
            assertThat(folding.list(new dev.locks.HolderQuery(null, tenant, "/Jobs/Nightly", null, 100)))
                    .extracting(LockHolder::kind, LockHolder::path)
                    .containsExactly(tuple(LockKind.PATH, "/jobs/nightly/report"),
                            tuple(LockKind.SINGLETON, "/Jobs/Nightly"));
        }
        finally {
            held.forEach(LockHandle::release);
        }
    }

    @Test
    void aForceReleaseFreesTheWholeGrantForOthers() {
        LockHandle stuck = tryX("/stuck/a", "/stuck/b").orElseThrow();
        long id = locks.holders(tenant, "/stuck/b").get(0).lockId();
        assertThat(locks.forceRelease(id)).isTrue();
        JdbcLockService other = newNode("node-b");
        assertThat(other.tryAcquire(x("/stuck").build())).isPresent().get().matches(LockHandle::release);
        assertThat(stuck.release()).isFalse();
        assertThat(locks.forceRelease(id)).isFalse();
    }

    @Test
    void aForceReleaseAnswersEveryRowOfTheGrantItFreed() {
        tryX("/Shared/marketing/Dallas", "/Shared/Dallas").orElseThrow();
        long destination = locks.holders(tenant, "/Shared/Dallas").get(0).lockId();

        List<LockHolder> released = locks.forceReleaseGrant(destination, "a test");

        assertThat(released).extracting(LockHolder::path)
                .containsExactlyInAnyOrder("/Shared/marketing/Dallas", "/Shared/Dallas");
        assertThat(released).allSatisfy(row -> {
            assertThat(row.tenant()).isEqualTo(tenant);
            assertThat(row.mode()).isEqualTo(LockMode.EXCLUSIVE);
            assertThat(row.node()).isEqualTo("node-a");
            assertThat(row.waiting()).isFalse();
        });
        assertThat(locks.list(new dev.locks.HolderQuery(null, tenant, null, null, 100))).isEmpty();
    }
}
