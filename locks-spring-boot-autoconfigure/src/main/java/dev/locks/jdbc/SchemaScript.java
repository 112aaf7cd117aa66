package dev.locks.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The shipped schema scripts ({@code dev/locks/jdbc/schema-<dialect>.sql}), the same files Flyway or
 * Liquibase users copy, with {@code ${prefix}} replaced by the table prefix.
 */
final class SchemaScript {

    private SchemaScript() {
    }

    static String load(SqlDialect dialect, String prefix) {
        try (InputStream in = SchemaScript.class.getClassLoader().getResourceAsStream(dialect.schemaResource())) {
            if (in == null) {
                throw new IllegalStateException("Schema script " + dialect.schemaResource() + " is missing");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("${prefix}", prefix);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** Splits on {@code ;} at line ends and drops {@code --} comment lines. */
    static List<String> statements(String script) {
        List<String> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : script.split("\n")) {
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("--")) {
                continue;
            }
            current.append(line).append('\n');
            if (trimmed.endsWith(";")) {
                String sql = current.toString().strip();
                statements.add(sql.substring(0, sql.length() - 1));
                current.setLength(0);
            }
        }
        if (!current.toString().isBlank()) {
            statements.add(current.toString().strip());
        }
        return statements;
    }
}
