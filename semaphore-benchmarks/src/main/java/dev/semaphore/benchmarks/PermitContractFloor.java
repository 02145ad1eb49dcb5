/*
 * The floor of the Java API's uncontended acquire: what the contract of AsyncSemaphore.acquire() forces, and
 * nothing else. The contract: acquire() returns a CompletableFuture of a Permit, a per-acquisition handle whose
 * close() releases exactly once (a second close, on any thread, does nothing), and the futures the library
 * returns refuse obtrudeValue and obtrudeException (either would overwrite a granted permit, which would then stay
 * held forever). So an acquisition granted at once needs, at the least:
 * - the exact CAS that takes the permit (ExactCasFloor), and at close the release CAS;
 * - the handle, and before the release the CAS of its close-once flag (a plain flag would let two threads that
 *   close the same handle at once both release);
 * - a future of our own class (the JDK's completed futures accept obtrudeValue), completed before it is returned.
 *   A subclass of CompletableFuture can only be completed by complete() (a CAS on its result) or by a volatile
 *   store (obtrudeValue): the JDK's fence-free constructor of a completed future is package-private. The
 *   cheapest such future is the handle itself (one object): that is this floor's acquire().
 * That is four atomic operations per cycle where IBM's acquire() + release() (a shared completed stage, no handle)
 * make two. The cheaper shapes that the contract rules out are here too, for PermitContractBenchmark, which
 * measures what each part costs: a close-once handle with no future (acquireHandle), and the handle inside the
 * JDK's own completed future (acquireInJdkFuture: no completion CAS, but obtrudeValue is not refused).
 *
 * Invariants: no acquire waits (it throws if the permit is taken: the floor is for the uncontended row); a handle
 * releases once however often it is closed; the future returned by acquire() is completed before it is returned.
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

    /** The floor: takes one permit now (never waits) and returns its handle, already completed with itself. */
    public CompletableFuture<Handle> acquire() {
        take();
        return new Handle(semaphore);
    }

    /** Ruled out (no future): takes one permit now and returns a bare close-once handle. */
    public PlainHandle acquireHandle() {
        take();
        return new PlainHandle(semaphore);
    }

    /** Ruled out (obtrudeValue not refused): the bare handle in the JDK's own completed future. */
    public CompletableFuture<PlainHandle> acquireInJdkFuture() {
        take();
        return CompletableFuture.completedFuture(new PlainHandle(semaphore));
    }

    private void take() {
        if (!semaphore.tryAcquire()) throw new IllegalStateException("the contract floor never waits: no permit is free");
    }

    /** The per-acquisition handle: its own future, closed once; it refuses obtrude, as the library's futures do. */
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

    /** A close-once handle that is not a future (the shapes the contract rules out). */
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
