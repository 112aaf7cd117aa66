package dev.locks.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Runs the contenders' rounds in turn, so that a slow phase of a shared machine hits all of them
 * alike and their ratio stays meaningful. Each pass starts one contender later (A, B, C, B, C, A,
 * C, A, B, ...): in a fixed order each contender would always follow the same one and pay for
 * what it left behind (garbage to collect, the H2 store's background writes). Warm-up rounds are
 * run the same way and thrown away.
 */
final class Interleaved {

    private final Map<String, Supplier<Round>> contenders = new LinkedHashMap<>();

    private final int warmups;

    private final int rounds;

    private ServerCpu server = ServerCpu.NONE;

    Interleaved(int warmups, int rounds) {
        this.warmups = warmups;
        this.rounds = rounds;
    }

    /** Reads the server's CPU time around every round ({@link Round#serverCpuNanos}). */
    Interleaved measuring(ServerCpu server) {
        this.server = server;
        return this;
    }

    Interleaved add(String name, Supplier<Round> round) {
        contenders.put(name, round);
        return this;
    }

    Map<String, Result> run() {
        Map<String, Result> results = new LinkedHashMap<>();
        contenders.keySet().forEach(name -> results.put(name, new Result(new ArrayList<>())));
        List<Map.Entry<String, Supplier<Round>>> order = new ArrayList<>(contenders.entrySet());
        for (int i = 0; i < warmups + rounds; i++) {
            for (int k = 0; k < order.size(); k++) {
                Map.Entry<String, Supplier<Round>> contender = order.get((i + k) % order.size());
                long serverBefore = server.nanos();
                Round round = contender.getValue().get();
                long serverAfter = server.nanos();
                if (serverBefore != ServerCpu.UNKNOWN && serverAfter != ServerCpu.UNKNOWN) {
                    round = round.withServerCpu(serverAfter - serverBefore);
                }
                if (i >= warmups) {
                    results.get(contender.getKey()).rounds().add(round);
                }
            }
        }
        return results;
    }

    /** The measured rounds of one contender. */
    record Result(List<Round> rounds) {

        /** @return the median over rounds of operations per second */
        double medianPerSecond() {
            Samples rates = new Samples();
            rounds.forEach(r -> rates.add(Math.round(r.perSecond() * 1000)));
            return rates.median() / 1000.0;
        }

        /** @return the median over rounds of the calling threads' CPU time per operation */
        double medianCpuNanosPerOperation() {
            Samples cpu = new Samples();
            rounds.forEach(r -> cpu.add(Math.round(r.cpuNanosPerOperation())));
            return cpu.median();
        }

        /** @return the median over rounds of the server's CPU time per operation, or NaN if unknown */
        double medianServerCpuNanosPerOperation() {
            Samples cpu = new Samples();
            for (Round r : rounds) {
                double perOperation = r.serverCpuNanosPerOperation();
                if (Double.isNaN(perOperation)) {
                    return Double.NaN;
                }
                cpu.add(Math.round(perOperation));
            }
            return cpu.median();
        }

        /** @return every operation's latency of every measured round */
        Samples latencies() {
            Samples all = new Samples();
            rounds.forEach(r -> all.addAll(r.latencies()));
            return all;
        }
    }
}
