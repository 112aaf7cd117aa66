package dev.locks.jdbc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.locks.store.Grant;

/**
 * Keeps this store's renewals and the releases that join a caller's transaction off each other's
 * rows. A joined release holds its grant's row locks until the caller's transaction ends: it joins
 * as the commit begins, but the rest of the commit's preparation (a JPA flush) may take long. A
 * renewal that reached those rows would wait for as long, holding up every lease of its chunk; and two grants released in one transaction, newest first, deadlock with a
 * renewal that locks them oldest first (PostgreSQL then stalls the commit for its
 * {@code deadlock_timeout}; H2 and InnoDB may fail the caller's commit).
 * <p>
 * Only the node that holds a grant renews it, so keeping the two apart inside this JVM is enough:
 * a renewal leaves out the grants whose release has joined a transaction still open, and such a
 * release waits for a renewal already under way on its grant until its statements are done (it
 * may then wait a moment longer in the database for that renewal's commit, which follows at once:
 * the renewal holds every lock it needs by then).
 */
final class JoinedReleases {

    /** Grant ids of renewals under way, with how many renewals (watchdog and by hand) hold each. */
    private final Map<String, Integer> renewing = new HashMap<>();

    /** Grant ids whose release joined a transaction that has not ended. */
    private final Set<String> released = new HashSet<>();

    /**
     * Starts a renewal of {@code grants}; must be followed by {@link #renewalEnded} with the answer.
     *
     * @return the grants to renew: those whose release has not joined an open transaction
     */
    synchronized List<Grant> renewalStarting(List<Grant> grants) {
        List<Grant> renewable = new ArrayList<>(grants.size());
        for (Grant grant : grants) {
            if (!released.contains(grant.grantId())) {
                renewable.add(grant);
                renewing.merge(grant.grantId(), 1, Integer::sum);
            }
        }
        return renewable;
    }

    synchronized void renewalEnded(List<Grant> renewed) {
        for (Grant grant : renewed) {
            renewing.computeIfPresent(grant.grantId(), (id, count) -> count == 1 ? null : count - 1);
        }
        notifyAll();
    }

    /**
     * Waits for the renewals under way on {@code grant} and keeps later ones off it until
     * {@link #transactionEnded}. An interrupt does not cut the wait short, since the release
     * would then meet the renewal in the database; it is kept for the caller.
     */
    synchronized void releaseJoining(Grant grant) {
        boolean interrupted = false;
        while (renewing.containsKey(grant.grantId())) {
            try {
                wait();
            }
            catch (InterruptedException ex) {
                interrupted = true;
            }
        }
        released.add(grant.grantId());
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The caller's transaction that a release of {@code grant} joined has ended: its rows are unlocked. */
    synchronized void transactionEnded(Grant grant) {
        released.remove(grant.grantId());
    }
}
