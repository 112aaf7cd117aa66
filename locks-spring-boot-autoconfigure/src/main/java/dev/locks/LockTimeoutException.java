package dev.locks;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A lock stayed busy for the whole wait. The message and {@link #getHolders()} name who held the
 * conflicting locks (node, thread, since) when the wait ended.
 */
public class LockTimeoutException extends LockException {

    private static final long serialVersionUID = 1L;

    private static final int NAMED_HOLDERS = 5;

    private final transient List<LockHolder> holders;

    /**
     * @param what the request, as text
     * @param waited how long the caller waited
     * @param holders the conflicting holders seen last (may be empty if they left just then)
     */
    public LockTimeoutException(String what, Duration waited, List<LockHolder> holders) {
        super(message(what, waited, holders));
        this.holders = List.copyOf(holders);
    }

    /**
     * @return the conflicting holders seen last
     */
    public List<LockHolder> getHolders() {
        return holders;
    }

    private static String message(String what, Duration waited, List<LockHolder> holders) {
        String verb = waited.isZero() ? "is busy" : "still busy after waiting " + waited;
        if (holders.isEmpty()) {
            return what + " " + verb;
        }
        return what + " " + verb + "; held by " + describe(holders);
    }

    /** The first holders, one by one, and how many more there are: a semaphore may have hundreds. */
    static String describe(List<LockHolder> holders) {
        String shown = holders.stream().limit(NAMED_HOLDERS).map(LockHolder::describe).collect(Collectors.joining("; "));
        return holders.size() <= NAMED_HOLDERS ? shown : shown + "; and " + (holders.size() - NAMED_HOLDERS) + " more";
    }
}
