package dev.semaphore.async;

import static dev.semaphore.bridge.JavaBridge.NO_TIMEOUT;

import dev.semaphore.PermitPool;
import dev.semaphore.bridge.JavaBridge;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What {@link AsyncSemaphore} and {@link AsyncPrioritySemaphore} have in common: every way to take
 * permits, give them back, resize, close and look. Each family has the same four shapes, named as in
 * {@code java.util.concurrent} and {@code CompletableFuture}:
 * <ul>
 *   <li>{@code acquire(...)}: a {@link CompletableFuture} of a {@link Permit};
 *   <li>{@code acquireBlocking(...)}: blocks and returns the {@code Permit} (with a timeout: an
 *       {@code Optional}, empty if the time ran out);
 *   <li>{@code tryAcquire(...)}: {@code java.util.concurrent.Semaphore}'s try forms, returning a boolean;
 *       the permits are given back with {@link #release(int)}. Without a timeout it never waits; with
 *       one it blocks up to the timeout, as {@code Semaphore.tryAcquire(permits, timeout, unit)} does;
 *   <li>{@code withPermit(...)}: holds the permits while a {@link CompletionStage} runs.
 * </ul>
 * A lone {@code int} is always a permit count, a {@code Duration} always a timeout. The
 * <a href="package-summary.html#fairness">rules of the package</a> (fairness, withdrawing, timeouts,
 * interrupts, threads, closing) apply to every method.
 *
 * <h2 id="blocking">Blocking: a {@code Permit}, or no handle</h2>
 * Two forms block a thread, and they wait in the same line, with the same fairness, interrupts and timeouts:
 * <ul>
 *   <li>{@link #acquireBlocking(int)} returns a {@link Permit}: use it by default, in try-with-resources.
 *       The permits go back exactly once however the block ends; a second {@code close()}, on any thread,
 *       does nothing, so a stray second release cannot give back permits someone else holds; and while the
 *       semaphore is observed, a {@code Permit} dropped without being closed is reported as a leak. Its
 *       price, uncontended: the handle (one object of 24 bytes) and the atomic step that makes its close
 *       happen once, on top of the take and the give-back that every semaphore makes: where an atomic step is
 *       most of an uncontended cycle, well above the JDK's fair {@code Semaphore} (docs/java.md, "Blocking").
 *   <li>{@link #tryAcquire(int, Duration)} returns a boolean and the permits go back with {@link #release(int)}:
 *       the JDK's shape and about its cost (a take and a give-back, nothing allocated). Use it where the
 *       uncontended acquire and release are themselves the hot path and the code keeps the count itself:
 *       nothing stops a second {@code release} of the same permits, which is caught only when it would make
 *       more permits free than exist, and a forgotten one is never reported as a leak (there is no handle to
 *       be collected). To wait without limit, pass a timeout of about 292 years or more, such as
 *       {@code ChronoUnit.FOREVER.getDuration()}.
 * </ul>
 */
public abstract sealed class AsyncPermitPool implements AsyncInspectable permits AsyncSemaphore, AsyncPrioritySemaphore {
    private final PermitPool pool;
    private final int priority;

    /** @return the Kotlin semaphore this is a view of */
    @Override
    public abstract PermitPool asKotlin();

    AsyncPermitPool(PermitPool pool, int priority) {
        this.pool = Objects.requireNonNull(pool, "pool");
        this.priority = priority;
    }

    /** @return a future of one permit; see {@link #acquire(int)} */
    public final CompletableFuture<Permit> acquire() {
        return acquire(1);
    }

    /**
     * Requests {@code permits} permits, granted together: at once if they are free and nobody waits.
     * Cancel the future to <a href="package-summary.html#withdrawing">withdraw</a> the request.
     *
     * @param permits how many, at least 1 and at most the total
     * @return a future of the permit
     */
    public final CompletableFuture<Permit> acquire(int permits) {
        return JavaBridge.acquireAsync(pool, permits, priority, NO_TIMEOUT, Permit.OF_HOLD);
    }

    /** @return a future of one permit that fails after {@code timeout}; see {@link #acquire(int, Duration)} */
    public final CompletableFuture<Permit> acquire(Duration timeout) {
        return acquire(1, timeout);
    }

    /**
     * Requests {@code permits} permits for at most {@code timeout}: the future fails with a
     * {@code TimeoutException} when the time runs out (<a href="package-summary.html#timeouts">timeouts</a>).
     *
     * @param permits how many, at least 1 and at most the total
     * @param timeout the longest wait
     * @return a future of the permit
     */
    public final CompletableFuture<Permit> acquire(int permits, Duration timeout) {
        return JavaBridge.acquireAsync(pool, permits, priority, Waits.nanos(timeout), Permit.OF_HOLD);
    }

    /**
     * @return one permit, to be closed
     * @throws InterruptedException if interrupted, with nothing held
     */
    public final Permit acquireBlocking() throws InterruptedException {
        return acquireBlocking(1);
    }

    /**
     * Blocks the calling thread until {@code permits} permits are granted
     * (<a href="package-summary.html#interrupts">interrupts</a>). Granted at once if they are free and
     * nobody waits; the handle costs one object and one atomic step more than {@link #tryAcquire(int, Duration)}
     * (<a href="#blocking">which blocking form</a>).
     *
     * @param permits how many, at least 1 and at most the total
     * @return the permit, to be closed
     * @throws InterruptedException if interrupted, with nothing held
     */
    public final Permit acquireBlocking(int permits) throws InterruptedException {
        return Objects.requireNonNull(JavaBridge.acquireBlocking(pool, permits, priority, NO_TIMEOUT, Permit.OF_HOLD));
    }

    /**
     * @param timeout the longest wait
     * @return one permit, or empty if the time ran out (nothing held)
     * @throws InterruptedException if interrupted, with nothing held
     */
    public final Optional<Permit> acquireBlocking(Duration timeout) throws InterruptedException {
        return acquireBlocking(1, timeout);
    }

    /**
     * @param permits how many, at least 1 and at most the total
     * @param timeout the longest wait; zero or negative only tries now
     * @return the permit, or empty if the time ran out (nothing held)
     * @throws InterruptedException if interrupted, with nothing held
     */
    public final Optional<Permit> acquireBlocking(int permits, Duration timeout) throws InterruptedException {
        return Optional.ofNullable(JavaBridge.acquireBlocking(pool, permits, priority, Waits.nanos(timeout), Permit.OF_HOLD));
    }

    /** @return true if one permit was free and nobody waited ahead; give it back with {@link #release()} */
    public final boolean tryAcquire() {
        return tryAcquire(1);
    }

    /**
     * Takes {@code permits} permits if they are free and nobody waits ahead of this request; never waits.
     *
     * @param permits how many, at least 1 and at most the total
     * @return true if they are held (give them back with {@link #release(int)}), false if not (nothing held)
     */
    public final boolean tryAcquire(int permits) {
        return JavaBridge.tryAcquire(pool, permits, priority);
    }

    /**
     * @param timeout the longest wait
     * @return true if one permit is held, false if the time ran out; see {@link #tryAcquire(int, Duration)}
     * @throws InterruptedException if interrupted, with nothing held
     */
    public final boolean tryAcquire(Duration timeout) throws InterruptedException {
        return tryAcquire(1, timeout);
    }

    /**
     * Like {@link java.util.concurrent.Semaphore#tryAcquire(int, long, java.util.concurrent.TimeUnit)}:
     * <b>blocks</b> the calling thread for at most {@code timeout}; give the permits back with
     * {@link #release(int)}, once. The blocking form without a handle: what it saves and what it gives up
     * against {@link #acquireBlocking(int)}, <a href="#blocking">which blocking form</a>.
     *
     * @param permits how many, at least 1 and at most the total
     * @param timeout the longest wait; zero or negative only tries now
     * @return true if the permits are held, false if the time ran out (nothing held)
     * @throws InterruptedException if interrupted, with nothing held
     */
    public final boolean tryAcquire(int permits, Duration timeout) throws InterruptedException {
        return JavaBridge.acquireBlocking(pool, permits, priority, Waits.nanos(timeout));
    }

    /** Gives back one permit taken with {@code tryAcquire} (a {@link Permit} is given back with close()). */
    public final void release() {
        pool.release(1);
    }

    /** @param permits how many to give back; see {@link PermitPool#release(int)} */
    public final void release(int permits) {
        pool.release(permits);
    }

    /**
     * @param action starts the work and returns its stage
     * @param <T> the result type
     * @return a future of the action's result; see {@link #withPermit(int, Supplier)}
     */
    public final <T extends @Nullable Object> CompletableFuture<T> withPermit(Supplier<? extends CompletionStage<T>> action) {
        return withPermit(1, action);
    }

    /**
     * Acquires {@code permits} permits, runs {@code action} on the thread that grants them, and releases
     * them when the action's stage completes, however it ends (also if the action throws or returns
     * null, which fail the result). Cancelling the result before the grant withdraws the request; once
     * the action runs, cancelling the result does not stop it.
     *
     * @param permits how many, at least 1 and at most the total
     * @param action starts the work and returns its stage
     * @param <T> the result type
     * @return a future of the action's result
     */
    public final <T extends @Nullable Object> CompletableFuture<T> withPermit(
            int permits, Supplier<? extends CompletionStage<T>> action) {
        return Waits.withPermit(Objects.requireNonNull(action, "action"), acquire(permits));
    }

    /** @return the permits free right now; see {@link PermitPool#getAvailablePermits()} */
    public final int availablePermits() {
        return pool.getAvailablePermits();
    }

    /** @return the permits that exist, held or free; see {@link PermitPool#getTotalPermits()} */
    public final int totalPermits() {
        return pool.getTotalPermits();
    }

    /** @return the futures, threads and coroutines waiting right now */
    public final int queueLength() {
        return pool.getQueueLength();
    }

    /** @return true once {@link #close(Throwable)} was called */
    public final boolean isClosed() {
        return pool.isClosed();
    }


    /** @param permits how many to add to the total; see {@link PermitPool#addPermits(int)} */
    public final void addPermits(int permits) {
        pool.addPermits(permits);
    }

    /** @param permits how many to take from the total; see {@link PermitPool#reducePermits(int)} */
    public final void reducePermits(int permits) {
        pool.reducePermits(permits);
    }

    /** @return how many free permits were taken; see {@link PermitPool#drainPermits()} */
    public final int drainPermits() {
        return pool.drainPermits();
    }

    /**
     * Fails every waiter with {@link dev.semaphore.SemaphoreClosedException} carrying {@code cause}, and
     * every later acquisition; see {@link PermitPool#close(Throwable)}.
     *
     * @param cause the reason, or null
     */
    public final void close(@Nullable Throwable cause) {
        pool.close(cause);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(" + pool + (priority != 0 ? ", priority " + priority : "") + ")";
    }
}
