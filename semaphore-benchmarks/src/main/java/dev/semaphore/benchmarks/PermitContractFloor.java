package dev.semaphore.benchmarks;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * The floor of JavaUncontendedBenchmark's acquireRelease row: what the contract of AsyncSemaphore.acquire() forces on an
 * acquisition granted at once, the exact CAS of ExactCasFloor, a close-once handle (a CAS of its closed flag, then the
 * release CAS) and the JDK's completed future around it; and, without the future ({@link #acquireNow()}), the floor of
 * the acquireBlockingRelease row (acquireBlocking() returns the same handle). It never waits. Why:
 * docs/benchmarking.md#floors.
 */
public final class PermitContractFloor {
    private final ExactCasFloor semaphore;

    public PermitContractFloor(int permits) {
        semaphore = new ExactCasFloor(permits);
    }

    /** Takes one permit now (it throws if none is free) and returns its handle in the JDK's completed future. */
    public CompletableFuture<Handle> acquire() {
        return CompletableFuture.completedFuture(acquireNow());
    }

    /** Takes one permit now (it throws if none is free) and returns its handle: the blocking form's floor. */
    public Handle acquireNow() {
        if (!semaphore.tryAcquire()) throw new IllegalStateException("the contract floor never waits: no permit is free");
        return new Handle(semaphore);
    }

    /** A close-once handle, as the library's Permit is. */
    public static final class Handle implements AutoCloseable {
        private static final AtomicIntegerFieldUpdater<Handle> CLOSED = AtomicIntegerFieldUpdater.newUpdater(Handle.class, "closed");

        private final ExactCasFloor semaphore;
        private volatile int closed;

        Handle(ExactCasFloor semaphore) { this.semaphore = semaphore; }

        /** Releases the permit the first time; later calls do nothing. */
        @Override
        public void close() {
            if (closed == 0 && CLOSED.compareAndSet(this, 0, 1)) semaphore.release();
        }
    }
}
