package dev.locks;

import java.text.Normalizer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

import dev.locks.store.Grant;
import dev.locks.store.GrantRequest;
import dev.locks.store.GrantResult;
import dev.locks.store.HandOff;
import dev.locks.store.LockStore;
import dev.locks.store.PendingRelease;
import dev.locks.store.ReleaseDeferredException;

/**
 * The lock engine over any {@link LockStore}: normalises requests, waits with backoff and local
 * wake-ups, re-enters scoped locks, and renews leases with a shared watchdog.
 *
 * <p>Close it on shutdown: that stops the watchdog and releases what this node still holds, but for
 * locks of work still running after {@link LockSettings#shutdownWait()}, which are left to their leases.
 */
public class DefaultLockService implements LockService, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DefaultLockService.class);

    private static final long SHUTDOWN_POLL_MILLIS = 20;

    private final LockStore store;

    private final LockSettings settings;

    private final BackOff backOff;

    private final LocalWakeups wakeups = new LocalWakeups();

    private final Set<GrantedLock> live = ConcurrentHashMap.newKeySet();

    /** Set by {@link #close()}: new requests are refused, since nothing would renew or release them. */
    private volatile boolean closed;

    /** Acquisitions under way, which {@link #close()} lets end before it looks at what is held. */
    private final AtomicInteger acquiring = new AtomicInteger();

    private final AtomicInteger waiting = new AtomicInteger();

    private final AtomicLong handOffs = new AtomicLong();

    private final PollBudget pollBudget;

    // the settings' listeners plus those added to the built service (metrics are wired after it exists)
    private final List<LockListener> listeners;

    private final ThreadPoolTaskScheduler ownScheduler;

    private final LeaseRenewer renewer;

    private final ReleaseRetries releaseRetries;

    private final ScheduledFuture<?> purging;

    /**
     * @param store where grants live
     * @param settings defaults and tuning
     * @param scheduler runs the watchdog and the purge of expired grants; null for a private
     *                  single-thread scheduler that {@link #close()} shuts down
     */
    public DefaultLockService(LockStore store, LockSettings settings, TaskScheduler scheduler) {
        this.store = Objects.requireNonNull(store, "store");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.listeners = new CopyOnWriteArrayList<>(settings.listeners());
        // Spring's retry policy computes the delays (initial, multiplier, max, jitter); the waiting itself
        // happens here so that a release in this JVM can cut a delay short
        this.backOff = RetryPolicy.builder()
                .maxRetries(Long.MAX_VALUE)
                .delay(settings.backoffInitial())
                .multiplier(settings.backoffMultiplier())
                .maxDelay(settings.backoffMax())
                .jitter(settings.backoffJitter())
                .build()
                .getBackOff();
        if (scheduler == null) {
            ThreadPoolTaskScheduler own = new ThreadPoolTaskScheduler();
            own.setThreadNamePrefix("locks-watchdog-");
            own.setDaemon(true);
            own.setPoolSize(1);
            own.initialize();
            this.ownScheduler = own;
            scheduler = own;
        }
        else {
            this.ownScheduler = null;
        }
        this.pollBudget = new PollBudget(settings.maxPollsPerSecond());
        store.onRemoteRelease(wakeups::releasedInScope);
        this.renewer = new LeaseRenewer(store, settings, scheduler, listeners);
        this.releaseRetries = new ReleaseRetries(store);
        Duration purge = settings.purgeInterval();
        this.purging = purge == null || purge.isZero() ? null : scheduler.scheduleWithFixedDelay(this::purge, purge);
    }

    /** @return the settings in force */
    public LockSettings settings() {
        return settings;
    }

    LockStore store() {
        return store;
    }

    /**
     * Adds a listener to this service, after the ones in its settings; for integrations (such as
     * metrics) that are wired once the service exists.
     *
     * @param listener told about this service's lock events from now on
     */
    public void addListener(LockListener listener) {
        // adding the same listener twice would count every event twice
        ((CopyOnWriteArrayList<LockListener>) listeners).addIfAbsent(Objects.requireNonNull(listener, "listener"));
    }

    /**
     * The store's current time, read from the store: for health checks comparing clocks. No lock
     * decision uses it.
     *
     * @return the store's clock now
     * @throws LockUnavailableException if the store cannot be reached
     */
    public Instant storeTime() {
        return store.currentTime();
    }

    @Override
    public LockHandle acquire(LockRequest request) {
        return grant(request, waitOf(request), null, true).orElseThrow();
    }

    @Override
    public Optional<LockHandle> tryAcquire(LockRequest request) {
        return grant(request, Duration.ZERO, null, false);
    }

    @Override
    public LockHandle enter(LockRequest request) {
        return enterScope(request, waitOf(request), true).orElseThrow();
    }

    @Override
    public Optional<LockHandle> tryEnter(LockRequest request) {
        return enterScope(request, Duration.ZERO, false);
    }

    @Override
    public <T, E extends Exception> T call(LockRequest request, CheckedCallable<T, E> work) throws E {
        LockHandle handle = enter(request);
        T result;
        try {
            result = work.call();
        }
        catch (Exception | Error ex) {
            LockHandles.releaseAfterWork(handle, ex);
            throw ex;
        }
        LockHandles.releaseAfterWork(handle, null);
        return result;
    }

    @Override
    public void run(LockRequest request, Runnable work) {
        call(request, () -> {
            work.run();
            return null;
        });
    }

    @Override
    public List<LockHandle> tryAcquireEach(Collection<LockRequest> requests) {
        List<LockHandle> granted = new ArrayList<>();
        try {
            for (LockRequest request : requests) {
                tryAcquire(request).ifPresent(granted::add);
            }
        }
        catch (RuntimeException | Error ex) {
            // the caller gets no handles to release: nothing granted so far may stay held
            for (LockHandle handle : granted) {
                LockHandles.releaseAfterWork(handle, ex);
            }
            throw ex;
        }
        return granted;
    }

    @Override
    public List<LockHolder> holders(String tenant, String path) {
        String t = tenant == null ? settings.defaultTenant() : PathNormalizer.checkName("tenant", tenant, 190);
        return store.holders(LockKind.PATH, t, settings.pathNormalizer().normalize(path));
    }

    /**
     * Live holders of a singleton or semaphore.
     *
     * @param kind {@link LockKind#SINGLETON} or {@link LockKind#SEMAPHORE}
     * @param tenant the tenant, or null for the default
     * @param name the name
     * @return the holders, oldest first
     */
    public List<LockHolder> holders(LockKind kind, String tenant, String name) {
        if (kind == LockKind.PATH) {
            return holders(tenant, name);
        }
        String t = tenant == null ? settings.defaultTenant() : PathNormalizer.checkName("tenant", tenant, 190);
        return store.holders(kind, t, LockPath.flat(PathNormalizer.checkName("name", name, 1000)));
    }

    /** @return handles of this service still held (scoped or not) */
    public int heldCount() {
        return live.size();
    }

    /** @return requests of this service waiting for a lock now */
    public int waitingCount() {
        return waiting.get();
    }

    /**
     * @return releases of this service that handed their lock to a waiter of this service in the
     *         release's own transaction, since it started
     */
    public long handOffCount() {
        return handOffs.get();
    }

    /**
     * Live grants of the whole cluster matching an operator's filter.
     *
     * @param query the filter
     * @return the holders, oldest first
     */
    public List<LockHolder> list(HolderQuery query) {
        // tenants and names are stored in NFC, as requests and holders() take them
        String tenant = query.tenant() == null ? null : PathNormalizer.checkName("tenant", query.tenant(), 190);
        String prefix = query.pathPrefix();
        if (prefix != null && prefix.startsWith("/") && (query.kind() == null || query.kind() == LockKind.PATH)) {
            String path = settings.pathNormalizer().normalize(prefix).value();
            String name = Normalizer.normalize(prefix, Normalizer.Form.NFC);
            if (query.kind() == null && !name.equals(path)) {
                // names keep their case and slashes, so a folded or tidied path would miss the singleton of that name
                return merged(query.limit(), store.list(narrowed(query, LockKind.PATH, tenant, path)),
                        store.list(narrowed(query, LockKind.SINGLETON, tenant, name)),
                        store.list(narrowed(query, LockKind.SEMAPHORE, tenant, name)));
            }
            prefix = path;
        }
        else if (prefix != null) {
            prefix = PathNormalizer.checkName("name", prefix, 1000);
        }
        return store.list(narrowed(query, query.kind(), tenant, prefix));
    }

    private static HolderQuery narrowed(HolderQuery query, LockKind kind, String tenant, String pathPrefix) {
        return new HolderQuery(kind, tenant, pathPrefix, query.node(), query.limit(), query.includeWaiting());
    }

    @SafeVarargs
    private static List<LockHolder> merged(int limit, List<LockHolder>... lists) {
        List<LockHolder> all = new ArrayList<>();
        for (List<LockHolder> list : lists) {
            all.addAll(list);
        }
        all.sort(Comparator.comparingLong(LockHolder::lockId));
        return all.size() > limit ? List.copyOf(all.subList(0, limit)) : all;
    }

    /**
     * Force-releases the grant holding row {@code lockId}, whoever owns it. Its owner's handle
     * turns invalid at the next renewal; use it only for a holder known to be stuck.
     *
     * @param lockId a {@link LockHolder#lockId()}
     * @return true if a live grant was deleted
     * @see #forceReleaseGrant
     */
    public boolean forceRelease(long lockId) {
        return !forceReleaseGrant(lockId, "an operator").isEmpty();
    }

    /**
     * Force-releases the whole grant holding row {@code lockId}, whoever owns it, and logs at WARN
     * every row it freed and who asked. A grant is all or nothing: naming one path of a multi-path
     * grant (a move's source, say) frees its other paths too. Its owner's handle turns invalid at the
     * next renewal; use it only for a holder known to be stuck.
     *
     * @param lockId a {@link LockHolder#lockId()}
     * @param requestedBy who asked, for the log (e.g. {@code "user 'alice'"})
     * @return the rows released, oldest first; empty if the grant was gone or its lease had ended
     */
    public List<LockHolder> forceReleaseGrant(long lockId, String requestedBy) {
        List<LockHolder> released = store.forceRelease(lockId);
        if (released.isEmpty()) {
            log.info("Force-release of lock {} asked by {} found no live grant", lockId, requestedBy);
        }
        else {
            log.warn("Lock {} was force-released by {}, freeing {} row(s) of its grant: {}", lockId, requestedBy,
                    released.size(), released.stream().map(LockHolder::describe).collect(Collectors.joining("; ")));
        }
        return released;
    }

    private Duration waitOf(LockRequest request) {
        return request.waitAtMost() != null ? request.waitAtMost() : settings.defaultWait();
    }

    private Optional<LockHandle> enterScope(LockRequest request, Duration wait, boolean failWhenBusy) {
        String tenant = tenantOf(request);
        List<LockPath> paths = pathsOf(request);
        checkRenewable(request.lease() != null ? request.lease() : settings.defaultLease(),
                () -> target(request, tenant, paths));
        LockScope scope = LockScope.enter();
        try {
            LockScope.Coverage coverage = scope.cover(request.kind(), tenant, paths, request.mode(), request.permits());
            if (coverage.missing().isEmpty()) {
                return Optional.of(new NestedLock(request, null, coverage.enclosing(), scope));
            }
            Optional<LockHandle> handle = grant(request, tenant, coverage.missing(), wait, scope, failWhenBusy);
            if (handle.isEmpty()) {
                scope.leave(null);
                return handle;
            }
            return coverage.enclosing().isEmpty() ? handle
                    : Optional.of(new NestedLock(request, handle.get(), coverage.enclosing(), scope));
        }
        catch (RuntimeException ex) {
            scope.leave(null);
            throw ex;
        }
    }

    private Optional<LockHandle> grant(LockRequest request, Duration wait, LockScope scope, boolean failWhenBusy) {
        return grant(request, tenantOf(request), pathsOf(request), wait, scope, failWhenBusy);
    }

    private Optional<LockHandle> grant(LockRequest request, String tenant, List<LockPath> paths, Duration wait,
            LockScope scope, boolean failWhenBusy) {
        // counted before the check, so that close() waits for every acquisition that passed it
        acquiring.incrementAndGet();
        try {
            if (closed) {
                throw new LockUnavailableException("Could not acquire " + target(request, tenant, paths)
                        + ": the lock service is closed", null);
            }
            return grantWhileOpen(request, tenant, paths, wait, scope, failWhenBusy);
        }
        finally {
            acquiring.decrementAndGet();
        }
    }

    private Optional<LockHandle> grantWhileOpen(LockRequest request, String tenant, List<LockPath> paths,
            Duration wait, LockScope scope, boolean failWhenBusy) {
        Duration lease = request.lease() != null ? request.lease() : settings.defaultLease();
        String owner = scope != null ? scope.owner() : OwnerTokens.next();
        GrantRequest grantRequest = new GrantRequest(request.kind(), tenant, paths, request.mode(), lease,
                request.permits(), owner, OwnerTokens.next(), settings.nodeId(), Thread.currentThread().getName(), 0,
                scope != null && scope.holdsAny());
        long started = System.nanoTime();
        Attempt attempt = new Attempt(started);
        AcquireOutcome outcome = AcquireOutcome.ERROR;
        try {
            GrantResult result = attempt.run(request, grantRequest, wait);
            if (result.grant() == null) {
                // acquire/enter with a zero wait fail at once with the holders; only the try forms answer empty
                if (!failWhenBusy) {
                    outcome = AcquireOutcome.BUSY;
                    return Optional.empty();
                }
                outcome = AcquireOutcome.TIMEOUT;
                throw new LockTimeoutException("Lock " + target(request, tenant, paths), wait, result.conflicts());
            }
            if (closed) {
                // close() began meanwhile: nothing would renew the grant, and no work runs under it yet
                releaseUnwanted(result.grant(), grantRequest);
                throw new LockUnavailableException("the lock service closed while it was being acquired", null);
            }
            outcome = AcquireOutcome.ACQUIRED;
            return Optional.of(held(request, tenant, paths, lease, scope, result.grant(), attempt.sent));
        }
        catch (LockInterruptedException ex) {
            outcome = AcquireOutcome.INTERRUPTED;
            throw ex;
        }
        catch (DeadlockDetectedException ex) {
            outcome = AcquireOutcome.DEADLOCK;
            throw ex;
        }
        catch (LockUnavailableException ex) {
            // the store names its operation; the caller needs to know which lock it was
            throw new LockUnavailableException("Could not acquire " + target(request, tenant, paths) + ": "
                    + ex.getMessage(), ex);
        }
        finally {
            Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
            for (LockListener listener : listeners) {
                try {
                    listener.acquireFinished(request, outcome, elapsed, attempt.waited);
                }
                catch (RuntimeException ex) {
                    log.warn("Lock listener {} failed", listener, ex);
                }
            }
        }
    }

    /**
     * Asks the store for a grant. If that fails, the grant may still have committed with only its
     * answer lost; its request id is never used again, so the background retries release it by that
     * id: a grant nobody holds would otherwise keep everyone out until its lease ends (and a waiter
     * for a one-permit semaphore would wait for itself).
     */
    private GrantResult tryGrant(GrantRequest grantRequest) {
        try {
            return store.tryGrant(grantRequest);
        }
        catch (RuntimeException ex) {
            releaseUncertain(grantRequest);
            throw ex;
        }
    }

    /**
     * Has the background retries release whatever a grant under the request's id may have made;
     * the id must never be used again. If nothing was granted, the first retry releases nothing.
     */
    private void releaseUncertain(GrantRequest grantRequest) {
        releaseRetries.addUncertain(new Grant(grantRequest.grantId(), grantRequest.owner(), 0,
                grantRequest.paths().size(), null), target(grantRequest.kind(), grantRequest.mode(),
                        grantRequest.permits(), grantRequest.tenant(), grantRequest.paths()),
                () -> wakeups.released(grantRequest.kind(), grantRequest.tenant(), grantRequest.paths(),
                        LocalWakeups.Release.FREED));
    }

    /** One acquisition: a first try, then polls with backoff and local wake-ups until the wait ends. */
    private final class Attempt {

        private final long started;

        private long sent;

        private boolean waited;

        Attempt(long started) {
            this.started = started;
        }

        GrantResult run(LockRequest request, GrantRequest firstAsked, Duration wait) {
            sent = System.nanoTime();
            GrantRequest grantRequest = firstAsked;
            GrantResult result = tryGrant(grantRequest);
            if (result.grant() != null || wait.isZero()) {
                return result;
            }
            waited = true;
            long deadline = started + wait.toNanos();
            // queue up: from now on this request blocks later conflicting ones (no writer starvation)
            long enqueueing = System.nanoTime();
            GrantRequest queued = enqueue(grantRequest);
            long queuedAt = System.nanoTime();
            // a release whose notice was decided before this queue row committed sends none, but it commits
            // within about one commit's time, which the enqueue just took: look with the backoff until then
            long settledAt = queuedAt + 2 * (queuedAt - enqueueing);
            long renewQueueAt = queuedAt + settings.waiterLease().toNanos() / 3;
            long lookForDeadlockAt = System.nanoTime() + settings.deadlockCheckInterval().toNanos();
            BackOffExecution delays = backOff.start();
            boolean logged = false;
            boolean granted = false;
            boolean leftQueue = false;
            waiting.incrementAndGet();
            LocalWakeups.Waiter waiter = wakeups.register(queued);
            try {
                while (true) {
                    if (closed) {
                        throw new LockUnavailableException("the lock service closed while it was waiting", null);
                    }
                    long remaining = deadline - System.nanoTime();
                    if (remaining <= 0) {
                        return result;
                    }
                    long delay = delays.nextBackOff();
                    if (delay == BackOffExecution.STOP) {
                        delay = settings.backoffMax().toMillis();
                    }
                    if (System.nanoTime() - settledAt >= 0 && store.announcesReleases()) {
                        // other nodes' releases wake this waiter: polling only finds what sends no notice
                        delay = Math.max(delay, notifiedPollMillis());
                    }
                    boolean woken = waiter.await(Math.min(remaining, delay * 1_000_000L));
                    LocalWakeups.HandedOver handed = waiter.work(deadline);
                    if (handed != null && handed.uncertain()) {
                        // a grant under this request's id may have committed unseen: the retries release that
                        // id, and the wait goes on under a new one, at the back of the queue unless it had left it
                        GrantRequest before = queued;
                        releaseUncertain(before);
                        grantRequest = grantRequest.withGrantId(OwnerTokens.next());
                        if (leftQueue) {
                            queued = grantRequest.withTicket(before.ticket());
                        }
                        else {
                            leaveQueue(before);
                            queued = enqueue(grantRequest);
                            renewQueueAt = System.nanoTime() + settings.waiterLease().toNanos() / 3;
                        }
                        waiter.requeued(queued);
                        // the release may have woken this waiter in its old place: the next one's turn now
                        wakeups.left(before);
                    }
                    if (waiter.gaveUp()) {
                        // the wait ended during a hand-off: the releasing thread releases what it granted,
                        // so this request must not be granted again under the same grant id
                        return result;
                    }
                    if (handed != null && handed.granted()) {
                        // a release here granted this request in its own transaction
                        sent = handed.sentNanos();
                        granted = true;
                        return handed.result();
                    }
                    if (woken) {
                        // something was released: look again quickly
                        delays = backOff.start();
                    }
                    if (!pollBudget.await(deadline)) {
                        // no poll slot is free before the deadline. Giving up now would also forgo what needs no
                        // poll: a release of this JVM handing the lock over, or telling this waiter a place is free.
                        // Its queue rows go, though: kept without looks, they would hold up later requests on
                        // every node for nothing. Should a slot free up, it queues again, at the back.
                        if (!leftQueue) {
                            leaveQueue(queued);
                            leftQueue = true;
                            renewQueueAt = System.nanoTime();
                        }
                        if (waiter.takeOverlappingRelease()) {
                            sent = System.nanoTime();
                            result = tryGrant(queued);
                            if (result.grant() != null) {
                                granted = true;
                                return result;
                            }
                            wakeups.notTakenBy(queued);
                        }
                        continue;
                    }
                    long now = System.nanoTime();
                    if (now - renewQueueAt >= 0) {
                        if (leftQueue || !store.keepWaiting(queued, settings.waiterLease())) {
                            // the record lapsed (a long pause), or went for want of a poll slot: queue again, at the back
                            queued = enqueue(grantRequest);
                            waiter.requeued(queued);
                            leftQueue = false;
                        }
                        renewQueueAt = now + settings.waiterLease().toNanos() / 3;
                    }
                    if (queued.ownerHoldsLocks() && now - lookForDeadlockAt >= 0) {
                        failIfDeadlocked(queued);
                        lookForDeadlockAt = now + settings.deadlockCheckInterval().toNanos();
                    }
                    if (!logged && slowWait(started)) {
                        logged = true;
                        log.info("Still waiting after {} for {}: held by {}", Duration.ofNanos(now - started),
                                request, describe(result));
                    }
                    // a read-only look first keeps waiters from opening write transactions while the lock stays
                    // busy; right after a release here of an overlapping path the grant itself is the look
                    boolean told = waiter.takeOverlappingRelease();
                    List<LockHolder> conflicts = told ? List.of() : store.conflicts(queued);
                    if (!conflicts.isEmpty()) {
                        if (!sameHolders(conflicts, result.conflicts()) && !queuedBehind(queued, conflicts)) {
                            // the holders changed hands: a release was seen, so the next may come soon too
                            delays = backOff.start();
                        }
                        result = GrantResult.busy(conflicts);
                        continue;
                    }
                    sent = System.nanoTime();
                    result = tryGrant(queued);
                    if (result.grant() != null) {
                        granted = true;
                        return result;
                    }
                    if (told) {
                        wakeups.notTakenBy(queued);
                    }
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new LockInterruptedException("Interrupted while waiting for " + describe(queued), ex);
            }
            finally {
                waiting.decrementAndGet();
                LocalWakeups.HandedOver untaken = waiter.close();
                if (untaken != null && untaken.granted()) {
                    releaseUnwanted(untaken.result().grant(), queued);
                }
                else if (untaken != null && untaken.uncertain()) {
                    releaseUncertain(queued);
                }
                if (!granted) {
                    if (!leftQueue) {
                        leaveQueue(queued);
                    }
                    wakeups.left(queued);
                }
            }
        }
    }

    /**
     * Whether a request queued earlier is served before this one, so that the next release is not
     * this request's turn, and a change of holders need not quicken its looks. A busy semaphore's
     * holders change at every release; without this every waiter looked again within milliseconds of
     * each, however deep in the queue. For a semaphore an earlier waiter among the conflicts is not
     * enough: while fewer than its permits are held, that waiter and this one both fit after the next
     * release, so only more rows ahead than permits count. During a rolling change of the max a
     * holder's smaller max may apply; the rows do not carry it, so such a waiter counts against its
     * own max and may look more often than it needs to.
     */
    private static boolean queuedBehind(GrantRequest queued, List<LockHolder> conflicts) {
        if (queued.kind() == LockKind.SEMAPHORE) {
            return conflicts.size() > queued.permits();
        }
        for (LockHolder holder : conflicts) {
            if (holder.waiting()) {
                return true;
            }
        }
        return false;
    }

    private static boolean sameHolders(List<LockHolder> a, List<LockHolder> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (a.get(i).lockId() != b.get(i).lockId()) {
                return false;
            }
        }
        return true;
    }

    /** The notified poll interval, short enough that the queue record is renewed in time. */
    private long notifiedPollMillis() {
        return Math.min(settings.notifiedPollInterval().toMillis(), settings.waiterLease().toMillis() / 4);
    }

    /**
     * Queues a waiting request. A failure may hide a queue row that committed all the same, which
     * would hold back later conflicting requests on every node until its lease: it is removed again.
     */
    private GrantRequest enqueue(GrantRequest request) {
        try {
            return request.withTicket(store.enqueue(request, settings.waiterLease()));
        }
        catch (RuntimeException ex) {
            leaveQueue(request);
            throw ex;
        }
    }

    private void leaveQueue(GrantRequest queued) {
        uninterrupted(() -> {
            try {
                store.dequeue(queued);
            }
            catch (RuntimeException ex) {
                log.debug("Could not leave the wait queue; the record lapses with its lease: {}", ex.toString());
            }
        });
    }

    private void failIfDeadlocked(GrantRequest queued) {
        if (queued.kind() == LockKind.SEMAPHORE) {
            return;
        }
        new WaitForGraph(store.waitGraph(queued.kind(), queued.tenant())).cycleToBreak(queued.owner()).ifPresent(cycle -> {
            String description = String.join(", which waits for ", cycle.stream().map(LockHolder::describe).toList());
            throw new DeadlockDetectedException("Deadlock: " + describe(queued) + " waits for " + description
                    + ", which waits for this request; it is the youngest in the cycle and gives up", cycle);
        });
    }

    private static String describe(GrantRequest request) {
        return target(request.kind(), request.mode(), request.permits(), request.tenant(), request.paths()) + " (node "
                + request.node() + ", thread " + request.thread() + ")";
    }

    private boolean slowWait(long started) {
        Duration threshold = settings.slowWaitLog();
        return threshold != null && System.nanoTime() - started > threshold.toNanos();
    }

    private static String describe(GrantResult result) {
        return result.conflicts().isEmpty() ? "(holders just left)" : LockTimeoutException.describe(result.conflicts());
    }

    /**
     * What a request locks, in the words every message uses: {@code EXCLUSIVE /a in tenant 't'},
     * {@code singleton 'x' in tenant 't'}, {@code semaphore 'x' (max 10) in tenant 't'}.
     */
    static String target(LockRequest request, String tenant, List<LockPath> paths) {
        return target(request.kind(), request.mode(), request.permits(), tenant, paths);
    }

    private static String target(LockKind kind, LockMode mode, int permits, String tenant, List<LockPath> paths) {
        String what = switch (kind) {
            case PATH -> mode + " " + MessageText.paths(paths);
            case SINGLETON -> "singleton " + MessageText.quoted(paths.get(0).value());
            case SEMAPHORE -> "semaphore " + MessageText.quoted(paths.get(0).value()) + " (max " + permits + ")";
        };
        return what + " in tenant " + MessageText.quoted(tenant);
    }

    private GrantedLock held(LockRequest request, String tenant, List<LockPath> paths, Duration lease, LockScope scope,
            Grant grant, long sent) {
        GrantedLock handle = new GrantedLock(this, request, tenant, paths, lease, scope, grant, sent);
        live.add(handle);
        if (scope != null) {
            scope.add(request.kind(), tenant, paths, request.mode(), request.permits(), handle);
            renewer.register(handle);
        }
        return handle;
    }

    /**
     * Puts a handle taken with {@link #acquire} under the watchdog, like the scoped forms.
     *
     * @param handle a handle of this service
     * @return the handle
     * @throws IllegalArgumentException if the handle is not a live one of this service, or its lease is
     *         shorter than {@link LockSettings#shortestWatchedLease()}; the handle is then released
     */
    public LockHandle keepRenewed(LockHandle handle) {
        if (!(handle instanceof GrantedLock granted) || !live.contains(granted)) {
            throw new IllegalArgumentException("Not a live handle of this service: " + handle);
        }
        try {
            checkRenewable(granted.lease(), granted::describe);
        }
        catch (IllegalArgumentException ex) {
            // the caller passes the handle on (the Quartz listener) and would keep nothing to release
            try {
                granted.release();
            }
            catch (RuntimeException releaseFailure) {
                ex.addSuppressed(releaseFailure);
            }
            throw ex;
        }
        renewer.register(granted);
        return handle;
    }

    /**
     * The watchdog looks for leases due every {@link LockSettings#renewalTick() tick} and renews them a
     * third of the way in: a lease shorter than three ticks could run out before its first renewal.
     */
    private void checkRenewable(Duration lease, Supplier<String> what) {
        Duration shortest = settings.shortestWatchedLease();
        if (lease.compareTo(shortest) < 0) {
            throw new IllegalArgumentException("The lease of " + lease.toMillis() + " ms for " + what.get()
                    + " is too short for the watchdog, which looks every " + settings.renewalTick().toMillis()
                    + " ms and needs at least " + shortest.toMillis() + " ms to renew it in time: give it a longer lease");
        }
    }

    /**
     * @return releases of this service the store could not take, still being retried in the
     *         background (until they succeed or their lease has run out)
     */
    public int pendingReleaseCount() {
        return releaseRetries.size();
    }

    /** Called once per handle when it is released; returns whether the store still had it. */
    boolean released(GrantedLock handle) {
        // work cancelled with Future.cancel(true) releases in its finally block, interrupted: a pool
        // with no idle connection refuses such a thread at once (HikariCP does), and the lock would
        // wait for the background retry while the waiter claimed for a hand-off woke with nothing
        boolean interrupted = Thread.interrupted();
        try {
            return releaseNow(handle);
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private boolean releaseNow(GrantedLock handle) {
        // a lock the watchdog renewed stays renewed while its release waits for the caller's transaction
        PendingRelease renewal = renewer.unregister(handle) ? renewer.untilReleased(handle) : PendingRelease.NONE;
        live.remove(handle);
        Duration keep = handle.request().lockAtLeastFor();
        // a lock kept for lockAtLeastFor stays held: its waiters look before they try
        LocalWakeups.Release plain = keep.isZero() ? LocalWakeups.Release.FREED : LocalWakeups.Release.KEPT;
        LocalWakeups.Release outcome = plain;
        WakeAtTransactionEnd pending = new WakeAtTransactionEnd(handle, plain, renewal);
        try {
            // once closing, a hand-off would give the lock to a waiter of this closing JVM
            if (outcome == LocalWakeups.Release.FREED && !closed) {
                ReleasedByHandOver byHandOver = handOver(handle);
                if (byHandOver != null) {
                    outcome = byHandOver.outcome();
                    return byHandOver.released();
                }
            }
            return store.release(handle.grant(), keep, pending);
        }
        catch (LockUnavailableException ex) {
            String retried;
            if (ex instanceof ReleaseDeferredException) {
                retried = "; it is released again when the caller's transaction ends";
            }
            else if (releaseRetries.add(handle, () -> wake(handle, plain))) {
                retried = "; retrying in the background until its lease runs out";
            }
            else {
                retried = "; its lease will free it";
            }
            // the store names the operation; the caller needs to know which lock it was
            throw new LockUnavailableException("Could not release " + handle.describe() + ": " + ex.getMessage() + retried,
                    ex);
        }
        finally {
            if (handle.scope() != null) {
                handle.scope().leave(handle);
            }
            if (!pending.waitsForTransaction()) {
                wake(handle, outcome);
            }
            for (LockListener listener : listeners) {
                try {
                    listener.released(handle);
                }
                catch (RuntimeException ex) {
                    log.warn("Lock listener {} failed", listener, ex);
                }
            }
        }
    }

    /** Tells the waiters of this JVM on the handle's paths what its release did. */
    private void wake(GrantedLock handle, LocalWakeups.Release outcome) {
        wakeups.released(handle.request().kind(), handle.tenant(), handle.paths(), outcome);
    }

    /**
     * Releases {@code handle} and grants the local waiter queued first in one transaction, if a
     * waiter of this JVM is asleep on an overlapping path.
     *
     * @return whether the handle was released and what its waiters are to hear, or null if nothing was
     *         handed over and the handle is still to be released
     */
    private ReleasedByHandOver handOver(GrantedLock handle) {
        LocalWakeups.Waiter next = wakeups.claimFirst(handle.request().kind(), handle.tenant(), handle.paths());
        if (next == null) {
            return null;
        }
        // read once: the waiter may queue again as soon as it has the answer
        GrantRequest handedTo = next.request();
        long sent = System.nanoTime();
        HandOff handOff = null;
        boolean answered = false;
        boolean discarded = false;
        try {
            handOff = store.releaseAndGrant(handle.grant(), handedTo);
            answered = true;
        }
        catch (RuntimeException ex) {
            // rolled back whole, or committed with only its answer lost: the plain release follows, and
            // the waiter, whose request id may hold a grant now, tries again under a new one
            log.debug("Handing {} over to a waiter failed: {}", handle.describe(), ex.toString());
        }
        finally {
            boolean failed = !answered;
            LocalWakeups.HandedOver handed = new LocalWakeups.HandedOver(handOff == null ? null : handOff.next(), sent,
                    failed);
            if (answered && handOff == null) {
                // declined (the release waits for the caller's transaction, for instance): the waiter
                // sleeps on, and hears of the release when it is made
                next.unclaim();
            }
            else if (next.deliver(handed)) {
                if (handed.granted()) {
                    handOffs.incrementAndGet();
                }
                else if (handOff != null) {
                    wakeups.notTakenBy(handedTo);
                }
            }
            else if (handed.granted()) {
                releaseUnwanted(handed.result().grant(), handedTo);
                discarded = true;
            }
            else if (failed) {
                // the waiter left: its request id is never used again
                releaseUncertain(handedTo);
            }
        }
        if (handOff == null) {
            return null;
        }
        // a grant released again freed the lock after all: the other waiters must hear of it
        return new ReleasedByHandOver(handOff.released(),
                discarded ? LocalWakeups.Release.FREED : LocalWakeups.Release.HANDED_OVER);
    }

    /**
     * A release the store puts off until the caller's transaction ends: the lease stays renewed, a
     * release that then fails is retried, and this JVM's waiters hear of the release when it is made
     * (or when a retry succeeds or gives up at the lease's end). Woken at the call, they would find
     * the lock still held and sleep through its freeing until their next poll. A release that joins a
     * commit already under way wakes them at the call too: they meet its row locks or its rows, and
     * hear again at the end.
     */
    private final class WakeAtTransactionEnd implements PendingRelease {

        private final GrantedLock handle;

        private final LocalWakeups.Release outcome;

        private final PendingRelease renewal;

        /** Set on the releasing thread, inside the store's release, and read there after it. */
        private boolean started;

        /** Set and read on the thread that ends the caller's transaction. */
        private boolean retried;

        WakeAtTransactionEnd(GrantedLock handle, LocalWakeups.Release outcome, PendingRelease renewal) {
            this.handle = handle;
            this.outcome = outcome;
            this.renewal = renewal;
        }

        /** @return whether the release waits for the caller's transaction, which will wake the waiters */
        boolean waitsForTransaction() {
            return started;
        }

        @Override
        public void started() {
            started = true;
            renewal.started();
        }

        @Override
        public void failed() {
            retried = releaseRetries.addTakenOver(handle, () -> wake(handle, outcome));
        }

        @Override
        public void ended() {
            renewal.ended();
            if (!retried) {
                wake(handle, outcome);
            }
        }
    }

    /** A release done by {@link #handOver}: its answer, and what it did for the other waiters. */
    private record ReleasedByHandOver(boolean released, LocalWakeups.Release outcome) {
    }

    /**
     * Releases a grant made for a waiter that had stopped waiting before it could take it. The
     * waiter's own thread may come here interrupted ({@link #uninterrupted}) or inside its
     * transaction, which the grant was never part of, so the release never joins it.
     *
     * @param request what was granted: the waiters of this JVM on its paths hear that they are free
     */
    private void releaseUnwanted(Grant grant, GrantRequest request) {
        // its paths may reach beyond the release that handed it over, or the waiter's leaving
        Runnable wake = () -> wakeups.released(request.kind(), request.tenant(), request.paths(),
                LocalWakeups.Release.FREED);
        uninterrupted(() -> {
            try {
                store.discard(grant);
                wake.run();
            }
            catch (RuntimeException ex) {
                if (releaseRetries.addUnwanted(grant, wake)) {
                    log.warn("Could not release the lock with token {} granted to a waiter that had given up;"
                            + " retrying in the background: {}", grant.fencingToken(), ex.toString());
                }
            }
        });
    }

    /**
     * Runs a waiter's clean-up with its interrupt flag cleared, and sets it again after: the thread
     * may be leaving because it was interrupted, and a pool with no idle connection refuses an
     * interrupted thread at once (HikariCP does), which would leave the clean-up undone.
     */
    private static void uninterrupted(Runnable cleanUp) {
        boolean interrupted = Thread.interrupted();
        try {
            cleanUp.run();
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    void leaseLost(GrantedLock handle, String reason) {
        log.warn("Lost lock {}: {}", handle.describe(), reason);
        for (LockListener listener : listeners) {
            try {
                listener.leaseLost(handle, reason);
            }
            catch (RuntimeException ex) {
                log.warn("Lock listener {} failed", listener, ex);
            }
        }
    }

    private void purge() {
        try {
            int purged = store.purgeExpired();
            if (purged > 0) {
                log.debug("Purged {} expired lock row(s)", purged);
            }
        }
        catch (RuntimeException ex) {
            log.warn("Purging expired locks failed: {}", ex.toString());
        }
    }

    private String tenantOf(LockRequest request) {
        return request.tenant() != null ? request.tenant() : settings.defaultTenant();
    }

    private List<LockPath> pathsOf(LockRequest request) {
        if (request.kind() != LockKind.PATH) {
            return List.of(LockPath.flat(request.keys().get(0)));
        }
        if (request.keys().size() > settings.maxPathsPerRequest()) {
            throw new IllegalArgumentException("A lock request may name at most " + settings.maxPathsPerRequest()
                    + " paths, this one names " + request.keys().size());
        }
        List<LockPath> paths = new ArrayList<>(request.keys().size());
        for (String key : request.keys()) {
            paths.add(settings.pathNormalizer().normalize(key));
        }
        List<LockPath> merged = LockPath.merge(paths);
        checkSize(merged);
        return merged;
    }

    /**
     * Refuses a request whose paths together are too large for one conflict check on every database:
     * the store would fail it as if the database were down.
     */
    private static void checkSize(List<LockPath> paths) {
        if (paths.size() == 1) {
            // one path is within every limit (at most LONGEST_MAX_LENGTH characters, fewer ancestors):
            // the common acquire builds no set for nothing
            return;
        }
        Set<LockPath> covered = new HashSet<>();
        long characters = 0;
        for (LockPath path : paths) {
            covered.add(path);
            covered.addAll(path.ancestors());
            characters += path.value().length();
        }
        if (covered.size() > LockSettings.MOST_KEYS_PER_REQUEST) {
            throw new IllegalArgumentException("A lock request may cover at most " + LockSettings.MOST_KEYS_PER_REQUEST
                    + " paths and ancestors together, this one covers " + covered.size() + " (" + paths.size()
                    + " paths): lock a common ancestor instead");
        }
        if (characters > LockSettings.MOST_CHARACTERS_PER_REQUEST) {
            throw new IllegalArgumentException("The paths of a lock request may have at most "
                    + LockSettings.MOST_CHARACTERS_PER_REQUEST + " characters together, this one's have " + characters
                    + " (" + paths.size() + " paths): lock a common ancestor instead");
        }
    }

    /**
     * Refuses new locks, waits up to {@link LockSettings#shutdownWait()} for the work under the
     * watchdog (annotated methods, {@code call}, Quartz's running locks) to end, renewing its leases
     * meanwhile, then stops the watchdog and the purge and releases every other grant this service
     * still holds, so that other nodes need not wait for those leases to run out.
     * <p>
     * Locks of watched work that is still running are not released but left to their leases: the
     * work may go on while the context closes (Quartz does not wait for its jobs by default, a
     * request may outlast the graceful shutdown), and a release would let another node start the
     * same work beside it.
     */
    @Override
    public void close() {
        closed = true;
        if (purging != null) {
            purging.cancel(false);
        }
        awaitWatchedWork();
        Set<GrantedLock> stillWorking = renewer.watched();
        renewer.close();
        for (GrantedLock handle : List.copyOf(live)) {
            if (stillWorking.contains(handle) && handle.isHeld()) {
                log.warn("On shutdown, {} was still held by work that had not ended after {} ms; not releasing it"
                        + " while that work may still run: its lease frees it", handle.describe(),
                        settings.shutdownWait().toMillis());
                continue;
            }
            try {
                handle.release();
            }
            catch (RuntimeException ex) {
                log.warn("On shutdown, could not release {}: {}", handle.describe(), ex.getMessage());
            }
        }
        releaseRetries.close();
        store.close();
        if (ownScheduler != null) {
            ownScheduler.shutdown();
        }
    }

    private void awaitWatchedWork() {
        long deadline = System.nanoTime() + settings.shutdownWait().toNanos();
        // a short poll: shutdown is rare, and a condition signalled by every release would cost each one;
        // acquisitions under way see the closed flag and end within a backoff step
        while ((acquiring.get() > 0 || renewer.size() > 0) && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(SHUTDOWN_POLL_MILLIS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
