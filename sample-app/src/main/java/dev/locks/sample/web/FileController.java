package dev.locks.sample.web;

import java.util.List;
import java.util.Map;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import dev.locks.sample.files.ExportService;
import dev.locks.sample.files.FileEntry;
import dev.locks.sample.files.FileService;
import dev.locks.sample.files.Paths;

/**
 * REST API under {@code /api/customers/{customer}}: every path lives in that customer's own tree,
 * so another customer's files are out of reach.
 */
@RestController
@RequestMapping("/api/customers/{customer}")
public class FileController {

    private final FileService files;

    private final ExportService exports;

    private final Paths paths;

    public FileController(FileService files, ExportService exports, Paths paths) {
        this.files = files;
        this.exports = exports;
        this.paths = paths;
    }

    @PostMapping("/folders")
    public FileEntry createFolder(@PathVariable String customer, @RequestParam String path) {
        return files.createFolder(customer, paths.normalize(path));
    }

    @PutMapping(path = "/files", consumes = MediaType.ALL_VALUE)
    public FileEntry upload(@PathVariable String customer, @RequestParam String path, @RequestBody byte[] content) {
        return files.upload(customer, paths.normalize(path), content);
    }

    @GetMapping("/files")
    public ResponseEntity<byte[]> download(@PathVariable String customer, @RequestParam String path) {
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_OCTET_STREAM)
                .body(files.download(customer, paths.normalize(path)));
    }

    @GetMapping("/list")
    public List<FileEntry> list(@PathVariable String customer, @RequestParam(defaultValue = "/") String path) {
        return files.list(customer, paths.normalize(path));
    }

    @PostMapping("/move")
    public Map<String, Object> move(@PathVariable String customer, @RequestParam String src, @RequestParam String dst) {
        return Map.of("moved", files.move(customer, paths.normalize(src), paths.normalize(dst)));
    }

    @PostMapping("/copy")
    public Map<String, Object> copy(@PathVariable String customer, @RequestParam String src, @RequestParam String dst) {
        return Map.of("copied", files.copy(customer, paths.normalize(src), paths.normalize(dst)));
    }

    @PostMapping("/rename")
    public Map<String, Object> rename(@PathVariable String customer, @RequestParam String path,
            @RequestParam String name) {
        return Map.of("renamed", files.rename(customer, paths.normalize(path), name));
    }

    @DeleteMapping("/entries")
    public Map<String, Object> delete(@PathVariable String customer, @RequestParam String path) {
        return Map.of("deleted", files.delete(customer, paths.normalize(path)));
    }

    @GetMapping("/export")
    public ResponseEntity<byte[]> export(@PathVariable String customer, @RequestParam(defaultValue = "/") String path) {
        return ResponseEntity.ok().contentType(MediaType.parseMediaType("application/zip"))
                .header(HttpHeaders.CONTENT_DISPOSITION, "attachment; filename=\"export.zip\"")
                .body(exports.zip(customer, paths.normalize(path)));
    }
}
