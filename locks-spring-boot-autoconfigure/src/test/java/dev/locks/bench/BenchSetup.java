package dev.locks.bench;

import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every benchmark shares: the contenders' names, how long rounds are (overridable with
 * {@code -Dlocks.bench.rounds=N} and {@code -Dlocks.bench.roundMillis=M}), and quiet logging so
 * that debug output does not compete for the CPU being measured.
 */
final class BenchSetup {

    static final String OURS = "locks";

    static final String SHEDLOCK = "ShedLock";

    static final String REGISTRY = "JdbcLockRegistry";

    static final int WARMUP_ROUNDS = Integer.getInteger("locks.bench.warmups", 2);

    static final int ROUNDS = Integer.getInteger("locks.bench.rounds", 8);

    static final Duration ROUND = Duration.ofMillis(Long.getLong("locks.bench.roundMillis", 1000));

    private BenchSetup() {
    }

    static void quietLogging() {
        Logger root = LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
        if (root instanceof ch.qos.logback.classic.Logger logback) {
            logback.setLevel(ch.qos.logback.classic.Level.WARN);
        }
    }
}
