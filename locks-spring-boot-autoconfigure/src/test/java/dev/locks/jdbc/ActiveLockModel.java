package dev.locks.jdbc;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.locks.LockMode;

/**
 * An in-memory record of who is inside a critical section right now, for stress tests: a holder
 * checks in after its grant and out before its release, so any overlap the model sees is a real
 * violation of mutual exclusion.
 */
final class ActiveLockModel {

    private record Entry(String tenant, String path, LockMode mode, Object owner) {
    }

    private final List<Entry> active = new ArrayList<>();

    private final AtomicInteger violations = new AtomicInteger();

    private final List<String> examples = new ArrayList<>();

    synchronized void enter(String tenant, List<String> paths, LockMode mode, Object owner) {
        for (String path : paths) {
            for (Entry e : active) {
                if (e.tenant.equals(tenant) && e.owner != owner && overlaps(e.path, path)
                        && (e.mode == LockMode.EXCLUSIVE || mode == LockMode.EXCLUSIVE)) {
                    violations.incrementAndGet();
                    if (examples.size() < 5) {
                        examples.add(mode + " " + path + " granted while " + e.mode + " " + e.path + " was held");
                    }
                }
            }
        }
        for (String path : paths) {
            active.add(new Entry(tenant, path, mode, owner));
        }
    }

    synchronized void exit(Object owner) {
        active.removeIf(e -> e.owner == owner);
    }

    int violations() {
        return violations.get();
    }

    synchronized List<String> examples() {
        return List.copyOf(examples);
    }

    static boolean overlaps(String a, String b) {
        return a.equals(b) || isAncestor(a, b) || isAncestor(b, a);
    }

    private static boolean isAncestor(String a, String b) {
        if (a.equals("/")) {
            return !b.equals("/");
        }
        return b.startsWith(a) && b.length() > a.length() && b.charAt(a.length()) == '/';
    }
}
