package dev.locks.sample.jobs;

import java.time.Duration;
import java.time.Instant;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

import dev.locks.annotation.ClusterSingleton;
import dev.locks.sample.files.FileRepository;

/**
 * Empties the trash. Every node schedules it; {@code @ClusterSingleton} lets one node run each tick,
 * and {@code lockAtLeastFor} keeps nodes whose clocks fire a little later from running it again.
 */
@Component
public class TrashCleanup {

    private static final Logger log = LoggerFactory.getLogger(TrashCleanup.class);

    private final FileRepository files;

    private final Duration keep;

    public TrashCleanup(FileRepository files, @Value("${sample.trash-retention:30s}") Duration keep) {
        this.files = files;
        this.keep = keep;
    }

    @Scheduled(fixedRateString = "${sample.trash-cleanup-rate:20s}")
    @ClusterSingleton(name = "trash-cleanup", lockAtMostFor = "1m", lockAtLeastFor = "10s")
    public void emptyTrash() {
        int purged = files.emptyTrash(Instant.now().minus(keep));
        log.info("Emptied the trash: {} entries purged", purged);
    }
}
