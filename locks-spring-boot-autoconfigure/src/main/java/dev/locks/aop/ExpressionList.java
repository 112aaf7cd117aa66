package dev.locks.aop;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Splits an annotation attribute such as {@code "#src, #dst"} into its SpEL expressions. Only
 * top-level commas separate: a comma inside a string literal ({@code '/a,b'}), a method call
 * ({@code #p.sub(1, 2)}), an index, a list literal ({@code {'/a', '/b'}}) or a selection belongs to
 * the expression.
 */
final class ExpressionList {

    private ExpressionList() {
    }

    /**
     * @param attribute the attribute's text
     * @return the trimmed expressions, in order; an empty part (as in {@code "#a,,#b"}) is kept as an
     *         empty string so that the caller can reject it
     * @throws IllegalArgumentException if quotes or brackets are not balanced
     */
    static List<String> split(String attribute) {
        List<String> parts = new ArrayList<>();
        Deque<Character> open = new ArrayDeque<>();
        char quote = 0;
        int start = 0;
        for (int i = 0; i < attribute.length(); i++) {
            char c = attribute.charAt(i);
            if (quote != 0) {
                // SpEL escapes a quote inside a literal by doubling it: 'it''s' stays one literal
                if (c == quote) {
                    quote = 0;
                }
                continue;
            }
            switch (c) {
                case '\'', '"' -> quote = c;
                case '(', '[', '{' -> open.push(c);
                case ')', ']', '}' -> {
                    if (open.isEmpty() || open.pop() != opening(c)) {
                        throw new IllegalArgumentException("unbalanced '" + c + "' at position " + i);
                    }
                }
                case ',' -> {
                    if (open.isEmpty()) {
                        parts.add(attribute.substring(start, i).strip());
                        start = i + 1;
                    }
                }
                default -> {
                }
            }
        }
        if (quote != 0) {
            throw new IllegalArgumentException("unterminated string literal (missing " + quote + ")");
        }
        if (!open.isEmpty()) {
            throw new IllegalArgumentException("unclosed '" + open.peek() + "'");
        }
        parts.add(attribute.substring(start).strip());
        return parts;
    }

    private static char opening(char closing) {
        return switch (closing) {
            case ')' -> '(';
            case ']' -> '[';
            default -> '{';
        };
    }
}
