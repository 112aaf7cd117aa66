/**
 * The small service-provider interface between the lock engine ({@code dev.locks}) and a store
 * ({@code dev.locks.jdbc}). A store grants, renews and releases leases atomically; waiting,
 * re-entry and renewal scheduling stay in the engine.
 */
package dev.locks.store;
