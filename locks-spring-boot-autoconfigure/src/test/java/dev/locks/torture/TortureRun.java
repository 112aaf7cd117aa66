package dev.locks.torture;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The torture run as a test, one per database; run by the {@code torture} Maven profile only (its
 * name keeps it out of the default build). {@code -Dtorture.databases=mysql} runs one database,
 * {@code -Dtorture.seconds=600} the long form.
 */
class TortureRun {

    @Test
    void mariaDbKeepsMutualExclusionFencingAndLivenessUnderFaults() throws Exception {
        runOn("mysql");
    }

    @Test
    void postgresKeepsMutualExclusionFencingAndLivenessUnderFaults() throws Exception {
        runOn("postgresql");
    }

    @Test
    void theCheckerCatchesALockThatDoesNotExclude() throws Exception {
        List<String> selected = Arrays.asList(System.getProperty("torture.databases", "mysql,postgresql").split(","));
        String dialect = selected.get(0);
        TortureHarness.Report report = TortureHarness.run(TortureHarness.Config.fromSystemProperties(dialect).sabotaged(20));
        System.out.println(report.text());
        assertThat(report.check().figures().getOrDefault("violations", 0L)).as(report.text()).isGreaterThan(0L);
        assertThat(report.check().violations()).anyMatch(v -> v.contains("overlap in database time"));
        assertThat(report.rowHistory()).as("the audit explains the violating grants").anyMatch(h -> h.contains(" I id "));
        assertThat(report.rowHistory()).as("by its own order, the shadow tenant's rows coexisted with the real ones")
                .anyMatch(h -> h.endsWith("they coexisted"));
    }

    private static void runOn(String dialect) throws Exception {
        List<String> selected = Arrays.asList(System.getProperty("torture.databases", "mysql,postgresql").split(","));
        Assumptions.assumeTrue(selected.contains(dialect), dialect + " not selected by -Dtorture.databases");
        TortureHarness.Report report = TortureHarness.run(TortureHarness.Config.fromSystemProperties(dialect));
        System.out.println(report.text());
        assertThat(report.check().violations()).as(report.text()).isEmpty();
        assertThat(report.expectations()).as(report.text()).allMatch(TortureHarness.Expectation::met);
        // a run that did next to nothing would prove nothing; the bar is low because the machine may be shared
        int seconds = report.config().seconds();
        assertThat(report.check().figures().get("sectionsHeld")).as("sections held").isGreaterThan(5L * seconds);
    }
}
