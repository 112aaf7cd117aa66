package dev.locks.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;

import dev.locks.store.LockStore;

/** A {@link LockStore} whose every call passes through a test's hands on its way to the real store. */
public final class InterceptedStore {

    /** What a test does around one store call. */
    @FunctionalInterface
    public interface Interception {

        /**
         * @param method the name of the store method called
         * @param args its arguments
         * @param call the call on the real store, to be made or not
         * @return the answer to give the caller
         */
        Object around(String method, Object[] args, StoreCall call) throws Throwable;
    }

    /** The intercepted call, made on the real store. */
    @FunctionalInterface
    public interface StoreCall {

        Object proceed() throws Throwable;
    }

    private InterceptedStore() {
    }

    public static LockStore of(LockStore store, Interception interception) {
        return (LockStore) Proxy.newProxyInstance(LockStore.class.getClassLoader(), new Class<?>[] { LockStore.class },
                (proxy, method, args) -> interception.around(method.getName(), args, () -> {
                    try {
                        return method.invoke(store, args);
                    }
                    catch (InvocationTargetException ex) {
                        throw ex.getCause();
                    }
                }));
    }
}
