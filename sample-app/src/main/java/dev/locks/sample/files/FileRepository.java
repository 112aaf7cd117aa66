package dev.locks.sample.files;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.stereotype.Repository;

/** Files and folders of every customer, in table {@code file_entry}. Deleted entries wait in the trash. */
@Repository
public class FileRepository {

    private static final RowMapper<FileEntry> ENTRY = (rs, n) -> new FileEntry(rs.getString("path"),
            rs.getBoolean("folder"), rs.getLong("size"), rs.getTimestamp("modified").toInstant());

    private final JdbcTemplate jdbc;

    public FileRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    public Optional<FileEntry> find(String customer, String path) {
        return jdbc.query("SELECT path, folder, size, modified FROM file_entry WHERE customer = ? AND path = ?"
                + " AND deleted_at IS NULL", ENTRY, customer, path).stream().findFirst();
    }

    public List<FileEntry> children(String customer, String folder) {
        return jdbc.query("SELECT path, folder, size, modified FROM file_entry WHERE customer = ? AND parent = ?"
                + " AND deleted_at IS NULL ORDER BY path", ENTRY, customer, folder);
    }

    /** The entry and everything below it, parents before children. */
    public List<FileEntry> subtree(String customer, String path) {
        return jdbc.query("SELECT path, folder, size, modified FROM file_entry WHERE customer = ?"
                + " AND (path = ? OR path LIKE ? ESCAPE '!') AND deleted_at IS NULL ORDER BY path", ENTRY, customer,
                path, likePrefix(path));
    }

    public byte[] content(String customer, String path) {
        return jdbc.queryForObject("SELECT content FROM file_entry WHERE customer = ? AND path = ? AND deleted_at IS NULL",
                byte[].class, customer, path);
    }

    public void insert(String customer, String path, String parent, boolean folder, byte[] content) {
        jdbc.update("INSERT INTO file_entry (customer, path, parent, folder, content, size, modified)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?)", customer, path, parent, folder, content,
                content == null ? 0 : content.length, Timestamp.from(Instant.now()));
    }

    public void replaceContent(String customer, String path, byte[] content) {
        jdbc.update("UPDATE file_entry SET content = ?, size = ?, modified = ? WHERE customer = ? AND path = ?", content,
                content.length, Timestamp.from(Instant.now()), customer, path);
    }

    public void move(String customer, String from, String to, String newParent) {
        jdbc.update("UPDATE file_entry SET path = ?, parent = ?, modified = ? WHERE customer = ? AND path = ?"
                + " AND deleted_at IS NULL", to, newParent, Timestamp.from(Instant.now()), customer, from);
    }

    /** Moves the entry and its subtree to the trash. */
    public int trash(String customer, String path) {
        return jdbc.update("UPDATE file_entry SET deleted_at = ? WHERE customer = ? AND (path = ? OR path LIKE ? ESCAPE '!')"
                + " AND deleted_at IS NULL", Timestamp.from(Instant.now()), customer, path, likePrefix(path));
    }

    /** Empties the trash of entries deleted before {@code before}. */
    public int emptyTrash(Instant before) {
        return jdbc.update("DELETE FROM file_entry WHERE deleted_at IS NOT NULL AND deleted_at < ?", Timestamp.from(before));
    }

    public List<String> customers() {
        return jdbc.queryForList("SELECT DISTINCT customer FROM file_entry ORDER BY customer", String.class);
    }

    /** Files and bytes per customer, for the usage report. */
    public List<Usage> usage() {
        return jdbc.query("SELECT customer, count(*) AS files, coalesce(sum(size), 0) AS bytes FROM file_entry"
                + " WHERE deleted_at IS NULL AND folder = ? GROUP BY customer ORDER BY customer",
                (rs, n) -> new Usage(rs.getString("customer"), rs.getLong("files"), rs.getLong("bytes")), false);
    }

    /** Usage of one customer. */
    public record Usage(String customer, long files, long bytes) {
    }

    // % and _ are ordinary characters in paths; escape them so the subtree match stays exact
    private static String likePrefix(String path) {
        String escaped = path.replace("!", "!!").replace("%", "!%").replace("_", "!_");
        return (path.equals("/") ? "" : escaped) + "/%";
    }
}
