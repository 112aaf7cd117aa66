package dev.locks;

import java.util.Collection;
import java.util.Iterator;

/**
 * How paths, names and tenants appear in exception messages and logs. Each is cut after
 * {@value #SHOWN_CHARS} characters and a request's paths after the first {@value #SHOWN_PATHS}, so
 * that a message stays small whatever the caller passed. Invisible and line-breaking characters
 * (controls, format characters such as U+200B or U+202E, line and paragraph separators, and
 * whitespace other than a plain space) are shown as <code>&#92;uXXXX</code>: two different paths never
 * print alike, and no path can start a forged log line or reorder the text around it. They stay
 * valid in paths; emoji need the zero-width joiner.
 */
public final class MessageText {

    /** The characters of one path or name shown; the rest is counted. */
    public static final int SHOWN_CHARS = 120;

    /** The paths of one request shown; the rest is counted. */
    public static final int SHOWN_PATHS = 5;

    /** The characters of a driver's reason shown; the whole stays in the cause. */
    public static final int SHOWN_REASON = 300;

    private MessageText() {
    }

    /**
     * @param text a path, name or tenant, possibly null
     * @return the text shortened and escaped; {@code "null"} for null
     */
    public static String of(String text) {
        if (text == null) {
            return "null";
        }
        String shown = text;
        if (text.length() > SHOWN_CHARS) {
            // never cut a surrogate pair in two: half of one would print as an escape
            int end = Character.isHighSurrogate(text.charAt(SHOWN_CHARS - 1)) ? SHOWN_CHARS - 1 : SHOWN_CHARS;
            shown = text.substring(0, end);
        }
        StringBuilder out = new StringBuilder(shown.length() + 16);
        shown.codePoints().forEach(cp -> {
            if (invisible(cp)) {
                for (char c : Character.toChars(cp)) {
                    out.append(String.format("\\u%04X", (int) c));
                }
            }
            else {
                out.appendCodePoint(cp);
            }
        });
        if (shown.length() < text.length()) {
            out.append("…(").append(text.length()).append(" chars)");
        }
        return out.toString();
    }

    /**
     * @param text a path, name or tenant, possibly null
     * @return {@link #of} in single quotes, or {@code null} unquoted
     */
    public static String quoted(String text) {
        return text == null ? "null" : "'" + of(text) + "'";
    }

    /**
     * @param paths the paths of one request
     * @return the first {@value #SHOWN_PATHS}, each as {@link #of} shows it, in brackets, and how many more
     *         there are: {@code [/a, /b, /c, /d, /e … and 251 more]}
     */
    public static String list(Collection<?> paths) {
        StringBuilder out = new StringBuilder("[");
        Iterator<?> it = paths.iterator();
        for (int i = 0; i < SHOWN_PATHS && it.hasNext(); i++) {
            out.append(i == 0 ? "" : ", ").append(of(String.valueOf(it.next())));
        }
        if (paths.size() > SHOWN_PATHS) {
            out.append(" … and ").append(paths.size() - SHOWN_PATHS).append(" more");
        }
        return out.append(']').toString();
    }

    /**
     * @param paths the paths of one request
     * @return the only path as {@link #of} shows it, or {@link #list} of several
     */
    public static String paths(Collection<?> paths) {
        return paths.size() == 1 ? of(String.valueOf(paths.iterator().next())) : list(paths);
    }

    /**
     * The reason a driver gives, for a message whose exception keeps the driver's as its cause: the
     * first line, which names the error, without the SQL statement some drivers append, whose size
     * grows with the request. Cut after {@value #SHOWN_REASON} characters.
     *
     * @param message a driver's exception message, possibly null
     * @return its first line, shortened
     */
    public static String firstLine(String message) {
        if (message == null) {
            return "null";
        }
        int end = message.indexOf('\n');
        String line = (end < 0 ? message : message.substring(0, end)).strip();
        if (line.length() > SHOWN_REASON) {
            int cut = Character.isHighSurrogate(line.charAt(SHOWN_REASON - 1)) ? SHOWN_REASON - 1 : SHOWN_REASON;
            line = line.substring(0, cut) + "…";
        }
        return end < 0 || end == message.length() - 1 ? line : line + " (more in the cause)";
    }

    private static boolean invisible(int cp) {
        if (cp == ' ') {
            return false;
        }
        return switch (Character.getType(cp)) {
            case Character.CONTROL, Character.FORMAT, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
                    Character.SPACE_SEPARATOR, Character.SURROGATE -> true;
            default -> Character.isWhitespace(cp);
        };
    }
}
