package dev.semaphore.async;

import dev.semaphore.bridge.LockHold;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import kotlin.jvm.functions.Function1;

/**
 * Permits held from an {@link AsyncSemaphore} or {@link AsyncPrioritySemaphore}, or one hold of an
 * {@link AsyncLock} or {@link AsyncReadWriteLock}: a plain handle whose {@link #close()} gives them back,
 * exactly once. Made for try-with-resources. A permit that is never closed stays held forever; there is
 * no finalizer. While its primitive is observed (a listener, or {@code Diagnostics} tracking), a permit
 * garbage-collected without being closed is reported as a leak, and its permits are not given back: see
 * {@link dev.semaphore.SemaphoreListener#onLeak(dev.semaphore.Inspectable, dev.semaphore.HoldInfo)}.
 */
public final class Permit implements AutoCloseable {
    private static final AtomicIntegerFieldUpdater<Permit> STATE =
            AtomicIntegerFieldUpdater.newUpdater(Permit.class, "state");

    /**
     * Makes the handle of a hold the engine granted, for every primitive and every form (futures and blocking
     * calls); one for all, so a request allocates no function. The hold gives its permits back, once.
     */
    static final Function1<LockHold, Permit> OF_HOLD = Permit::new;

    final LockHold hold; // read by AsyncReadWriteLock's upgrade and downgrade
    private volatile int state; // the permit count, with the sign bit set by the first close

    private Permit(LockHold hold) {
        this.hold = hold;
        STATE.lazySet(this, hold.getPermits()); // no fence: the permit reaches another thread only through one
    }

    /** @return how many permits this handle holds (1 for a lock); it does not change when closed */
    public int permits() {
        return state & Integer.MAX_VALUE;
    }

    /** @return true once {@link #close()} was called */
    public boolean isReleased() {
        return state < 0;
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
        int permits = state;
        if (permits >= 0 && STATE.compareAndSet(this, permits, permits | Integer.MIN_VALUE)) hold.unlock();
    }

    @Override
    public String toString() {
        return "Permit(" + hold + (isReleased() ? ", released)" : ", held)");
    }
}
