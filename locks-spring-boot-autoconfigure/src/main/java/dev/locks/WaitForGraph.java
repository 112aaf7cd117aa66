package dev.locks;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import dev.locks.store.WaitGraphRow;

/**
 * Who waits for whom, built from one snapshot of waiting requests and the grants of their owners.
 * An owner waits for every other owner holding a conflicting grant and needs all of them gone (an
 * AND-wait), so a cycle in this graph is a deadlock: no owner in it can move. Semaphore waits are
 * OR-waits (any permit will do) and are left out, so the graph never reports a cycle that is not one.
 */
final class WaitForGraph {

    private record Row(LockPath path, LockMode mode, LockHolder holder) {
    }

    private final Map<String, List<Row>> waitingByOwner = new LinkedHashMap<>();

    private final Map<String, List<Row>> heldByOwner = new HashMap<>();

    private final Map<String, Long> ticketByOwner = new HashMap<>();

    WaitForGraph(List<WaitGraphRow> rows) {
        for (WaitGraphRow row : rows) {
            LockHolder h = row.holder();
            if (h.kind() == LockKind.SEMAPHORE) {
                continue;
            }
            LockPath path = h.kind() == LockKind.PATH ? new LockPath(h.path()) : LockPath.flat(h.path());
            Row r = new Row(path, h.mode(), h);
            if (row.waiting()) {
                waitingByOwner.computeIfAbsent(row.owner(), k -> new ArrayList<>()).add(r);
                ticketByOwner.merge(row.owner(), h.lockId(), Math::min);
            }
            else {
                heldByOwner.computeIfAbsent(row.owner(), k -> new ArrayList<>()).add(r);
            }
        }
    }

    /**
     * The cycle through {@code owner} if there is one and {@code owner} is its youngest waiter (the
     * one that queued last), which is the one to give up; other members leave it to that one.
     *
     * @return the held locks along the cycle, starting with the one {@code owner} waits for
     */
    Optional<List<LockHolder>> cycleToBreak(String owner) {
        List<LockHolder> cycle = new ArrayList<>();
        if (!walk(owner, owner, new HashSet<>(), cycle)) {
            return Optional.empty();
        }
        long mine = ticketByOwner.getOrDefault(owner, Long.MIN_VALUE);
        for (LockHolder held : cycle) {
            String next = ownerOf(held);
            if (ticketByOwner.getOrDefault(next, Long.MIN_VALUE) > mine) {
                return Optional.empty();
            }
        }
        return Optional.of(cycle);
    }

    private boolean walk(String from, String target, Set<String> visited, List<LockHolder> path) {
        for (Map.Entry<String, Row> edge : blockers(from).entrySet()) {
            String next = edge.getKey();
            path.add(edge.getValue().holder());
            if (next.equals(target)) {
                return true;
            }
            if (visited.add(next) && walk(next, target, visited, path)) {
                return true;
            }
            path.remove(path.size() - 1);
        }
        return false;
    }

    /** The owners {@code owner} waits for, each with one held row in the way. */
    private Map<String, Row> blockers(String owner) {
        Map<String, Row> result = new LinkedHashMap<>();
        for (Row wanted : waitingByOwner.getOrDefault(owner, List.of())) {
            for (Map.Entry<String, List<Row>> other : heldByOwner.entrySet()) {
                if (other.getKey().equals(owner) || result.containsKey(other.getKey())) {
                    continue;
                }
                for (Row held : other.getValue()) {
                    if (wanted.path().overlaps(held.path()) && wanted.mode().conflictsWith(held.mode())) {
                        result.put(other.getKey(), held);
                        break;
                    }
                }
            }
        }
        return result;
    }

    private String ownerOf(LockHolder held) {
        for (Map.Entry<String, List<Row>> e : heldByOwner.entrySet()) {
            for (Row r : e.getValue()) {
                if (r.holder() == held) {
                    return e.getKey();
                }
            }
        }
        throw new IllegalStateException("Row without owner: " + held);
    }
}
