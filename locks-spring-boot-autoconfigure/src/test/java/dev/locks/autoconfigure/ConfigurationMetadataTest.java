package dev.locks.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The configuration processor's metadata, which IDEs use to complete and explain {@code locks.*}
 * properties: every property is there with a description, and defaults are shown.
 */
class ConfigurationMetadataTest {

    private static String json;

    @BeforeAll
    static void read() throws Exception {
        try (InputStream in = ConfigurationMetadataTest.class.getClassLoader()
                .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("META-INF/spring-configuration-metadata.json generated at build time").isNotNull();
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static Map<String, Object> property(String name) {
        List<Map<String, Object>> found = JsonPath.read(json, "$.properties[?(@.name == '" + name + "')]");
        assertThat(found).as(name).hasSize(1);
        return found.get(0);
    }

    @Test
    void everyPropertyHasADescription() {
        for (String name : List.of("locks.enabled", "locks.node-id", "locks.default-tenant", "locks.default-lease",
                "locks.default-wait", "locks.renew-interval", "locks.backoff.initial", "locks.backoff.multiplier",
                "locks.backoff.max", "locks.backoff.jitter", "locks.paths.case-sensitive", "locks.paths.max-length",
                "locks.jdbc.table-prefix", "locks.jdbc.initialize-schema", "locks.jdbc.data-source-bean", "locks.jdbc.dialect",
                "locks.aop.order", "locks.purge-interval", "locks.log.slow-wait")) {
            assertThat((String) property(name).get("description")).as(name).isNotBlank();
        }
    }

    @Test
    void theDefaultLeaseIsDescribedWithItsDefault() {
        Map<String, Object> lease = property("locks.default-lease");
        assertThat(lease.get("type")).isEqualTo("java.time.Duration");
        assertThat(lease.get("defaultValue")).isEqualTo("30s");
        assertThat((String) lease.get("description")).contains("Lease");
    }

    @Test
    void theAdvisorOrderShowsItsDefault() {
        assertThat(property("locks.aop.order").get("defaultValue")).isEqualTo(2147482647);
    }

    @Test
    void theLockDataSourceCompletesToDataSourceBeans() {
        List<String> providers = JsonPath.read(json,
                "$.hints[?(@.name == 'locks.jdbc.data-source-bean')].providers[*].name");
        assertThat(providers).containsExactly("spring-bean-reference");
    }
}
