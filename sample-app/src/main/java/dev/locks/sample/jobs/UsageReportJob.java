package dev.locks.sample.jobs;

import org.quartz.DisallowConcurrentExecution;
import org.quartz.Job;
import org.quartz.JobExecutionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.locks.annotation.ClusterSingleton;
import dev.locks.sample.files.FileRepository;

/**
 * The usage report per customer. Every node schedules it in its own in-memory Quartz store; the
 * starter's trigger listener lets exactly one node run each scheduled fire.
 */
@ClusterSingleton(name = "usage-report")
@DisallowConcurrentExecution
public class UsageReportJob implements Job {

    private static final Logger log = LoggerFactory.getLogger(UsageReportJob.class);

    private final FileRepository files;

    private final UsageReports reports;

    public UsageReportJob(FileRepository files, UsageReports reports) {
        this.files = files;
        this.reports = reports;
    }

    @Override
    public void execute(JobExecutionContext context) {
        var usage = files.usage();
        reports.record(context.getScheduledFireTime().toInstant(), usage);
        usage.forEach(u -> log.info("Usage of {}: {} files, {} bytes", u.customer(), u.files(), u.bytes()));
    }
}
