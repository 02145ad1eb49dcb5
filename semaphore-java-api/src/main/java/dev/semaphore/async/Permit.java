package dev.semaphore.async;

import dev.semaphore.LockHold;
import dev.semaphore.PermitPool;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.jspecify.annotations.Nullable;

/**
 * Permits held from an {@link AsyncSemaphore} or {@link AsyncPrioritySemaphore}, or one hold of an
 * {@link AsyncLock} or {@link AsyncReadWriteLock}; {@link #close()} gives them back, exactly once. Made
 * for try-with-resources (see {@link AsyncSemaphore}). A permit that is never closed stays held forever;
 * there is no finalizer.
 */
public final class Permit implements AutoCloseable {
    private static final AtomicIntegerFieldUpdater<Permit> RELEASED =
            AtomicIntegerFieldUpdater.newUpdater(Permit.class, "released");

    private final int permits;
    private final @Nullable PermitPool pool;
    final @Nullable LockHold hold; // read by AsyncReadWriteLock's upgrade and downgrade

    @SuppressWarnings("unused") // accessed through RELEASED
    private volatile int released;

    Permit(int permits, PermitPool pool) {
        this.permits = permits;
        this.pool = pool;
        this.hold = null;
    }

    Permit(LockHold hold) {
        this.permits = 1;
        this.pool = null;
        this.hold = hold;
    }

    /** @return how many permits this object holds (1 for a lock); it does not change when closed */
    public int permits() {
        return permits;
    }

    /** @return true once {@link #close()} was called */
    public boolean isReleased() {
        return released != 0;
    }

    /**
     * Gives the permits back (for a lock: unlocks this hold); the waiters that now fit are granted, in
     * order. Only the first call releases; later calls, on any thread, do nothing.
     *
     * @throws IllegalStateException for a lock permit whose hold someone else already ended (for example
     *     with {@link AsyncLock#unlock()}), however the lock was taken again since: nothing changes, and
     *     this permit counts as closed. A read-write lock permit spent by an upgrade or downgrade
     *     through it does nothing.
     */
    @Override
    public void close() {
        if (RELEASED.compareAndSet(this, 0, 1)) {
            if (hold != null) hold.unlock();
            else if (pool != null) pool.release(permits);
        }
    }

    @Override
    public String toString() {
        return "Permit(" + (hold != null ? hold : permits + " permits") + (isReleased() ? ", released)" : ", held)");
    }
}
