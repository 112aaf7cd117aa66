package dev.locks.sample.web;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;

import dev.locks.LockLostException;

/** How lock failures reach the API's clients. */
class ApiErrorsTest {

    @Test
    void aLockLostBeforeTheCommitIsAConflictToRetryNamingTheLock() {
        var response = new ApiErrors().lost(new LockLostException(
                "Rolled the transaction back instead of committing it unprotected: lock EXCLUSIVE /Shared is no longer held"));

        assertThat(response.getStatusCode()).isEqualTo(HttpStatus.CONFLICT);
        assertThat(response.getBody()).containsEntry("error", "lock lost, nothing changed: try again");
        assertThat(response.getBody().get("message").toString()).contains("/Shared");
    }
}
