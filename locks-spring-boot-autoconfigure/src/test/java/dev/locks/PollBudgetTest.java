package dev.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

class PollBudgetTest {

    @Test
    void manyThreadsTogetherTakeNoMoreSlotsThanTheRateAllows() throws Exception {
        PollBudget budget = new PollBudget(50);
        AtomicInteger polls = new AtomicInteger();
        long end = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            Thread t = new Thread(() -> {
                try {
                    while (budget.await(end)) {
                        polls.incrementAndGet();
                    }
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        // 50 per second for one second, plus the slot free at the start
        assertThat(polls.get()).isBetween(40, 52);
    }
}
