package dev.locks.security;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import javax.sql.DataSource;

/** Every row of the lock tables under a prefix, to show that a refused request changed nothing. */
final class StoreSnapshot {

    private StoreSnapshot() {
    }

    static List<String> of(DataSource ds, String prefix) throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Connection c = ds.getConnection()) {
            for (String table : List.of("held", "wait", "node")) {
                try (Statement st = c.createStatement();
                        ResultSet rs = st.executeQuery("SELECT * FROM " + prefix + table)) {
                    ResultSetMetaData meta = rs.getMetaData();
                    while (rs.next()) {
                        StringBuilder row = new StringBuilder(table).append(':');
                        for (int i = 1; i <= meta.getColumnCount(); i++) {
                            Object v = rs.getObject(i);
                            row.append(v instanceof byte[] b ? Arrays.toString(b) + new String(b, java.nio.charset.StandardCharsets.UTF_8) : String.valueOf(v)).append('|');
                        }
                        rows.add(row.toString());
                    }
                }
                catch (SQLException ex) {
                    if (!table.equals("node")) {
                        throw ex;
                    }
                    // PostgreSQL serialises with advisory locks and has no node table
                    if (!c.getAutoCommit()) {
                        c.rollback();
                    }
                }
            }
        }
        rows.sort(null);
        return rows;
    }
}
