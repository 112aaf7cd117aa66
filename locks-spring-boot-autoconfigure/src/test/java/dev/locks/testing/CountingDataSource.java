package dev.locks.testing;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

/**
 * Counts the statements executed through a DataSource (each one a round trip), and commits and
 * rollbacks, so that tests can pin how many round trips an operation costs.
 */
public final class CountingDataSource {

    /** The thread of PostgreSQL's release listener, which talks to the database in the background. */
    public static final String LISTENER_THREAD = "locks-pg-listener";

    // two counters, not a total and a part: a background statement between two reads must not skew either
    private final AtomicInteger operationStatements = new AtomicInteger();

    private final AtomicInteger listenerStatements = new AtomicInteger();

    private final DataSource proxy;

    public CountingDataSource(DataSource target) {
        this.proxy = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { DataSource.class },
                (p, method, args) -> {
                    Object result = invoke(target, method, args);
                    if (result instanceof Connection connection) {
                        return wrap(connection, Connection.class);
                    }
                    return result;
                });
    }

    /** @return the counting DataSource */
    public DataSource dataSource() {
        return proxy;
    }

    /** @return statements executed, commits and rollbacks included */
    public int statements() {
        return operationStatements.get() + listenerStatements.get();
    }

    /**
     * @return the statements of {@link #statements()} that the release listener sent: its LISTEN, and
     *         the probes it sends itself after a silence, whenever that falls
     */
    public int listenerStatements() {
        return listenerStatements.get();
    }

    /** @return statements executed by every thread but the release listener's */
    public int operationStatements() {
        return operationStatements.get();
    }

    public void reset() {
        operationStatements.set(0);
        listenerStatements.set(0);
    }

    private <T> T wrap(T target, Class<T> type) {
        InvocationHandler handler = (p, method, args) -> {
            String name = method.getName();
            if (name.startsWith("execute") || name.equals("commit") || name.equals("rollback")) {
                if (Thread.currentThread().getName().equals(LISTENER_THREAD)) {
                    listenerStatements.incrementAndGet();
                }
                else {
                    operationStatements.incrementAndGet();
                }
            }
            Object result = invoke(target, method, args);
            if (result instanceof java.sql.PreparedStatement ps && !(result instanceof java.sql.CallableStatement)) {
                return wrap(ps, java.sql.PreparedStatement.class);
            }
            if (result instanceof Statement st && !(result instanceof java.sql.PreparedStatement)) {
                return wrap(st, Statement.class);
            }
            return result;
        };
        return type.cast(Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { type }, handler));
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
