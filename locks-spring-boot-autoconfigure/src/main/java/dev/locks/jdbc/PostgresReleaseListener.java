package dev.locks.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.function.BiConsumer;

import javax.sql.DataSource;

import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.locks.LockKind;

/**
 * Listens on PostgreSQL's LISTEN/NOTIFY channel for releases made by other nodes and tells the
 * engine at once, so that a waiter gets a freed lock in about a round trip instead of at its next
 * poll. Keeps one connection of the pool for itself, and reconnects after a database restart.
 * It claims to be {@link #listening()} only once a notice has come back to it, its own probe at
 * first: a LISTEN can succeed where notices never arrive, and a dropped connection can stay silent.
 */
final class PostgresReleaseListener implements ReleaseListener {

    private static final Logger log = LoggerFactory.getLogger(PostgresReleaseListener.class);

    /** How long the connection may stay silent before the listener asks whether it is still there. */
    private static final Duration CHECK_AFTER_SILENCE = Duration.ofSeconds(5);

    /** How long sending a probe may wait for the server's reply before the connection counts as gone. */
    private static final Duration PROBE_NETWORK_TIMEOUT = Duration.ofSeconds(2);

    /** How long a probe notice may take to come back before waiters stop relying on notices. */
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);

    private static final char PROBE = '!';

    private final DataSource dataSource;

    private final String channel;

    private final ReleaseOrigin self;

    private final BiConsumer<LockKind, String> subscriber;

    private final Thread thread;

    private volatile boolean running = true;

    private volatile boolean listening;

    private boolean warnedUnheard;

    PostgresReleaseListener(DataSource dataSource, String channel, ReleaseOrigin self,
            BiConsumer<LockKind, String> subscriber) {
        this.dataSource = dataSource;
        this.channel = channel;
        this.self = self;
        this.subscriber = subscriber;
        this.thread = new Thread(this::listen, "locks-pg-listener");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    private void listen() {
        // a notice of this listener's own, which no release sends: no lock kind has the code '!'
        String probe = PROBE + self.tag();
        while (running) {
            try (Connection connection = dataSource.getConnection()) {
                connection.setAutoCommit(true);
                try (Statement st = connection.createStatement()) {
                    // quoted: pg_notify keeps the channel name's case, an unquoted LISTEN would fold it
                    st.execute("LISTEN \"" + channel + "\"");
                }
                PGConnection pg = connection.unwrap(PGConnection.class);
                // waiters may rely on notices only once one has come back: LISTEN succeeds through poolers
                // that never pass notices on (PgBouncer in transaction mode)
                long probeSentAt = sendProbe(connection, probe);
                long heardAt = probeSentAt;
                boolean probing = true;
                boolean heardAny = false;
                while (running) {
                    PGNotification[] notifications = pg.getNotifications(500);
                    long now = System.nanoTime();
                    if (notifications != null && notifications.length > 0) {
                        // anything heard proves the channel works
                        heardAt = now;
                        probing = false;
                        heardAny = true;
                        listening = true;
                        for (PGNotification n : notifications) {
                            take(n.getParameter());
                        }
                    }
                    if (probing && now - probeSentAt > PROBE_TIMEOUT.toNanos()) {
                        probing = false;
                        heardAt = now;
                        notHeard(heardAny);
                    }
                    if (!probing && now - heardAt > CHECK_AFTER_SILENCE.toNanos()) {
                        // a connection dropped without a reset (a NAT or proxy forgetting it) never fails the
                        // wait for notices; the probe's network timeout does
                        probeSentAt = sendProbe(connection, probe);
                        probing = true;
                    }
                }
            }
            catch (SQLException | RuntimeException ex) {
                if (running) {
                    log.debug("Release notifications interrupted, reconnecting: {}", ex.toString());
                    pause();
                }
            }
            finally {
                // whatever ends the connection (an Error too) ends what waiters may rely on
                listening = false;
            }
        }
    }

    private long sendProbe(Connection connection, String probe) throws SQLException {
        // bounded: on a connection that dropped without a reset, a reply would be awaited for minutes
        int previous = connection.getNetworkTimeout();
        connection.setNetworkTimeout(Runnable::run, (int) PROBE_NETWORK_TIMEOUT.toMillis());
        try (PreparedStatement ps = connection.prepareStatement("SELECT pg_notify(?, ?)")) {
            ps.setString(1, channel);
            ps.setString(2, probe);
            ps.execute();
        }
        finally {
            connection.setNetworkTimeout(Runnable::run, previous);
        }
        return System.nanoTime();
    }

    /**
     * The probe did not come back in time: waiters poll with their backoff until a notice arrives.
     *
     * @param heardBefore whether this connection has heard notices before (then it is a slow moment,
     *                    not a pooler that never passes notices on)
     */
    private void notHeard(boolean heardBefore) {
        listening = false;
        if (heardBefore) {
            log.debug("A release notice probe on channel {} did not come back within {}", channel, PROBE_TIMEOUT);
        }
        else if (!warnedUnheard) {
            warnedUnheard = true;
            log.warn("Release notices sent on channel {} do not come back to this node within {}: waiters poll "
                    + "with their backoff. Behind a pooler that does not carry LISTEN, set "
                    + "locks.jdbc.release-notifications=false", channel, PROBE_TIMEOUT);
        }
    }

    /** One notice: the kind's code, the sender's origin tag, then the tenant; or a listener's probe. */
    private void take(String payload) {
        int tenantAt = 1 + ReleaseOrigin.TAG_LENGTH;
        if (payload != null && payload.length() > tenantAt && payload.charAt(0) != PROBE
                && !self.sent(payload.substring(1, tenantAt))) {
            deliver(payload.charAt(0), payload.substring(tenantAt));
        }
    }

    private void deliver(char kindCode, String tenant) {
        LockKind kind;
        try {
            kind = LockKind.ofCode(kindCode);
        }
        catch (IllegalArgumentException ex) {
            // a newer node's kind: dropping the connection for it would lose the notices behind it
            log.debug("Ignoring a release notice of unknown kind '{}'", kindCode);
            return;
        }
        subscriber.accept(kind, tenant);
    }

    private void pause() {
        try {
            Thread.sleep(1000);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    @Override
    public boolean listening() {
        return listening && running;
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
    }
}
