package dev.locks.sample.jobs;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

import dev.locks.sample.files.FileRepository;

/** Keeps the usage reports in table {@code usage_report}, one row per customer and fire time. */
@Component
public class UsageReports {

    private final JdbcTemplate jdbc;

    public UsageReports(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    void record(Instant fireTime, List<FileRepository.Usage> usage) {
        for (FileRepository.Usage u : usage) {
            jdbc.update("INSERT INTO usage_report (fire_time, customer, files, bytes) VALUES (?, ?, ?, ?)",
                    Timestamp.from(fireTime), u.customer(), u.files(), u.bytes());
        }
    }
}
