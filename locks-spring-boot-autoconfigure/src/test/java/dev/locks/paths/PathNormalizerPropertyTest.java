package dev.locks.paths;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

import org.junit.jupiter.api.Test;

import dev.locks.InvalidLockPathException;
import dev.locks.LockPath;
import dev.locks.PathNormalizer;

/**
 * The path normaliser against random inputs from a seeded generator (the seed is in every failure
 * message): it accepts exactly the paths DESIGN §1 allows, and what it returns is a canonical
 * path (NFC, no {@code //}, no trailing {@code /}, no dot segments) that it maps to itself.
 */
class PathNormalizerPropertyTest {

    private static final long SEED = Long.getLong("paths.seed", 20261123L);

    private static final int CASES = 20_000;

    private static final int MAX = 64;

    /** Pieces that make paths interesting: separators, dots, LIKE wildcards, quotes, case, Unicode. */
    private static final String[] PIECES = { "/", "/", "//", "a", "b", "B", ".", "..", "...", "%", "_", "!", "\\", "'",
            "\"", " ", ";", "-", "é", "e\u0301", "\u00C5", "A\u030A", "\u212B", "\u0130", "\u03A3", "\u00DF", "\uD83D\uDE00",
            "\u0000", "\t", "\n", "\u007F", "\u0085", "\u009F", "\uD800", "\uDC00", "\u200B", "\uFEFF", "0", "x/",
            "SELECT", "'; DROP TABLE locks_held; --" };

    private final PathNormalizer exact = new PathNormalizer(true, MAX);

    private final PathNormalizer folding = new PathNormalizer(false, MAX);

    @Test
    void acceptsExactlyTheValidPathsAndReturnsCanonicalOnes() {
        Random random = new Random(SEED);
        int valid = 0;
        for (int i = 0; i < CASES; i++) {
            String raw = randomPath(random);
            String why = reasonToReject(raw, exact);
            try {
                LockPath path = exact.normalize(raw);
                if (why != null) {
                    fail("case %d (seed %d): accepted %s although %s", i, SEED, show(raw), why);
                }
                valid++;
                assertCanonical(raw, path.value(), i);
            }
            catch (InvalidLockPathException ex) {
                if (why == null) {
                    fail("case %d (seed %d): rejected valid %s: %s", i, SEED, show(raw), ex.getMessage());
                }
                assertThat(ex.getMessage()).as("case %d names the reason", i).isNotBlank();
            }
        }
        // the generator must exercise both sides
        assertThat(valid).isBetween(CASES / 10, CASES - CASES / 10);
    }

    @Test
    void normalisingTwiceChangesNothingAndExtraSlashesDoNotMatter() {
        Random random = new Random(SEED + 1);
        for (int i = 0; i < CASES; i++) {
            String raw = randomPath(random);
            for (PathNormalizer n : List.of(exact, folding)) {
                LockPath once;
                try {
                    once = n.normalize(raw);
                }
                catch (InvalidLockPathException ex) {
                    continue;
                }
                assertThat(n.normalize(once.value()).value()).as("case %d idempotent for %s", i, show(raw))
                        .isEqualTo(once.value());
                String doubled = raw.replace("/", "//") + "/";
                if (doubled.length() <= MAX * 4) {
                    assertThat(n.normalize(doubled).value()).as("case %d slashes for %s", i, show(raw)).isEqualTo(once.value());
                }
            }
        }
    }

    @Test
    void foldingMakesCaseVariantsEqualAndKeepsThemApartOtherwise() {
        Random random = new Random(SEED + 2);
        for (int i = 0; i < CASES; i++) {
            String raw = randomPath(random);
            if (reasonToReject(raw, folding) != null || reasonToReject(raw.toUpperCase(Locale.ROOT), folding) != null) {
                continue;
            }
            String lower = folding.normalize(raw).value();
            assertThat(folding.normalize(raw.toUpperCase(Locale.ROOT)).value()).as("case %d %s", i, show(raw))
                    .isEqualTo(folding.normalize(lower.toUpperCase(Locale.ROOT)).value());
            assertThat(lower).isEqualTo(Normalizer.normalize(lower.toLowerCase(Locale.ROOT), Normalizer.Form.NFC));
        }
        assertThat(exact.normalize("/A").value()).isNotEqualTo(exact.normalize("/a").value());
        assertThat(folding.normalize("/A").value()).isEqualTo(folding.normalize("/a").value());
    }

    /** Letters whose case Java maps in surprising ways, and paths where the context would matter. */
    private static final List<String> CASE_SAMPLES = List.of("\u03C3", "\u03C2", "\u03A3", "\u0130", "i", "I",
            "\u0131", "\u00DF", "\u1E9E", "SS", "ss", "\uFB01", "FI", "fi", "\u212A", "k", "K", "\u00B5", "\u03BC",
            "\u039C", "\u017F", "s", "S", "\u01C5", "\u01C4", "\u01C6", "\u212B", "\u00E5", "\u00C5", "e\u0301",
            "\u00C9", "\u0398", "\u03D1", "\u03B8", "\u0392", "\u03D0", "\u03B2", "\u0412", "\u1C80",
            "\u0432", "\uD801\uDC00", "\uD801\uDC28", "\u039B\u039F\u0393\u039F\u03A3.TXT",
            "\u03BB\u03BF\u03B3\u03BF\u03C2.txt", "\u03BB\u03BF\u03B3\u03BF\u03C3.txt",
            "\u0395\u0393\u0393\u03A1\u0391\u03A6\u0391/\u039B\u039F\u0393\u039F\u03A3.TXT",
            "\u03B5\u03B3\u03B3\u03C1\u03B1\u03C6\u03B1/\u03BB\u03BF\u03B3\u03BF\u03C2.txt");

    @Test
    void foldedPathsAreEqualExactlyWhenEqualsIgnoreCaseSaysSo() {
        for (String a : CASE_SAMPLES) {
            for (String b : CASE_SAMPLES) {
                String first = Normalizer.normalize("/" + a, Normalizer.Form.NFC);
                String second = Normalizer.normalize("/" + b, Normalizer.Form.NFC);
                assertThat(folding.normalize(first).equals(folding.normalize(second)))
                        .as("%s and %s", show(first), show(second)).isEqualTo(first.equalsIgnoreCase(second));
            }
        }
    }

    @Test
    void canonicallyEquivalentSpellingsAreOnePath() {
        assertThat(exact.normalize("/caf\u00E9").value()).isEqualTo(exact.normalize("/cafe\u0301").value());
        assertThat(exact.normalize("/\u212B").value()).isEqualTo(exact.normalize("/\u00C5").value());
    }

    @Test
    void nullIsRejectedWithAnInvalidLockPathException() {
        assertThatThrownBy(() -> exact.normalize(null)).isInstanceOf(InvalidLockPathException.class).hasMessageContaining("null");
    }

    /**
     * The model of DESIGN §1, written independently of the normaliser: why {@code raw} must be
     * rejected, or null if it is a valid path.
     */
    private static String reasonToReject(String raw, PathNormalizer n) {
        if (raw.isEmpty()) {
            return "it is empty";
        }
        if (raw.charAt(0) != '/') {
            return "it is relative";
        }
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (Character.isISOControl(c)) {
                return "it has a control character";
            }
            if (Character.isHighSurrogate(c) && (i + 1 == raw.length() || !Character.isLowSurrogate(raw.charAt(i + 1)))) {
                return "it has an unpaired high surrogate";
            }
            if (Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(raw.charAt(i - 1)))) {
                return "it has an unpaired low surrogate";
            }
        }
        String text = Normalizer.normalize(raw, Normalizer.Form.NFC);
        if (!n.isCaseSensitive()) {
            // only lengths matter here, and folding one code point at a time keeps them
            text = text.toLowerCase(Locale.ROOT);
        }
        List<String> segments = new ArrayList<>();
        for (String s : text.split("/")) {
            if (s.equals(".") || s.equals("..")) {
                return "it has a dot segment";
            }
            if (!s.isEmpty()) {
                segments.add(s);
            }
        }
        int length = segments.isEmpty() ? 1 : segments.stream().mapToInt(s -> s.length() + 1).sum();
        if (length > n.getMaxLength()) {
            return "it is longer than " + n.getMaxLength();
        }
        return null;
    }

    private static void assertCanonical(String raw, String p, int i) {
        String about = "case " + i + " " + show(raw) + " -> " + show(p);
        assertThat(p).as(about).startsWith("/");
        assertThat(p).as(about).doesNotContain("//");
        assertThat(p.equals("/") || !p.endsWith("/")).as(about + " has no trailing /").isTrue();
        assertThat(Normalizer.isNormalized(p, Normalizer.Form.NFC)).as(about + " is NFC").isTrue();
        assertThat(p.length()).as(about).isLessThanOrEqualTo(MAX);
        for (String s : p.split("/")) {
            assertThat(s).as(about).isNotIn(".", "..");
        }
    }

    private static String randomPath(Random random) {
        StringBuilder s = new StringBuilder();
        if (random.nextInt(20) > 0) {
            s.append('/');
        }
        int pieces = random.nextInt(random.nextInt(10) == 0 ? 40 : 8);
        for (int i = 0; i < pieces; i++) {
            String piece = PIECES[random.nextInt(PIECES.length)];
            // most paths stay clean so that valid ones are common
            if (random.nextInt(4) > 0 && piece.chars().anyMatch(c -> Character.isISOControl(c) || Character.isSurrogate((char) c))
                    && !piece.equals("\uD83D\uDE00")) {
                piece = "c";
            }
            s.append(piece);
        }
        return s.toString();
    }

    private static String show(String s) {
        StringBuilder b = new StringBuilder("\"");
        s.codePoints().forEach(cp -> {
            if (cp < 0x20 || cp > 0x7E) {
                b.append(String.format("\\u%04X", cp));
            }
            else {
                b.appendCodePoint(cp);
            }
        });
        return b.append('"').toString();
    }
}
