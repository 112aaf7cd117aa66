package dev.locks.sample.web;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import dev.locks.LockHolder;
import dev.locks.LockLostException;
import dev.locks.LockTimeoutException;
import dev.locks.LockUnavailableException;
import dev.locks.sample.files.FileConflictProblem;
import dev.locks.sample.files.FileNotFoundProblem;

/**
 * Clear JSON errors: 400 bad input, 404 missing, 409 conflicting or a lock lost before the commit (the
 * work was rolled back: try again), 423 locked (naming the holder), 503 store down.
 */
@RestControllerAdvice
public class ApiErrors {

    @ExceptionHandler(LockTimeoutException.class)
    ResponseEntity<Map<String, Object>> locked(LockTimeoutException ex) {
        Map<String, Object> body = body("locked", ex.getMessage());
        List<Map<String, Object>> holders = ex.getHolders().stream().map(ApiErrors::holder).toList();
        body.put("holders", holders);
        return ResponseEntity.status(HttpStatus.LOCKED).body(body);
    }

    @ExceptionHandler(LockLostException.class)
    ResponseEntity<Map<String, Object>> lost(LockLostException ex) {
        return ResponseEntity.status(HttpStatus.CONFLICT).body(body("lock lost, nothing changed: try again", ex.getMessage()));
    }

    @ExceptionHandler(LockUnavailableException.class)
    ResponseEntity<Map<String, Object>> unavailable(LockUnavailableException ex) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body(body("lock store unavailable", ex.getMessage()));
    }

    @ExceptionHandler(FileNotFoundProblem.class)
    ResponseEntity<Map<String, Object>> notFound(FileNotFoundProblem ex) {
        return ResponseEntity.status(HttpStatus.NOT_FOUND).body(body("not found", ex.getMessage()));
    }

    @ExceptionHandler(FileConflictProblem.class)
    ResponseEntity<Map<String, Object>> conflict(FileConflictProblem ex) {
        return ResponseEntity.status(HttpStatus.CONFLICT).body(body("conflict", ex.getMessage()));
    }

    // InvalidLockPathException is an IllegalArgumentException: '..', control characters, relative paths
    @ExceptionHandler(IllegalArgumentException.class)
    ResponseEntity<Map<String, Object>> badRequest(IllegalArgumentException ex) {
        return ResponseEntity.badRequest().body(body("bad request", ex.getMessage()));
    }

    private static Map<String, Object> body(String error, String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", error);
        body.put("message", message);
        return body;
    }

    private static Map<String, Object> holder(LockHolder h) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("path", h.path());
        m.put("mode", h.mode().name());
        m.put("node", h.node());
        m.put("thread", h.thread());
        m.put("since", h.since().toString());
        m.put("waiting", h.waiting());
        return m;
    }
}
