package dev.locks.jdbc;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Which store sent a release notice. A store wakes its own waiters when it releases, so its
 * listener skips its own notices instead of waking every waiter a second time.
 *
 * @param tag {@value #TAG_LENGTH} characters of {@code [0-9a-f*]}, safe to write into SQL text
 */
record ReleaseOrigin(String tag) {

    static final int TAG_LENGTH = 16;

    /** Notices for every listener, the sender's own included (a force-release may free its locks). */
    static final ReleaseOrigin ANY = new ReleaseOrigin("*".repeat(TAG_LENGTH));

    ReleaseOrigin {
        if (!tag.matches("[0-9a-f*]{" + TAG_LENGTH + "}")) {
            throw new IllegalArgumentException("A release origin tag is " + TAG_LENGTH + " of [0-9a-f*], not " + tag);
        }
    }

    /**
     * @return a fresh tag of 64 random bits: two stores practically never draw the same (each would
     *         then poll for the other's releases)
     */
    static ReleaseOrigin random() {
        return new ReleaseOrigin(String.format("%016x", ThreadLocalRandom.current().nextLong()));
    }

    /** @return whether a notice with this tag came from this origin */
    boolean sent(String noticeTag) {
        return tag.equals(noticeTag);
    }
}
