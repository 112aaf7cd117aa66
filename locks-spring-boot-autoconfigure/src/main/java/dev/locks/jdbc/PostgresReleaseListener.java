package dev.locks.jdbc;

import java.sql.Connection;
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
 */
final class PostgresReleaseListener implements ReleaseListener {

    private static final Logger log = LoggerFactory.getLogger(PostgresReleaseListener.class);

    /** How long the connection may stay silent before the listener asks whether it is still there. */
    private static final Duration CHECK_AFTER_SILENCE = Duration.ofSeconds(5);

    private static final int CHECK_TIMEOUT_SECONDS = 2;

    private final DataSource dataSource;

    private final String channel;

    private final ReleaseOrigin self;

    private final BiConsumer<LockKind, String> subscriber;

    private final Thread thread;

    private volatile boolean running = true;

    private volatile boolean listening;


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
        while (running) {
            try (Connection connection = dataSource.getConnection()) {
                connection.setAutoCommit(true);
                try (Statement st = connection.createStatement()) {
                    // quoted: pg_notify keeps the channel name's case, an unquoted LISTEN would fold it
                    st.execute("LISTEN \"" + channel + "\"");
                }
                listening = true;
                PGConnection pg = connection.unwrap(PGConnection.class);
                long checkAt = System.nanoTime() + CHECK_AFTER_SILENCE.toNanos();
                while (running) {
                    PGNotification[] notifications = pg.getNotifications(500);
                    if (notifications == null || notifications.length == 0) {
                        if (System.nanoTime() - checkAt >= 0) {
                            // a connection dropped without a reset (a NAT or proxy forgetting it) never fails
                            // the wait for notices: ask the server, so that waiters poll again if it is gone
                            if (!connection.isValid(CHECK_TIMEOUT_SECONDS)) {
                                throw new SQLException("The release listener's connection stopped answering");
                            }
                            checkAt = System.nanoTime() + CHECK_AFTER_SILENCE.toNanos();
                        }
                        continue;
                    }
                    checkAt = System.nanoTime() + CHECK_AFTER_SILENCE.toNanos();
                    for (PGNotification n : notifications) {
                        // the payload is the kind's code, the sender's origin tag, then the tenant
                        String payload = n.getParameter();
                        int tenantAt = 1 + ReleaseOrigin.TAG_LENGTH;
                        if (payload != null && payload.length() > tenantAt
                                && !self.sent(payload.substring(1, tenantAt))) {
                            deliver(payload.charAt(0), payload.substring(tenantAt));
                        }
                    }
                }
            }
            catch (SQLException | RuntimeException ex) {
                listening = false;
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
