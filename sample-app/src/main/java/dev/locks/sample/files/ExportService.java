package dev.locks.sample.files;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import dev.locks.LockMode;
import dev.locks.annotation.PathLocked;
import dev.locks.annotation.Semaphore;

/**
 * Zips a folder. Exports are heavy, so at most ten run at once per customer across the cluster
 * ({@code @Semaphore}); the folder is read-locked so the zip is a consistent snapshot.
 */
@Service
public class ExportService {

    private final FileRepository files;

    private final Duration delayPerEntry;

    public ExportService(FileRepository files, @Value("${sample.export-delay-per-entry:0ms}") Duration delayPerEntry) {
        this.files = files;
        this.delayPerEntry = delayPerEntry;
    }

    @Semaphore(name = "exports", key = "#customer", max = 10, waitAtMost = "30s")
    @PathLocked(paths = "#path", tenant = "#customer", mode = LockMode.SHARED)
    @Transactional(readOnly = true)
    public byte[] zip(String customer, String path) {
        var root = files.find(customer, path);
        if (root.isEmpty() && !path.equals("/")) {
            throw new FileNotFoundProblem(path + " does not exist");
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
            for (FileEntry entry : files.subtree(customer, path)) {
                String name = entry.path().substring(1) + (entry.folder() ? "/" : "");
                zip.putNextEntry(new ZipEntry(name));
                if (!entry.folder()) {
                    zip.write(files.content(customer, entry.path()));
                }
                zip.closeEntry();
                if (!delayPerEntry.isZero()) {
                    Thread.sleep(delayPerEntry.toMillis());
                }
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted during an export", ex);
        }
        return bytes.toByteArray();
    }
}
