package dev.locks.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * SQL is parameterised everywhere in the JDBC store: the text of every statement is built only
 * from literals, table names, dialect fragments, placeholder lists and integers (the rule is
 * spelled out on {@link SqlTextScanner}); every value is bound. The scanner is shown to catch the
 * usual ways of getting this wrong.
 */
class ParameterisedSqlTest {

    @Test
    void theJdbcStoreBuildsSqlOnlyFromTrustedPieces() throws Exception {
        List<String> violations = new ArrayList<>();
        int files = 0;
        try (Stream<Path> sources = Files.list(Path.of("src/main/java/dev/locks/jdbc"))) {
            // SchemaScript only splits the shipped schema file into statements: no value ever enters it
            for (Path file : sources.filter(p -> p.toString().endsWith(".java") && !p.endsWith("SchemaScript.java"))
                    .sorted().toList()) {
                files++;
                violations.addAll(SqlTextScanner.scan(file.getFileName().toString(), Files.readString(file)));
            }
        }
        assertThat(files).isGreaterThanOrEqualTo(10);
        assertThat(violations).isEmpty();
    }

    @Test
    void aCheckedCallWithoutTheArgumentItsTableNamesIsCaught() {
        // exists(...)'s lock clause is its seventh argument: a call with fewer means the table is out of date
        assertThat(SqlTextScanner.scan("Stale.java", """
                class Stale {
                    boolean f(Connection c) throws Exception {
                        return conflicts.exists(c, keys, now, owner, false);
                    }
                }
                """)).singleElement().asString().contains("Stale.java:3").contains("out of date");
    }

    @Test
    void aValueConcatenatedIntoSqlIsCaught() {
        assertThat(SqlTextScanner.scan("Bad.java", """
                class Bad {
                    void f(Connection c, String path) throws Exception {
                        c.prepareStatement("SELECT * FROM " + tables.held() + " WHERE path = '" + path + "'");
                    }
                }
                """)).singleElement().asString().contains("path").contains("Bad.java:3");
    }

    @Test
    void aValueSmuggledThroughASqlVariableIsCaught() {
        assertThat(SqlTextScanner.scan("Bad.java", """
                class Bad {
                    void f(Connection c, LockRequest request) throws Exception {
                        String filter = " AND tenant = '" + request.tenant() + "'";
                        c.prepareStatement("SELECT id FROM t WHERE 1 = 1" + filter);
                    }
                }
                """)).singleElement().asString().contains("request.tenant()");
    }

    @Test
    void aValueAppendedToASqlBuilderIsCaught() {
        assertThat(SqlTextScanner.scan("Bad.java", """
                class Bad {
                    void f(HolderQuery query) {
                        StringBuilder sql = new StringBuilder("SELECT id FROM t");
                        sql.append(" WHERE node = '").append(query.node()).append('\\'');
                    }
                }
                """)).singleElement().asString().contains("query.node()");
    }

    @Test
    void aValueAppendedToAWhereClauseBuilderIsCaught() {
        assertThat(SqlTextScanner.scan("Bad.java", """
                class Bad {
                    void f(HolderQuery query) {
                        StringBuilder where = new StringBuilder(" WHERE expires_at > ?");
                        where.append(" AND tenant = ").append(query.tenant());
                    }
                }
                """)).singleElement().asString().contains("query.tenant()");
    }

    @Test
    void aValueInAConditionalBranchOrAnExecuteCallIsCaught() {
        assertThat(SqlTextScanner.scan("Bad.java", """
                class Bad {
                    void f(Statement st, boolean b, String owner) throws Exception {
                        st.execute(b ? "DELETE FROM t" : "DELETE FROM t WHERE owner = " + owner);
                        st.executeQuery(owner);
                    }
                }
                """)).containsExactly("Bad.java:3: SQL text takes `owner`", "Bad.java:4: SQL text takes `owner`");
    }

    @Test
    void aValueInARepeatedRowTemplateIsCaught() {
        assertThat(SqlTextScanner.scan("Bad.java", """
                class Bad {
                    void f(Connection c, LockRequest request, int n) throws Exception {
                        c.prepareStatement("INSERT INTO t VALUES " + String.join(",", Collections.nCopies(n,
                                "(?, '" + request.tenant() + "')")));
                    }
                }
                """)).singleElement().asString().contains("request.tenant()");
    }

    @Test
    void placeholdersTableNamesAndDialectFragmentsPass() {
        assertThat(SqlTextScanner.scan("Good.java", """
                class Good {
                    void f(Connection c, List<Grant> chunk, int limit, boolean shared) throws Exception {
                        String ids = placeholders(chunk.size());
                        c.prepareStatement("UPDATE " + tables.held() + " SET expires_at = ? WHERE grant_id IN (" + ids
                                + ") AND expires_at > " + dialect.now() + (shared ? " AND lock_mode = 'X'" : "")
                                + " LIMIT " + limit);
                    }
                }
                """)).isEmpty();
    }
}
