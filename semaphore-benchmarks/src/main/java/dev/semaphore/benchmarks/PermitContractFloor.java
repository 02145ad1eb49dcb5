/*
 * The floor of the Java API's uncontended acquire: what the contract of AsyncSemaphore.acquire() forces, and
 * nothing else. The contract (since API 1.0, issue 27): acquire() returns a CompletableFuture of a Permit, a
 * per-acquisition handle whose close() releases exactly once (a second close, on any thread, does nothing); a
 * request granted at once may get the JDK's own completed future, and obtrude* on the futures is unsupported. So
 * an acquisition granted at once needs, at the least:
 * - the exact CAS that takes the permit (ExactCasFloor), and at close the release CAS;
 * - the handle, and before the release the CAS of its close-once flag (a plain flag would let two threads that
 *   close the same handle at once both release);
 * - the JDK's completed future around it, which costs no atomic operation (acquire()).
 * Until API 1.0 the contract also said that the futures refuse obtrudeValue, which forced a future of the
 * library's own class, completed by a CAS: the cheapest such future was the handle itself (acquireOwnFuture).
 * PermitContractBenchmark measures each part; a close-once handle with no future (acquireHandle) is there too.
 *
 * Invariants: no acquire waits (it throws if the permit is taken: the floor is for the uncontended row); a handle
 * releases once however often it is closed; the future returned by acquire() is completed before it is returned.
 */
package dev.semaphore.benchmarks;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/** An exact-CAS semaphore whose acquire() returns the JDK's completed future of a close-once handle. */
public final class PermitContractFloor {
    private final ExactCasFloor semaphore;

    /** A floor with {@code permits} permits. */
    public PermitContractFloor(int permits) {
        semaphore = new ExactCasFloor(permits);
    }

    /** The floor: takes one permit now (never waits) and returns its handle in the JDK's completed future. */
    public CompletableFuture<PlainHandle> acquire() {
        take();
        return CompletableFuture.completedFuture(new PlainHandle(semaphore));
    }

    /** Not a future at all: takes one permit now and returns a bare close-once handle. */
    public PlainHandle acquireHandle() {
        take();
        return new PlainHandle(semaphore);
    }

    /** The contract before API 1.0 (futures refuse obtrude): the handle is its own future, completed by a CAS. */
    public CompletableFuture<Handle> acquireOwnFuture() {
        take();
        return new Handle(semaphore);
    }

    private void take() {
        if (!semaphore.tryAcquire()) throw new IllegalStateException("the contract floor never waits: no permit is free");
    }

    /** The per-acquisition handle of the contract before API 1.0: its own future, closed once; it refuses obtrude. */
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

        /** Refused: it would overwrite the handle. */
        @Override
        public void obtrudeValue(Handle value) {
            throw new UnsupportedOperationException("obtrudeValue would lose the handle");
        }

        /** Refused: it would overwrite the handle. */
        @Override
        public void obtrudeException(Throwable ex) {
            throw new UnsupportedOperationException("obtrudeException would lose the handle");
        }
    }

    /** A close-once handle that is not a future, as the library's Permit is. */
    public static final class PlainHandle implements AutoCloseable {
        private static final AtomicIntegerFieldUpdater<PlainHandle> CLOSED =
                AtomicIntegerFieldUpdater.newUpdater(PlainHandle.class, "closed");

        private final ExactCasFloor semaphore;
        private volatile int closed;

        PlainHandle(ExactCasFloor semaphore) {
            this.semaphore = semaphore;
        }

        /** Releases the permit the first time; later calls do nothing. */
        @Override
        public void close() {
            if (closed == 0 && CLOSED.compareAndSet(this, 0, 1)) semaphore.release();
        }
    }
}
