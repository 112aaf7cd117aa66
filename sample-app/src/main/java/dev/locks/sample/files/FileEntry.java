package dev.locks.sample.files;

import java.time.Instant;

/**
 * A file or folder of one customer.
 *
 * @param path absolute, normalised path
 * @param folder true for a folder
 * @param size bytes of content (0 for folders)
 * @param modified last change
 */
public record FileEntry(String path, boolean folder, long size, Instant modified) {
}
