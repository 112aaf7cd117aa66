package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.locks.LockKind;
import dev.locks.LockPath;
import dev.locks.PathNormalizer;

/**
 * The keys a grant binds, each computed once: they must be exactly the keys of each path and
 * ancestor on their own, since rows written by one build are read by another.
 */
class RequestKeysTest {

    private static final PathNormalizer PATHS = new PathNormalizer(true, 4000);

    @ParameterizedTest
    @ValueSource(strings = { "/", "/a", "/a/b", "/Shared/marketing/Dallas", "/d/s/s/s/s/s/s/s/s/s/s/s/s/s/s/s/s/s/s/p-7",
            "/ünïcödé/日本語/€uro", "/a b/c.d", "/😀/x" })
    void aLineageHoldsTheKeyOfEveryAncestorRootFirstAndThenOfThePath(String raw) {
        LockPath path = PATHS.normalize(raw);
        List<byte[]> expected = new ArrayList<>();
        for (LockPath ancestor : path.ancestors()) {
            expected.add(LockKeys.lockKey(LockKind.PATH, "tenant-ä", ancestor));
        }
        expected.add(LockKeys.lockKey(LockKind.PATH, "tenant-ä", path));

        assertThat(LockKeys.lineage(LockKind.PATH, "tenant-ä", path)).containsExactlyElementsOf(expected);
    }

    @Test
    void aFlatNameWithSlashesHasOneKeyOfItsOwn() {
        LockPath name = LockPath.flat("nightly/export/job");

        assertThat(LockKeys.lineage(LockKind.SINGLETON, "t", name))
                .containsExactly(LockKeys.lockKey(LockKind.SINGLETON, "t", name));
    }

    @Test
    void aSinglePathLocksItsAncestorsSharedRootFirstAndItselfExclusive() {
        LockPath path = PATHS.normalize("/a/b/c");
        RequestKeys keys = RequestKeys.of(LockKind.PATH, "t", List.of(path));

        assertThat(keys.nodeLocks()).extracting(SqlDialect.NodeLock::exclusive).containsExactly(false, false, false, true);
        assertThat(keys.nodeLocks()).extracting(SqlDialect.NodeLock::key).containsExactly(
                key("/"), key("/a"), key("/a/b"), key("/a/b/c"));
    }

    @Test
    void severalPathsLockTheirSharedAncestorsOnceAndAllRowsInPathOrder() {
        List<LockPath> paths = Stream.of("/a/x/y", "/a/b").map(PATHS::normalize).toList();
        RequestKeys keys = RequestKeys.of(LockKind.PATH, "t", paths);

        assertThat(keys.nodeLocks()).extracting(SqlDialect.NodeLock::key).containsExactly(
                key("/"), key("/a"), key("/a/b"), key("/a/x"), key("/a/x/y"));
        assertThat(keys.nodeLocks()).extracting(SqlDialect.NodeLock::exclusive)
                .containsExactly(false, false, true, false, true);
    }

    @Test
    void theKeysOfTheBranchesAreAsManyAsTheirTextHasPlaceholders() {
        List<LockPath> one = List.of(PATHS.normalize("/a/b/c"));
        List<LockPath> siblings = Stream.of("/a/b/c", "/a/b/d", "/e").map(PATHS::normalize).toList();

        assertThat(RequestKeys.of(LockKind.PATH, "t", one).lockKeys()).hasSize(RequestKeys.keyCountOf(one)).hasSize(4);
        assertThat(RequestKeys.of(LockKind.PATH, "t", siblings).lockKeys())
                .hasSize(RequestKeys.keyCountOf(siblings)).hasSize(6);
    }

    @Test
    void eachPathAndTheRootAndTheScopeHaveTheKeysTheyHaveOnTheirOwn() {
        List<LockPath> paths = Stream.of("/a/b", "/c").map(PATHS::normalize).toList();
        RequestKeys keys = RequestKeys.of(LockKind.PATH, "t", paths);

        assertThat(keys.path(0)).isEqualTo(key("/a/b"));
        assertThat(keys.path(1)).isEqualTo(key("/c"));
        assertThat(keys.root()).isEqualTo(key("/"));
        assertThat(keys.scope()).isEqualTo(LockKeys.scopeKey(LockKind.PATH, "t"));
        assertThat(RequestKeys.of(LockKind.PATH, "t", List.of(PATHS.normalize("/c"))).root()).isEqualTo(key("/"));
    }

    private static byte[] key(String path) {
        return LockKeys.lockKey(LockKind.PATH, "t", PATHS.normalize(path));
    }
}
