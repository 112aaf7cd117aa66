package dev.locks.jdbc;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

import org.springframework.jdbc.core.RowCallbackHandler;

/**
 * Reads the answers of an execution of several statements (a pipelined grant or renewal on
 * PostgreSQL, a compound statement on MariaDB): every result set in statement order, past the update
 * counts in between, so that an error of a later statement surfaces too.
 */
final class StatementResults {

    /** Reads one row of a result set; {@code n} numbers the execution's result sets from 0. */
    @FunctionalInterface
    interface RowReader {
        void read(int n, ResultSet rs) throws SQLException;
    }

    private StatementResults() {
    }

    /**
     * Runs {@code ps}, a statement led by {@code lead} ({@link SqlDialect#indexedPlansLead}) unless that is
     * empty, and hands every row of the led statement's result set to {@code rows}.
     */
    static void readLed(String lead, PreparedStatement ps, RowCallbackHandler rows) throws SQLException {
        if (lead.isEmpty()) {
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.processRow(rs);
                }
            }
            return;
        }
        read(ps, (n, rs) -> {
            if (n == 1) {
                rows.processRow(rs);
            }
        });
    }

    /** Runs {@code ps} and hands every row of its result sets to {@code reader}. */
    static void read(PreparedStatement ps, RowReader reader) throws SQLException {
        int n = 0;
        for (boolean isResultSet = ps.execute(); isResultSet || ps.getUpdateCount() != -1;
                isResultSet = ps.getMoreResults()) {
            if (isResultSet) {
                try (ResultSet rs = ps.getResultSet()) {
                    while (rs.next()) {
                        reader.read(n, rs);
                    }
                }
                n++;
            }
        }
    }
}
