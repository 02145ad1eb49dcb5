package dev.semaphore.async;

import dev.semaphore.SemaphoreClosedException;
import dev.semaphore.internal.WaiterQueue;
import org.jspecify.annotations.Nullable;

/**
 * What {@link AsyncSemaphore} and {@link AsyncPrioritySemaphore} have in common: giving permits back,
 * resizing, closing and the metrics. Acquisition differs (with a priority or without), so it lives in
 * the two subclasses. The Java twin of the Kotlin {@code dev.semaphore.PermitPool}.
 *
 * <pre>{@code
 * AsyncPermitPool pool = AsyncSemaphore.create(4);
 * metrics.gauge("free", pool.availablePermits());
 * }</pre>
 */
public abstract sealed class AsyncPermitPool permits AsyncSemaphore, AsyncPrioritySemaphore {
    /** The engine queue shared with the Kotlin twin. */
    final WaiterQueue queue;

    private final String name;

    AsyncPermitPool(WaiterQueue queue, String name) {
        this.queue = queue;
        this.name = name;
    }

    /**
     * Gives back one permit taken with {@code tryAcquire} (or by Kotlin code). Permits received as a
     * {@link Permit} are given back with {@link Permit#close()} instead.
     *
     * <pre>{@code
     * if (pool.tryAcquire()) { try { work(); } finally { pool.release(); } }
     * }</pre>
     *
     * @throws IllegalStateException if more permits would be free than exist (over-release); nothing changes
     */
    public void release() {
        queue.release(1);
    }

    /**
     * Gives back {@code permits} permits; the waiters served next are granted as soon as their whole
     * request fits.
     *
     * <pre>{@code
     * pool.release(3);
     * }</pre>
     *
     * @param permits how many, at least 1
     * @throws IllegalArgumentException if {@code permits < 1}
     * @throws IllegalStateException if more permits would be free than exist (over-release); nothing changes
     */
    public void release(int permits) {
        QueueFront.checkPermits(permits);
        queue.release(permits);
    }

    /**
     * The permits free right now (a snapshot); negative while {@link #reducePermits(int)} debt is repaid.
     *
     * <pre>{@code
     * metrics.gauge("free", pool.availablePermits());
     * }</pre>
     *
     * @return the number of free permits
     */
    public int availablePermits() {
        return queue.getAvailablePermits();
    }

    /**
     * The number of waiters in line right now: futures, blocked threads and coroutines (a snapshot).
     *
     * <pre>{@code
     * if (pool.queueLength() > 100) shedLoad();
     * }</pre>
     *
     * @return the number of queued requests
     */
    public int queueLength() {
        return queue.getQueueLength();
    }

    /**
     * True once {@link #close(Throwable)} was called.
     *
     * <pre>{@code
     * boolean down = pool.isClosed();
     * }</pre>
     *
     * @return whether closed
     */
    public boolean isClosed() {
        return queue.isClosed();
    }

    /**
     * Adds {@code permits} permits to the total (and to the free count); waiters that now fit are granted.
     *
     * <pre>{@code
     * pool.addPermits(2);
     * }</pre>
     *
     * @param permits how many, at least 1
     * @throws IllegalArgumentException if {@code permits < 1} or the total would exceed {@code Integer.MAX_VALUE}
     */
    public void addPermits(int permits) {
        QueueFront.checkPermits(permits);
        queue.addPermits(permits);
    }

    /**
     * Removes {@code permits} permits from the total without waiting for holders: the free count may go
     * below zero, and releases repay that debt before anyone is granted.
     *
     * <pre>{@code
     * pool.reducePermits(1);
     * }</pre>
     *
     * @param permits how many, at least 1 and at most the total
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total
     */
    public void reducePermits(int permits) {
        QueueFront.checkPermits(permits);
        queue.reducePermits(permits);
    }

    /**
     * Takes every free permit now, whoever waits, and returns how many (0 if none or in debt).
     *
     * <pre>{@code
     * int taken = pool.drainPermits();
     * }</pre>
     *
     * @return the number taken
     */
    public int drainPermits() {
        return queue.drainPermits();
    }

    /**
     * Closes it: queued requests fail with {@link SemaphoreClosedException} carrying {@code cause}, and
     * later acquisitions fail too; holders can still release. A second call does nothing.
     *
     * <pre>{@code
     * pool.close(new IllegalStateException("shutting down"));
     * }</pre>
     *
     * @param cause the reason, or null
     */
    public void close(@Nullable Throwable cause) {
        queue.close(cause);
    }

    /**
     * Describes the state: free and total permits, queue length, closed.
     *
     * <pre>{@code
     * log.debug("{}", pool);
     * }</pre>
     */
    @Override
    public String toString() {
        return name + "(" + queue + ")";
    }
}
