package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** How paths, names and tenants are printed: short, and with nothing invisible left unescaped. */
class MessageTextTest {

    @Test
    void aLongPathIsCutAfter120CharactersAndItsLengthIsGiven() {
        String path = "/" + "a".repeat(499);

        assertThat(MessageText.of(path)).isEqualTo(path.substring(0, 120) + "…(500 chars)");
    }

    @Test
    void aCutNeverSplitsASurrogatePair() {
        String path = "/" + "a".repeat(118) + "\uD83D\uDE00" + "b".repeat(10);

        assertThat(MessageText.of(path)).isEqualTo("/" + "a".repeat(118) + "…(" + path.length() + " chars)");
    }

    @Test
    void ofManyPathsTheFirstFiveAreNamedAndTheRestCounted() {
        List<String> paths = new ArrayList<>();
        for (int i = 1; i <= 1000; i++) {
            paths.add("/p" + i);
        }

        assertThat(MessageText.list(paths)).isEqualTo("[/p1, /p2, /p3, /p4, /p5 … and 995 more]");
    }

    @Test
    void fivePathsOrFewerAreAllNamed() {
        assertThat(MessageText.list(List.of("/a", "/b", "/c", "/d", "/e"))).isEqualTo("[/a, /b, /c, /d, /e]");
        assertThat(MessageText.paths(List.of("/only"))).isEqualTo("/only");
    }

    @Test
    void invisibleAndLineBreakingCharactersAreEscaped() {
        assertThat(MessageText.of("/a\u200B")).isEqualTo("/a\\u200B");
        assertThat(MessageText.of("/a\u2028b\u2029c")).isEqualTo("/a\\u2028b\\u2029c");
        assertThat(MessageText.of("/\u202Etxt.exe")).isEqualTo("/\\u202Etxt.exe");
        assertThat(MessageText.of("/a\tb\u00A0c\u3000d\ne")).isEqualTo("/a\\u0009b\\u00A0c\\u3000d\\u000Ae");
        assertThat(MessageText.of("/\uFEFFa\u00ADb")).isEqualTo("/\\uFEFFa\\u00ADb");
        assertThat(MessageText.of("/\uDB40\uDC01x")).isEqualTo("/\\uDB40\\uDC01x");
    }

    @Test
    void visibleTextPlainSpacesAndEmojiAreShownAsTheyAre() {
        String path = "/Shared/Q3 report ½ €/caf\u00E9/\u03BB\u03CC\u03B3\u03BF\u03C2/\uD83D\uDE00";

        assertThat(MessageText.of(path)).isEqualTo(path);
        assertThat(MessageText.quoted("acme")).isEqualTo("'acme'");
        assertThat(MessageText.quoted(null)).isEqualTo("null");
    }

    @Test
    void ofADriversMessageOnlyTheFirstLineIsShownAndNotTheStatementAfterIt() {
        String h2 = "General error: \"java.lang.StackOverflowError\"; SQL statement:\nINSERT INTO held VALUES "
                + "(?,?),".repeat(10_000);

        assertThat(MessageText.firstLine(h2))
                .isEqualTo("General error: \"java.lang.StackOverflowError\"; SQL statement: (more in the cause)");
        assertThat(MessageText.firstLine("x".repeat(1000))).isEqualTo("x".repeat(300) + "…");
        assertThat(MessageText.firstLine("Connection refused")).isEqualTo("Connection refused");
    }

    @Test
    void theJoinerInsideAnEmojiIsEscapedSoThatTwoSpellingsPrintApart() {
        assertThat(MessageText.of("/\uD83D\uDC69\u200D\uD83D\uDCBB")).isEqualTo("/\uD83D\uDC69\\u200D\uD83D\uDCBB");
    }
}
