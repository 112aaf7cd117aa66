package dev.locks.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.locks.LockKind;
import dev.locks.LockPath;
import dev.locks.PathNormalizer;

/**
 * The conflict query of every acquisition must reach its rows through indexes, never by scanning
 * the lock tables: checked with EXPLAIN on 50,000 live rows, and on MySQL/MariaDB on a handful too.
 */
abstract class QueryPlanContract extends LockServiceContract {

    /**
     * How many live rows of other tenants the grants' table holds while the plans are read; the
     * waiting table holds a tenth of them.
     */
    protected int fillerRows() {
        return 50_000;
    }

    /** Inserts filler rows of other tenants in bulk, and refreshes the planner's statistics. */
    protected abstract void fill(Statement st, String table, int rows) throws Exception;

    /** Asserts that a plan reads the lock tables through indexes only. */
    protected abstract void assertIndexed(List<String> plan);

    @BeforeAll
    void fillTables() throws Exception {
        try (Connection c = mainPool().getConnection(); Statement st = c.createStatement()) {
            fill(st, prefix + "held", fillerRows());
            fill(st, prefix + "wait", Math.max(1, fillerRows() / 10));
            if (!c.getAutoCommit()) {
                c.commit();
            }
        }
    }

    @Test
    void anExclusiveRequestUsesIndexesForAncestorsAndSubtree() throws Exception {
        assertIndexed(plan(List.of("/Shared/marketing/Dallas"), false, PathConflictQuery.ALL_WAITERS));
    }

    @Test
    void aSharedMultiPathRequestQueuedBehindOthersUsesIndexes() throws Exception {
        assertIndexed(plan(List.of("/src/a/b", "/dst/c"), true, 5));
    }

    @Test
    void aDeepPathUsesIndexes() throws Exception {
        StringBuilder deep = new StringBuilder();
        for (int i = 0; i < 20; i++) {
            deep.append("/level").append(i);
        }
        assertIndexed(plan(List.of(deep.toString()), false, PathConflictQuery.NO_WAITERS));
    }

    private List<String> plan(List<String> rawPaths, boolean shared, long waitersBefore) throws Exception {
        PathNormalizer normalizer = new PathNormalizer(true, 4000);
        List<LockPath> paths = LockPath.merge(rawPaths.stream().map(normalizer::normalize).toList());
        PathConflictQuery query = new PathConflictQuery(locks.store().dialect(), new LockTables(prefix));
        try (Connection c = mainPool().getConnection()) {
            List<String> plan = query.explain(c, LockKind.PATH, tenant, paths, Instant.now(), "0".repeat(32), shared,
                    waitersBefore);
            assertThat(plan).isNotEmpty();
            return plan;
        }
    }
}
