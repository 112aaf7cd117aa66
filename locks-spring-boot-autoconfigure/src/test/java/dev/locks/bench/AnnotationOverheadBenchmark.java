package dev.locks.bench;

import static dev.locks.bench.BenchSetup.ROUND;
import static dev.locks.bench.BenchSetup.ROUNDS;
import static dev.locks.bench.BenchSetup.WARMUP_ROUNDS;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

import dev.locks.LockRequest;
import dev.locks.LockService;
import dev.locks.annotation.PathLocked;
import dev.locks.aop.LockTestNodes;
import dev.locks.testing.TestDatabase;

/**
 * What the annotation layer adds to a lock: the same exclusive lock on a new path each call,
 * taken by {@code @PathLocked(paths = "#path")} on a proxied bean and by {@code LockService.call}
 * in the same context, in interleaved rounds. On H2, where a lock costs the least, so that the
 * interceptor's share (operation look-up, cached SpEL, the proxy) shows the most.
 */
class AnnotationOverheadBenchmark {

    private static final String CALL = "LockService.call";

    private static final String ANNOTATED = "@PathLocked";

    @BeforeAll
    static void quiet() {
        BenchSetup.quietLogging();
    }

    @Test
    void pathLockedCostsLittleMoreThanLockServiceCall() throws Exception {
        try (LockTestNodes nodes = new LockTestNodes(TestDatabase.H2)) {
            ConfigurableApplicationContext context = nodes.node("bench", Files.class);
            Files files = context.getBean(Files.class);
            LockService locks = context.getBean(LockService.class);
            AtomicLong seq = new AtomicLong();
            Map<String, Interleaved.Result> results = new Interleaved(WARMUP_ROUNDS, ROUNDS)
                    .add(CALL, () -> Load.run(1, ROUND, seq,
                            (t, n) -> locks.call(LockRequest.paths("/files/f-" + n).exclusive().build(), () -> n)))
                    .add(ANNOTATED, () -> Load.run(1, ROUND, seq, (t, n) -> files.touch("/files/f-" + n)))
                    .run();
            Interleaved.Result call = results.get(CALL);
            Interleaved.Result annotated = results.get(ANNOTATED);
            Results.section("@PathLocked against LockService.call, one thread, a new path each time ("
                    + TestDatabase.H2 + ")");
            // time per call: the inverse of the rates
            Results.compare("time per locked call, @PathLocked ÷ LockService.call",
                    Results.perSecond(annotated.medianPerSecond()), Results.perSecond(call.medianPerSecond()),
                    call.medianPerSecond() / annotated.medianPerSecond(), false, 1.10);
            Results.compare("client CPU per locked call, @PathLocked ÷ LockService.call",
                    Results.micros(annotated.medianCpuNanosPerOperation()),
                    Results.micros(call.medianCpuNanosPerOperation()),
                    annotated.medianCpuNanosPerOperation() / call.medianCpuNanosPerOperation(), false, Double.NaN);
        }
    }

    /** A bean whose method is locked by annotation: the proxy, the interceptor and the SpEL path. */
    static class Files {

        @PathLocked(paths = "#path")
        public int touch(String path) {
            return path.length();
        }
    }
}
