package dev.locks.aop;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import dev.locks.LockHandle;

/**
 * The locks the annotations hold on this thread while their methods run, so that a transaction
 * that begins inside such a method ({@link LockedTransactionListener}) can check them at its commit.
 */
final class AnnotationLocksOnThread {

    // no initial value: every transaction of the application asks, most on threads holding nothing
    private static final ThreadLocal<Deque<List<LockHandle>>> HELD = new ThreadLocal<>();

    private AnnotationLocksOnThread() {
    }

    /** The method holding {@code handles} is about to run; must be followed by {@link #left}. */
    static void entered(List<LockHandle> handles) {
        Deque<List<LockHandle>> held = HELD.get();
        if (held == null) {
            held = new ArrayDeque<>();
            HELD.set(held);
        }
        held.push(handles);
    }

    /** The method that {@link #entered} has returned or thrown. */
    static void left() {
        Deque<List<LockHandle>> held = HELD.get();
        held.pop();
        if (held.isEmpty()) {
            HELD.remove();
        }
    }

    /** @return the locks of the innermost annotated method running on this thread, or an empty list */
    static List<LockHandle> innermost() {
        Deque<List<LockHandle>> held = HELD.get();
        return held == null ? List.of() : List.copyOf(held.peek());
    }

    /** @return every lock the annotations hold on this thread now, outermost first */
    static List<LockHandle> current() {
        Deque<List<LockHandle>> held = HELD.get();
        if (held == null) {
            return List.of();
        }
        List<LockHandle> all = new ArrayList<>();
        held.descendingIterator().forEachRemaining(all::addAll);
        return all;
    }
}
