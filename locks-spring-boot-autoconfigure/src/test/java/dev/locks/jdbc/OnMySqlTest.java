package dev.locks.jdbc;

import org.junit.jupiter.api.Nested;

import dev.locks.testing.TestDatabase;

/** The engine's contract on MariaDB (the MySQL dialect's own run is {@link OnMySqlProtocolTest}). */
@ContractsOn(TestDatabase.MYSQL)
class OnMySqlTest {

    @Nested
    class PathSemantics extends PathSemanticsContract {
    }

    @Nested
    class Leases extends LeaseContract {
    }

    @Nested
    class CallersTransactions extends CallersTransactionContract {
    }

    @Nested
    class Waiting extends WaitingContract {
    }

    @Nested
    class HandOffs extends HandOffContract {
    }

    @Nested
    class Concurrency extends ConcurrencyContract {
    }

    @Nested
    class FairWaiting extends FairWaitingContract {
    }

    @Nested
    class QueryPlans extends QueryPlanContract {

        @Override
        protected void fill(java.sql.Statement st, String table, int rows) throws Exception {
            // MySQL and MariaDB name the recursion limit differently; each ignores the other's
            for (String limit : new String[] { "cte_max_recursion_depth", "max_recursive_iterations" }) {
                try {
                    st.execute("SET SESSION " + limit + " = " + (rows + 1));
                }
                catch (java.sql.SQLException unknownOnThisServer) {
                    // the other server's variable
                }
            }
            st.execute("INSERT INTO " + table + " (grant_id, owner_token, kind, tenant, path, lock_key, scope_key,"
                    + " lock_mode, permits, node, thread, acquired_at, expires_at)"
                    + " WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < " + rows + ")"
                    + " SELECT MD5(n), MD5(n), 'P', 'filler', CONCAT('/f/', n MOD 97, '/', n), UNHEX(SHA2(n, 256)),"
                    + " UNHEX(SHA2(CONCAT('s', n MOD 50), 256)), 'X', 0, 'n', 't', UTC_TIMESTAMP(6),"
                    + " UTC_TIMESTAMP(6) + INTERVAL 1 HOUR FROM seq");
            st.execute("ANALYZE TABLE " + table);
        }

        @Override
        protected void assertIndexed(java.util.List<String> plan) {
            for (String row : plan) {
                if (row.contains("table=" + prefix)) {
                    org.assertj.core.api.Assertions.assertThat(row).as("plan row").doesNotContain("type=ALL")
                            .doesNotContain("type=index ").doesNotContain("key=null");
                }
            }
            org.assertj.core.api.Assertions.assertThat(plan).anyMatch(r -> r.contains("table=" + prefix + "held"));
        }
    }

    /**
     * The conflict count is a locking read here, so its plan decides which rows a grant locks. With a
     * handful of live grants, the common case, MariaDB 10.11 preferred scanning the table to looking
     * up a path's keys: every grant then locked every live grant's row and waited for any grant or
     * release still being written (BENCHMARKS.md, twenty-first pass).
     */
    @Nested
    class SmallTableQueryPlans extends QueryPlans {

        @Override
        protected int fillerRows() {
            return 7;
        }
    }

    @Nested
    class RowLockWaits extends RowLockWaitContract {
    }
}
