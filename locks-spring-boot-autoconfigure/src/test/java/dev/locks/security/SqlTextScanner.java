package dev.locks.security;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Checks that Java source builds SQL text only from trusted pieces, so that every value reaches
 * the database as a bound parameter. The rule, applied to every piece ({@code +} operand,
 * {@code append} argument) of SQL text:
 * <ul>
 * <li>a string or character literal; a conditional {@code (c ? a : b)} whose branches are allowed
 * pieces (the condition never reaches the text);</li>
 * <li>a table name from {@code LockTables} ({@code tables.held()}, {@code waiting()}, {@code node()},
 * {@code prefix()}): the prefix is held to {@code [A-Za-z_][A-Za-z0-9_]*}; an index name from it in
 * the dialect's hint, {@code dialect.readThrough(tables.keyIndex())} and {@code subtreeIndex()};</li>
 * <li>a dialect fragment: {@code dialect.now()}, {@code dialect.subtree()},
 * {@code dialect.plusMicros("column literal")};</li>
 * <li>a placeholder list: {@code placeholders(n)}, {@code String.join(",", Collections.nCopies(n, "(?,?)"))};</li>
 * <li>an {@code int} ({@code limit}, {@code query.limit()});</li>
 * <li>a release notice's origin tag, {@code origin.tag()}: {@code ReleaseOrigin} holds it to
 * sixteen of {@code [0-9a-f*]};</li>
 * <li>a variable of {@link #SQL_VARIABLES}, each of whose assignments in the file is itself checked
 * by this rule, or a parameter of {@link #SQL_PARAMETERS}, whose arguments are checked where the
 * method is called.</li>
 * </ul>
 * Anything else (a path, a tenant, a token, a time, a request) is a violation. SQL text is found
 * as: the text argument of {@code prepareStatement}, {@code execute*}, {@code addBatch} and of the
 * store's own SQL-taking methods; any {@code +} chain with a literal holding an SQL keyword; and
 * every {@code append} on a builder of {@link #SQL_BUILDERS}.
 */
final class SqlTextScanner {

    /** Local variables and fields that hold SQL text; their assignments are checked too. */
    static final Set<String> SQL_VARIABLES = Set.of("sql", "live", "filter", "rowFilter", "select", "waiters", "ids",
            "values", "COLUMN_LIST", "UNTIMED_COLUMN_LIST", "channel", "notifying", "SERIALISE", "INDEXED_PLANS", "COLUMNS", "where", "leave",
            "BOUND_CLOCK", "times", "BOUND_TIMES", "release", "dequeueSql", "deleteSql", "key",
            "trip", "grantIds", "byKey", "bySubtree", "lead");

    /** Builders whose every {@code append} adds SQL text. */
    static final Set<String> SQL_BUILDERS = Set.of("sql", "where");

    /**
     * Parameters and loop variables that carry SQL text or names: every caller passes a checked piece
     * (see {@link #SINKS}); {@code table} iterates over {@code tables.held()} and {@code tables.waiting()};
     * {@code statement} is a statement of the shipped schema script with the validated prefix.
     */
    static final Set<String> SQL_PARAMETERS = Set.of("table", "column", "modification", "prefix", "statement",
            "sqlPrefix", "sqlSuffix", "waitTable", "clock", "releasing", "held", "grantIds", "lockedRowIds", "until", "busyAt",
            "lockClause", "limit", "timeoutSeconds", "time");

    /** Statement methods are sinks only on statement receivers ({@code RetryTemplate.execute} is not SQL). */
    private static final Set<String> STATEMENT_RECEIVERS = Set.of("st", "ps", "stmt", "statement");

    private static final Set<String> STATEMENT_METHODS = Set.of("executeQuery", "executeUpdate", "execute", "addBatch");

    /** Methods whose arguments at the given indexes (0-based) are SQL text or table or column names. */
    static final Map<String, List<Integer>> SINKS = Map.ofEntries(Map.entry("prepareStatement", List.of(0)),
            Map.entry("prepareCall", List.of(0)), Map.entry("executeQuery", List.of(0)),
            Map.entry("executeUpdate", List.of(0)), Map.entry("execute", List.of(0)), Map.entry("addBatch", List.of(0)),
            Map.entry("modifyAndNotify", List.of(1)), Map.entry("select", List.of(1)), Map.entry("insert", List.of(1)),
            Map.entry("notifying", List.of(0)), Map.entry("plusMicros", List.of(0)), Map.entry("prepare", List.of(1)),
            Map.entry("appendBranches", List.of(2, 8)), Map.entry("renewalTrip", List.of(0, 1)),
            Map.entry("lockRowsOfGrants", List.of(0, 1)), Map.entry("extendRowsOfGrants", List.of(0, 1, 2, 3)),
            Map.entry("deleteExpired", List.of(0)), Map.entry("leaseOutlives", List.of(0)),
            Map.entry("exists", List.of(6)), Map.entry("onKey", List.of(5)), Map.entry("permitLimit", List.of(0)), Map.entry("busyAt", List.of(1)));

    private static final Pattern KEYWORD = Pattern.compile(
            "\\b(SELECT|INSERT|UPDATE|DELETE|MERGE|WHERE|FROM|VALUES|SET|UNION|LIMIT|ORDER BY|LISTEN|AND|IN)\\b");

    /**
     * Calls whose result may be SQL text: table names, dialect fragments, an int, and the store's
     * {@code valueRows} (placeholders only), {@code releaseSql} and {@code notifyingRelease}, whose
     * bodies this rule checks like any other SQL text.
     */
    private static final Set<String> FRAGMENT_CALLS = Set.of("tables.held()", "tables.waiting()", "tables.node()",
            "origin.tag()", "tables.prefix()", "dialect.now()", "now()", "dialect.subtree()", "query.limit()", "sql.toString()",
            "COLUMNS", "PathConflictQuery.COLUMNS", "dialect.keyParameter()", "valueRows(request,BOUND_TIMES)", "valueRows(request,\"\")",
            "valueRows(request,\", \"+dialect.blockTimes())",
            "dialect.pipelinedSerialise()", "dialect.indexedPlansLead(autoCommit)", "dialect.indexedPlansEnd(autoCommit)", "dialect.indexedPlansEnd(openTransaction)", "dialect.indexedPlansLead(openTransaction)", "dialect.blockOpening(tables,locks,release)", "dialect.blockClock()",
            "releaseSql(Duration.ZERO)", "releaseSql(keepFor)", "notifyingRelease()",
            "busyAt(request,\"c.now\")", "busyAt(request,clock)",
            "conflicts.permitLimit(clock)", "dialect.blockClosing()", "count.start()", "count.end()",
            "count.lockClause()", "COUNT_CONFLICTS", "IF_WAITED", "dialect.pipelinedEnd()", "dialect.blockTimes()",
            "plusMicros(now())", "plusMicros(\"clock_timestamp()\")", "lockRowsOfGrants(held,grantIds)",
            "dialect.deleteExpired(tables.held())",
            // the renewal's statements, built (and checked here) in LeaseRenewal.statementsFor
            "statementsFor(chunk)", "statementsFor(chunk).trip()", "statementsFor(chunk).renewedRows()", "sql.lockRows()",
            "sql.extendRows()",
            "extendRowsOfGrants(held,grantIds,\"renew_until\",\"renew_ids\")",
            "extendRowsOfGrants(held,grantIds,\"(SELECT until FROM c)\",null)",
            // a grant's text kept by shape: built by these methods, whose bodies this rule checks
            "shapes.text(shape,()->unlessConflictingSql(request,waitersBefore))",
            "shapes.text(shape,()->pipelinedSql(request,waitersBefore,releasing!=null))",
            "shapes.text(shape,()->blockSql(request,locks,waitersBefore,releasing!=null))",
            "clock(now)", "dialect.schemaCreationLock()", "liveRowsOfGrant()", "dialect.leaseOutlives(clock)",
            "dialect.leaseOutlives(clock(now))", "dialect.leaseOutlives(dialect.now())",
            "HELD_MAX", "PathConflictQuery.HELD_MAX", "UNDER_LIMIT", "selectList(selected,kind,waiting)",
            "dialect.readThrough(tables.keyIndex())", "dialect.readThrough(tables.subtreeIndex())");

    private record Token(String text, int line) {

        boolean literal() {
            return text.startsWith("\"") || text.startsWith("'");
        }

        boolean identifier() {
            return Character.isJavaIdentifierStart(text.charAt(0));
        }
    }

    private final List<String> violations = new ArrayList<>();

    private String file;

    private List<Token> tokens;

    /** Scans one source file; returns descriptions of the pieces that break the rule. */
    static List<String> scan(String fileName, String source) {
        SqlTextScanner scanner = new SqlTextScanner();
        scanner.file = fileName;
        scanner.tokens = tokenize(source);
        scanner.run();
        return scanner.violations;
    }

    private void run() {
        for (int i = 0; i < tokens.size(); i++) {
            Token t = tokens.get(i);
            if (t.identifier() && SINKS.containsKey(t.text()) && next(i, "(") && !declaration(i)
                    && (!STATEMENT_METHODS.contains(t.text()) || i > 1 && tokens.get(i - 1).text().equals(".")
                            && STATEMENT_RECEIVERS.contains(tokens.get(i - 2).text()))) {
                List<List<Token>> args = arguments(i + 1);
                for (int index : SINKS.get(t.text())) {
                    if (args.size() > index) {
                        checkExpression(args.get(index));
                    }
                    else if (!args.isEmpty() || !STATEMENT_METHODS.contains(t.text())) {
                        // a signature changed under the table above: the check would pass without looking
                        violations.add(file + ":" + t.line() + ": " + t.text() + " has no argument " + index
                                + " to check; SINKS is out of date");
                    }
                }
            }
            if (t.literal() && KEYWORD.matcher(t.text()).find()) {
                checkExpression(chainAround(i));
            }
            if (SQL_BUILDERS.contains(t.text()) && next(i, ".") && i + 2 < tokens.size() && tokens.get(i + 2).text().equals("append")) {
                for (int j = i + 2; j < tokens.size() && tokens.get(j).text().equals("append"); ) {
                    List<List<Token>> args = arguments(j + 1);
                    checkExpression(args.get(0));
                    j = closing(j + 1) + 2;
                }
            }
            if (t.identifier() && SQL_VARIABLES.contains(t.text()) && i + 2 < tokens.size()
                    && (tokens.get(i + 1).text().equals("=") && !tokens.get(i + 2).text().equals("=")
                            || tokens.get(i + 1).text().equals("+="))) {
                checkExpression(untilStatementEnd(i + 2));
            }
        }
    }

    private boolean declaration(int i) {
        // "String insert(Connection c, ...)" declares the method rather than calling it
        return i > 0 && tokens.get(i - 1).identifier() && !tokens.get(i - 1).text().equals("return")
                && !tokens.get(i - 1).text().equals("new");
    }

    private boolean next(int i, String text) {
        return i + 1 < tokens.size() && tokens.get(i + 1).text().equals(text);
    }

    /** The arguments of the call whose "(" is at {@code open}. */
    private List<List<Token>> arguments(int open) {
        List<List<Token>> args = new ArrayList<>();
        List<Token> current = new ArrayList<>();
        int depth = 0;
        for (int j = open + 1; j < tokens.size(); j++) {
            String s = tokens.get(j).text();
            if (depth == 0 && (s.equals(")") || s.equals(","))) {
                args.add(current);
                current = new ArrayList<>();
                if (s.equals(")")) {
                    break;
                }
                continue;
            }
            if (s.equals("(") || s.equals("[") || s.equals("{")) {
                depth++;
            }
            if (s.equals(")") || s.equals("]") || s.equals("}")) {
                depth--;
            }
            current.add(tokens.get(j));
        }
        return args;
    }

    private int closing(int open) {
        int depth = 0;
        for (int j = open; j < tokens.size(); j++) {
            String s = tokens.get(j).text();
            if (s.equals("(")) {
                depth++;
            }
            if (s.equals(")") && --depth == 0) {
                return j;
            }
        }
        return tokens.size() - 1;
    }

    private List<Token> untilStatementEnd(int from) {
        List<Token> expr = new ArrayList<>();
        int depth = 0;
        for (int j = from; j < tokens.size(); j++) {
            String s = tokens.get(j).text();
            if (depth == 0 && (s.equals(";") || s.equals(","))) {
                break;
            }
            if (s.equals("(") || s.equals("[") || s.equals("{")) {
                depth++;
            }
            if (s.equals(")") || s.equals("]") || s.equals("}")) {
                if (depth == 0) {
                    break;
                }
                depth--;
            }
            expr.add(tokens.get(j));
        }
        return expr;
    }

    /** The {@code +} chain that contains the literal at {@code at}, within its parentheses. */
    private List<Token> chainAround(int at) {
        int start = at;
        int depth = 0;
        while (start > 0) {
            String s = tokens.get(start - 1).text();
            if (s.equals(")") || s.equals("]")) {
                depth++;
            }
            else if (s.equals("(") || s.equals("[")) {
                if (depth == 0) {
                    break;
                }
                depth--;
            }
            else if (depth == 0 && (s.equals(";") || s.equals(",") || s.equals("=") || s.equals("{") || s.equals("}")
                    || s.equals("return") || s.equals("+="))) {
                break;
            }
            start--;
        }
        return untilStatementEnd(start);
    }

    /** Checks both branches of a top-level conditional, else splits at top-level {@code +} and checks each piece. */
    private void checkExpression(List<Token> expr) {
        int q = topLevel(expr, "?");
        int c = topLevel(expr, ":");
        if (q > 0 && c > q) {
            checkExpression(expr.subList(q + 1, c));
            checkExpression(expr.subList(c + 1, expr.size()));
            return;
        }
        List<Token> piece = new ArrayList<>();
        int depth = 0;
        for (Token t : expr) {
            String s = t.text();
            if (s.equals("(")) {
                depth++;
            }
            if (s.equals(")")) {
                depth--;
            }
            if (depth == 0 && s.equals("+")) {
                checkPiece(piece);
                piece = new ArrayList<>();
                continue;
            }
            piece.add(t);
        }
        checkPiece(piece);
    }

    private void checkPiece(List<Token> piece) {
        if (piece.isEmpty()) {
            return;
        }
        String text = join(piece);
        if (piece.size() == 1 && (piece.get(0).literal() || SQL_VARIABLES.contains(text) || SQL_PARAMETERS.contains(text)
                || text.equals("limit") || text.equals("null"))) {
            return;
        }
        if (text.matches("new StringBuilder\\(.*\\)")) {
            checkExpression(piece.subList(2, piece.size() - 1).stream().skip(1).toList());
            return;
        }
        if (text.startsWith("(") && text.endsWith(")") && closingOf(piece) == piece.size() - 1) {
            List<Token> inner = piece.subList(1, piece.size() - 1);
            int q = topLevel(inner, "?");
            int c = topLevel(inner, ":");
            if (q > 0 && c > q) {
                checkExpression(inner.subList(q + 1, c));
                checkExpression(inner.subList(c + 1, inner.size()));
            }
            else {
                checkExpression(inner);
            }
            return;
        }
        if (FRAGMENT_CALLS.contains(text)) {
            return;
        }
        if (text.matches("dialect\\.plusMicros\\(\"[\\w.]+\"\\)")
                || text.matches("dialect\\.notifying\\((sql|modification|releaseSql\\(Duration\\.ZERO\\)),channel,"
                        + "tables\\.waiting\\(\\),(origin|from),(false|true|lazyCommit&&autoCommit)\\)")) {
            return;
        }
        // the MySQL dialect's node-row builders, whose own bodies this rule checks: a count and a mode
        if (text.matches("(createNodes|lockedNodes)\\(tables,[\\w.()]+,(true|false)\\)")) {
            return;
        }
        if (text.matches("(SqlDialect\\.)?placeholders\\(.*\\)")) {
            return;
        }
        if (text.startsWith("String.join(\",\",Collections.nCopies(") && text.endsWith("))")) {
            // the repeated template is SQL text like any other; the count before it is an int
            int open = 0;
            while (!piece.get(open).text().endsWith("nCopies")) {
                open++;
            }
            List<Token> args = piece.subList(open + 2, piece.size() - 2);
            checkExpression(args.subList(topLevel(args, ",") + 1, args.size()));
            return;
        }
        String violation = file + ":" + piece.get(0).line() + ": SQL text takes `" + text + "`";
        if (!violations.contains(violation)) {
            violations.add(violation);
        }
    }

    private static int closingOf(List<Token> piece) {
        int depth = 0;
        for (int i = 0; i < piece.size(); i++) {
            String s = piece.get(i).text();
            if (s.equals("(")) {
                depth++;
            }
            if (s.equals(")") && --depth == 0) {
                return i;
            }
        }
        return -1;
    }

    private static int topLevel(List<Token> expr, String symbol) {
        int depth = 0;
        for (int i = 0; i < expr.size(); i++) {
            String s = expr.get(i).text();
            if (s.equals("(")) {
                depth++;
            }
            if (s.equals(")")) {
                depth--;
            }
            if (depth == 0 && s.equals(symbol)) {
                return i;
            }
        }
        return -1;
    }

    private static String join(List<Token> piece) {
        StringBuilder s = new StringBuilder();
        for (Token t : piece) {
            if (!s.isEmpty() && t.identifier() && Character.isJavaIdentifierPart(s.charAt(s.length() - 1))) {
                s.append(' ');
            }
            s.append(t.text());
        }
        return s.toString();
    }

    /** Java tokens without comments: literals (text blocks too), identifiers, numbers, symbols. */
    private static List<Token> tokenize(String src) {
        List<Token> out = new ArrayList<>();
        int line = 1;
        int i = 0;
        while (i < src.length()) {
            char c = src.charAt(i);
            if (c == '\n') {
                line++;
                i++;
            }
            else if (Character.isWhitespace(c)) {
                i++;
            }
            else if (src.startsWith("//", i)) {
                while (i < src.length() && src.charAt(i) != '\n') {
                    i++;
                }
            }
            else if (src.startsWith("/*", i)) {
                int end = src.indexOf("*/", i + 2);
                end = end < 0 ? src.length() : end + 2;
                line += (int) src.substring(i, end).chars().filter(ch -> ch == '\n').count();
                i = end;
            }
            else if (src.startsWith("\"\"\"", i)) {
                int end = src.indexOf("\"\"\"", i + 3);
                end = end < 0 ? src.length() : end + 3;
                out.add(new Token("\"" + src.substring(i + 3, end - 3).replace("\"", "'") + "\"", line));
                line += (int) src.substring(i, end).chars().filter(ch -> ch == '\n').count();
                i = end;
            }
            else if (c == '"' || c == '\'') {
                int j = i + 1;
                while (j < src.length() && src.charAt(j) != c) {
                    j += src.charAt(j) == '\\' ? 2 : 1;
                }
                out.add(new Token(src.substring(i, Math.min(j + 1, src.length())), line));
                i = j + 1;
            }
            else if (Character.isJavaIdentifierStart(c) || Character.isDigit(c)) {
                int j = i;
                while (j < src.length() && (Character.isJavaIdentifierPart(src.charAt(j)) || src.charAt(j) == '.'
                        && Character.isDigit(c))) {
                    j++;
                }
                out.add(new Token(src.substring(i, j), line));
                i = j;
            }
            else if (src.startsWith("+=", i)) {
                out.add(new Token("+=", line));
                i += 2;
            }
            else {
                out.add(new Token(String.valueOf(c), line));
                i++;
            }
        }
        return out;
    }
}
