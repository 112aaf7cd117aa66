package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A path's ancestors and their count. */
class LockPathTest {

    private static final PathNormalizer PATHS = new PathNormalizer(true, 4000);

    @ParameterizedTest
    @ValueSource(strings = { "/", "/a", "/a/b", "/Shared/marketing/Dallas", "/d/s/s/s/s/s/s/s/s/s/s/s/s/s/s/s/s/s/s/p-7" })
    void theDepthIsTheNumberOfAncestors(String raw) {
        LockPath path = PATHS.normalize(raw);

        assertThat(path.depth()).isEqualTo(path.ancestors().size());
    }

    @Test
    void theAncestorsOfAPathAreItsPrefixesEndingBeforeASlashRootFirst() {
        assertThat(PATHS.normalize("/a/b/c").ancestors()).extracting(LockPath::value).containsExactly("/", "/a", "/a/b");
    }

    @Test
    void aFlatNameHasNoAncestorsWhateverItsSlashes() {
        LockPath name = LockPath.flat("nightly/export/job");

        assertThat(name.depth()).isZero();
        assertThat(name.ancestors()).isEmpty();
    }
}
