package dev.semaphore.async;

import dev.semaphore.PermitPool;
import kotlin.jvm.functions.Function1;
import org.jspecify.annotations.Nullable;

/**
 * What {@link AsyncSemaphore} and {@link AsyncPrioritySemaphore} have in common: giving permits back,
 * resizing, closing and the metrics, each the method of the same name of the Kotlin
 * {@link dev.semaphore.PermitPool} they wrap, which documents it. Acquisition differs (with a priority
 * or without), so it lives in the two subclasses.
 */
public abstract sealed class AsyncPermitPool permits AsyncSemaphore, AsyncPrioritySemaphore {
    private final PermitPool pool;

    /** Makes the Permit a grant is handed out as; one per pool, so a request allocates no function. */
    final Function1<Integer, Permit> newPermit;

    AsyncPermitPool(PermitPool pool) {
        this.pool = pool;
        this.newPermit = n -> new Permit(n, pool, null);
    }

    /** Gives back one permit taken with {@code tryAcquire} (a {@link Permit} is given back with close()). */
    public void release() {
        pool.release(1);
    }

    /** @param permits how many to give back; see {@link PermitPool#release(int)} */
    public void release(int permits) {
        pool.release(permits);
    }

    /** @return the permits free right now; see {@link PermitPool#getAvailablePermits()} */
    public int availablePermits() {
        return pool.getAvailablePermits();
    }

    /** @return the futures, threads and coroutines waiting right now */
    public int queueLength() {
        return pool.getQueueLength();
    }

    /** @return true once {@link #close(Throwable)} was called */
    public boolean isClosed() {
        return pool.isClosed();
    }

    /** @param permits how many to add to the total; see {@link PermitPool#addPermits(int)} */
    public void addPermits(int permits) {
        pool.addPermits(permits);
    }

    /** @param permits how many to take from the total; see {@link PermitPool#reducePermits(int)} */
    public void reducePermits(int permits) {
        pool.reducePermits(permits);
    }

    /** @return how many free permits were taken; see {@link PermitPool#drainPermits()} */
    public int drainPermits() {
        return pool.drainPermits();
    }

    /**
     * Fails every waiter with {@link dev.semaphore.SemaphoreClosedException} carrying {@code cause}, and
     * every later acquisition; see {@link PermitPool#close(Throwable)}.
     *
     * @param cause the reason, or null
     */
    public void close(@Nullable Throwable cause) {
        pool.close(cause);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(" + pool + ")";
    }
}
