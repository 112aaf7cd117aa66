package dev.locks.sample.jobs;

import org.quartz.CronScheduleBuilder;
import org.quartz.JobBuilder;
import org.quartz.JobDetail;
import org.quartz.Trigger;
import org.quartz.TriggerBuilder;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The usage report's Quartz schedule. A cron trigger gives every node the same fire times, which is
 * what lets the starter recognise one fire across the cluster.
 */
@Configuration(proxyBeanMethods = false)
public class QuartzJobs {

    @Bean
    JobDetail usageReportJob() {
        return JobBuilder.newJob(UsageReportJob.class).withIdentity("usage-report").storeDurably().build();
    }

    @Bean
    Trigger usageReportTrigger(JobDetail usageReportJob, @Value("${sample.usage-report-cron:0/30 * * * * ?}") String cron) {
        return TriggerBuilder.newTrigger().forJob(usageReportJob).withIdentity("usage-report")
                .withSchedule(CronScheduleBuilder.cronSchedule(cron).withMisfireHandlingInstructionDoNothing()).build();
    }
}
