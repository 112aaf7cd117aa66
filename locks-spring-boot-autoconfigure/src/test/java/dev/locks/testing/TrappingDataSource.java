package dev.locks.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import javax.sql.DataSource;

/**
 * A DataSource that, once armed, stalls or fails the next statement whose SQL matches before it
 * reaches the database: a garbage-collection pause, a SIGSTOP, a slow network or a dropped
 * connection between two statements of one store operation, made deterministic.
 */
public final class TrappingDataSource {

    private final DataSource proxy;

    private final Predicate<String> matches;

    private final AtomicReference<Duration> armed = new AtomicReference<>();

    private volatile String failure;

    private final AtomicInteger failuresLeft = new AtomicInteger();

    public TrappingDataSource(DataSource target, Predicate<String> matches) {
        this.matches = matches;
        this.proxy = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { DataSource.class },
                (p, method, args) -> {
                    Object result = invoke(target, method, args);
                    return result instanceof Connection c ? connection(c) : result;
                });
    }

    /**
     * Matches a release's {@code DELETE} of a grant's rows in the tables of {@code prefix}, and not
     * the watchdog's purge of expired rows, which also deletes from the held table (once as soon as a
     * service starts) and would otherwise take a failure meant for the release.
     */
    public static Predicate<String> releasesIn(String prefix) {
        return sql -> sql.contains("DELETE FROM " + prefix + "held WHERE grant_id");
    }

    /**
     * Matches what {@link #releasesIn} does and a release's look at whether its grant is live, which
     * takes the place of the {@code DELETE} until the commit where a release waits for it.
     */
    public static Predicate<String> releasesAndLooksIn(String prefix) {
        return releasesIn(prefix).or(sql -> sql.contains("SELECT COUNT(*) FROM " + prefix + "held WHERE grant_id"));
    }

    public DataSource dataSource() {
        return proxy;
    }

    /** The next matching statement waits this long before it is prepared. */
    public void stallNext(Duration stall) {
        armed.set(stall);
    }

    /** The next {@code times} matching statements fail with this message instead of being prepared. */
    public void failNext(String message, int times) {
        failure = message;
        failuresLeft.set(times);
    }

    private Connection connection(Connection target) {
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Connection.class },
                (p, method, args) -> {
                    if (method.getName().equals("prepareStatement") && args != null && args[0] instanceof String sql
                            && matches.test(sql)) {
                        if (failuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                            throw new SQLException(failure, "08006");
                        }
                        Duration stall = armed.getAndSet(null);
                        if (stall != null) {
                            Thread.sleep(stall.toMillis());
                        }
                    }
                    return invoke(target, method, args);
                });
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        }
        catch (InvocationTargetException ex) {
            throw ex.getCause();
        }
    }
}
