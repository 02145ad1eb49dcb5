/*
 * The floor of the Java API's uncontended acquire: what the contract of AsyncSemaphore.acquire() forces, and
 * nothing else. The contract: acquire() returns a CompletableFuture of a Permit, a per-acquisition handle whose
 * close() releases exactly once (a second close, on any thread, does nothing). So an acquisition granted at
 * once needs, at the least: the exact CAS that takes the permit (ExactCasFloor), one object that is both the
 * handle and its own completed future (completing it is a CAS on the future's result), and the CAS of the
 * close-once flag before the release CAS.
 *
 * Invariants: acquire() never waits (it throws if the permit is taken: the floor is for the uncontended row);
 * a Permit is completed with itself before it is returned; close() releases once.
 */
package dev.semaphore.benchmarks;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/** An exact-CAS semaphore whose acquire() returns a close-once handle that is its own completed future. */
public final class PermitContractFloor {
    private final ExactCasFloor semaphore;

    /** A floor with {@code permits} permits. */
    public PermitContractFloor(int permits) {
        semaphore = new ExactCasFloor(permits);
    }

    /** Takes one permit now (never waits) and returns its handle, already completed with itself. */
    public CompletableFuture<Handle> acquire() {
        if (!semaphore.tryAcquire()) throw new IllegalStateException("the contract floor never waits: no permit is free");
        return new Handle(semaphore);
    }

    /** The per-acquisition handle: its own future, closed once. */
    public static final class Handle extends CompletableFuture<Handle> implements AutoCloseable {
        private static final AtomicIntegerFieldUpdater<Handle> CLOSED =
                AtomicIntegerFieldUpdater.newUpdater(Handle.class, "closed");

        private final ExactCasFloor semaphore;
        private volatile int closed;

        Handle(ExactCasFloor semaphore) {
            this.semaphore = semaphore;
            super.complete(this);
        }

        /** Releases the permit the first time; later calls do nothing. */
        @Override
        public void close() {
            if (closed == 0 && CLOSED.compareAndSet(this, 0, 1)) semaphore.release();
        }
    }
}
