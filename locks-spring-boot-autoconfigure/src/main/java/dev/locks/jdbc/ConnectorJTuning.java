package dev.locks.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.mysql.cj.conf.PropertySet;
import com.mysql.cj.jdbc.JdbcConnection;
import org.springframework.util.ClassUtils;

/**
 * The MySQL Connector/J settings under which the server keeps the lock store's statements prepared.
 * By default Connector/J sends every execution as text, which MariaDB and MySQL parse again each
 * time: a grant is a statement of four to seven kilobytes on MariaDB (two to three before its locking
 * counts), and parsing it was a fifth of the server's work for the grant (BENCHMARKS.md, tenth pass).
 */
public final class ConnectorJTuning {

    /**
     * The settings, as JDBC URL parameters or a pool's data source properties. The SQL limit holds a
     * grant of two paths twenty levels deep; the cache size every statement shape of a busy
     * service (HikariCP recommends the same size, and a 2,048-character limit that would leave out
     * most grants). Put them on the JDBC URL, or give them to HikariCP with
     * {@code HikariConfig.addDataSourceProperty}.
     */
    public static final Map<String, String> RECOMMENDED = recommended();

    private static final boolean PRESENT = ClassUtils.isPresent("com.mysql.cj.jdbc.JdbcConnection",
            ConnectorJTuning.class.getClassLoader());

    private ConnectorJTuning() {
    }

    /**
     * The recommended settings that {@code connection} lacks, as {@code name=value}; none when the
     * connection is not Connector/J's.
     */
    static List<String> missing(Connection connection) throws SQLException {
        if (!PRESENT || !connection.isWrapperFor(JdbcConnection.class)) {
            return List.of();
        }
        PropertySet properties = connection.unwrap(JdbcConnection.class).getPropertySet();
        List<String> missing = new ArrayList<>();
        for (Map.Entry<String, String> setting : RECOMMENDED.entrySet()) {
            Object value = properties.getProperty(setting.getKey()).getValue();
            boolean enough = value instanceof Integer number ? number >= Integer.parseInt(setting.getValue())
                    : String.valueOf(value).equals(setting.getValue());
            if (!enough) {
                missing.add(setting.getKey() + "=" + setting.getValue());
            }
        }
        return missing;
    }

    private static Map<String, String> recommended() {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("useServerPrepStmts", "true");
        settings.put("cachePrepStmts", "true");
        settings.put("prepStmtCacheSqlLimit", "8192");
        settings.put("prepStmtCacheSize", "250");
        return Collections.unmodifiableMap(settings);
    }
}
