package dev.locks.autoconfigure.quartz;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings under {@code locks.quartz}: which Quartz jobs run once per fire across the cluster.
 */
@ConfigurationProperties("locks.quartz")
public class LocksQuartzProperties {

    /** Whether to guard Quartz jobs annotated {@code @ClusterSingleton} (and those listed in {@code jobs}). */
    private boolean enabled = true;

    /**
     * Keys of Quartz jobs to guard even without {@code @ClusterSingleton} on their class: {@code group.name},
     * or {@code name} for the DEFAULT group.
     */
    private List<String> jobs = new ArrayList<>();

    /**
     * How long the marker of a fire stays after the fire was taken (or until the run ends, if later), so that
     * a node firing the same scheduled time late skips it. {@code @ClusterSingleton(lockAtLeastFor)} overrides
     * it per job.
     */
    private Duration fireMarkerRetention = Duration.ofMinutes(10);

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public List<String> getJobs() {
        return jobs;
    }

    public void setJobs(List<String> jobs) {
        this.jobs = jobs;
    }

    public Duration getFireMarkerRetention() {
        return fireMarkerRetention;
    }

    public void setFireMarkerRetention(Duration fireMarkerRetention) {
        this.fireMarkerRetention = fireMarkerRetention;
    }
}
