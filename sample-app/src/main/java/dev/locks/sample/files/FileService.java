package dev.locks.sample.files;

import java.time.Duration;
import java.util.List;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import dev.locks.LockMode;
import dev.locks.annotation.PathLocked;

/**
 * The file server's operations. Each one locks the paths it touches in the customer's tree
 * ({@code tenant = "#customer"}) before its transaction begins and releases them after the commit:
 * writes exclusively, reads that must see a consistent subtree shared. A move of
 * {@code /Shared/marketing/Dallas} therefore blocks an upload into {@code Dallas/x} and a rename of
 * {@code /Shared/marketing}, and lets an upload to {@code /Shared/QA} through.
 */
@Service
public class FileService {

    private final FileRepository files;

    private final Paths paths;

    private final Duration delayPerEntry;

    public FileService(FileRepository files, Paths paths,
            @Value("${sample.move-delay-per-entry:0ms}") Duration delayPerEntry) {
        this.files = files;
        this.paths = paths;
        this.delayPerEntry = delayPerEntry;
    }

    @PathLocked(paths = "#path", tenant = "#customer")
    @Transactional
    public FileEntry createFolder(String customer, String path) {
        if (files.find(customer, path).isPresent()) {
            throw new FileConflictProblem(path + " already exists");
        }
        requireFolder(customer, paths.parent(path));
        files.insert(customer, path, paths.parent(path), true, null);
        return files.find(customer, path).orElseThrow();
    }

    @PathLocked(paths = "#path", tenant = "#customer")
    @Transactional
    public FileEntry upload(String customer, String path, byte[] content) {
        var existing = files.find(customer, path);
        if (existing.isPresent()) {
            if (existing.get().folder()) {
                throw new FileConflictProblem(path + " is a folder");
            }
            files.replaceContent(customer, path, content);
        }
        else {
            requireFolder(customer, paths.parent(path));
            files.insert(customer, path, paths.parent(path), false, content);
        }
        return files.find(customer, path).orElseThrow();
    }

    @PathLocked(paths = "#path", tenant = "#customer", mode = LockMode.SHARED)
    @Transactional(readOnly = true)
    public byte[] download(String customer, String path) {
        FileEntry entry = files.find(customer, path).orElseThrow(() -> new FileNotFoundProblem(path + " does not exist"));
        if (entry.folder()) {
            throw new FileConflictProblem(path + " is a folder");
        }
        return files.content(customer, path);
    }

    @PathLocked(paths = "#path", tenant = "#customer", mode = LockMode.SHARED)
    @Transactional(readOnly = true)
    public List<FileEntry> list(String customer, String path) {
        requireFolder(customer, path);
        return files.children(customer, path);
    }

    /** Moves {@code src} (and its subtree) to {@code dst}; slow on purpose when a delay per entry is set. */
    @PathLocked(paths = "#src, #dst", tenant = "#customer")
    @Transactional
    public int move(String customer, String src, String dst) {
        List<FileEntry> subtree = checkMove(customer, src, dst);
        for (FileEntry entry : subtree) {
            String target = dst + entry.path().substring(src.length());
            files.move(customer, entry.path(), target, paths.parent(target));
            pause();
        }
        return subtree.size();
    }

    @PathLocked(paths = "#src, #dst", tenant = "#customer")
    @Transactional
    public int copy(String customer, String src, String dst) {
        List<FileEntry> subtree = checkMove(customer, src, dst);
        for (FileEntry entry : subtree) {
            String target = dst + entry.path().substring(src.length());
            files.insert(customer, target, paths.parent(target), entry.folder(),
                    entry.folder() ? null : files.content(customer, entry.path()));
            pause();
        }
        return subtree.size();
    }

    /** Renames in place: the lock covers the old and the new path, the latter computed by the {@code paths} bean. */
    @PathLocked(paths = "#path, @paths.sibling(#path, #newName)", tenant = "#customer")
    @Transactional
    public int rename(String customer, String path, String newName) {
        String dst = paths.sibling(path, newName);
        List<FileEntry> subtree = checkMove(customer, path, dst);
        for (FileEntry entry : subtree) {
            String target = dst + entry.path().substring(path.length());
            files.move(customer, entry.path(), target, paths.parent(target));
        }
        return subtree.size();
    }

    @PathLocked(paths = "#path", tenant = "#customer")
    @Transactional
    public int delete(String customer, String path) {
        if (path.equals("/")) {
            throw new FileConflictProblem("The root folder cannot be deleted");
        }
        files.find(customer, path).orElseThrow(() -> new FileNotFoundProblem(path + " does not exist"));
        return files.trash(customer, path);
    }

    private List<FileEntry> checkMove(String customer, String src, String dst) {
        if (src.equals("/")) {
            throw new FileConflictProblem("The root folder cannot be moved");
        }
        if (paths.within(dst, src)) {
            throw new FileConflictProblem("Cannot move " + src + " into its own subtree " + dst);
        }
        files.find(customer, src).orElseThrow(() -> new FileNotFoundProblem(src + " does not exist"));
        if (files.find(customer, dst).isPresent()) {
            throw new FileConflictProblem(dst + " already exists");
        }
        requireFolder(customer, paths.parent(dst));
        return files.subtree(customer, src);
    }

    private void requireFolder(String customer, String folder) {
        if (folder.equals("/")) {
            return;
        }
        FileEntry entry = files.find(customer, folder).orElseThrow(() -> new FileNotFoundProblem(
                "Folder " + folder + " does not exist"));
        if (!entry.folder()) {
            throw new FileConflictProblem(folder + " is a file, not a folder");
        }
    }

    private void pause() {
        if (!delayPerEntry.isZero()) {
            try {
                Thread.sleep(delayPerEntry.toMillis());
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted during a slow move", ex);
            }
        }
    }
}
