package dev.semaphore.async;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Permits held from an {@link AsyncSemaphore}, {@link AsyncPrioritySemaphore} or {@link AsyncLock}, given
 * back by {@link #close()}. Made for try-with-resources:
 *
 * <pre>{@code
 * try (Permit permit = semaphore.acquireBlocking(2)) {
 *     copyFile(source, target);            // two permits held here
 * }                                        // released here, however the block ends
 * }</pre>
 *
 * <p>{@code close()} releases exactly once: a second call, from the same or another thread, does
 * nothing (an atomic flag decides the one caller that releases). A permit that is never closed stays
 * held forever; there is no finalizer.
 */
public final class Permit implements AutoCloseable {
    /** Gives permits back to where they came from (a queue's release, or a lock's unlock). */
    @FunctionalInterface
    interface Releaser {
        void release(int permits);
    }

    private static final VarHandle RELEASED;

    static {
        try {
            RELEASED = MethodHandles.lookup().findVarHandle(Permit.class, "released", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int permits;
    private final Releaser releaser;
    private final String source;

    @SuppressWarnings("unused") // accessed through RELEASED
    private volatile int released;

    Permit(int permits, Releaser releaser, String source) {
        this.permits = permits;
        this.releaser = releaser;
        this.source = source;
    }

    /**
     * How many permits this object holds (1 for a lock). It does not change when the permit is closed.
     *
     * <pre>{@code
     * try (Permit p = semaphore.acquire(3).join()) { assert p.permits() == 3; }
     * }</pre>
     *
     * @return the number of permits acquired, at least 1
     */
    public int permits() {
        return permits;
    }

    /**
     * True once {@link #close()} was called (the permits were given back).
     *
     * <pre>{@code
     * permit.close();
     * assert permit.isReleased();
     * }</pre>
     *
     * @return whether this permit was released
     */
    public boolean isReleased() {
        return released != 0;
    }

    /**
     * Gives the permits back (for a lock: unlocks it). Only the first call releases; later calls, on
     * any thread, return at once and do nothing. Waiters that now fit are granted, in order.
     *
     * <pre>{@code
     * Permit permit = semaphore.acquire().join();
     * try { work(); } finally { permit.close(); }
     * }</pre>
     *
     * @throws IllegalStateException only for a lock permit whose lock was already unlocked by someone
     *     else (for example {@code unlock()} called on the lock without an owner); the permit still
     *     counts as released
     */
    @Override
    public void close() {
        if (RELEASED.compareAndSet(this, 0, 1)) {
            releaser.release(permits);
        }
    }

    /**
     * Describes this permit, e.g. {@code Permit(2 of AsyncSemaphore(...), held)}.
     *
     * <pre>{@code
     * log.debug("holding {}", permit);
     * }</pre>
     */
    @Override
    public String toString() {
        return "Permit(" + permits + " of " + source + (isReleased() ? ", released)" : ", held)");
    }
}
