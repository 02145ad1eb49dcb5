package dev.semaphore.async;

import static java.util.concurrent.TimeUnit.NANOSECONDS;

import dev.semaphore.JavaBridge;
import dev.semaphore.Semaphore;
import dev.semaphore.SemaphoreKt;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A fair counting semaphore for Java: permits come as {@link CompletableFuture}s of {@link Permit}, or
 * from blocking calls for plain and virtual threads. It is a view of a Kotlin {@link Semaphore}:
 * futures, blocked threads and coroutines wait in one line for one permit count. The
 * <a href="package-summary.html#fairness">rules of the package</a> (fairness, withdrawing, timeouts,
 * interrupts, threads, closing) apply to every method.
 *
 * <pre>{@code
 * AsyncSemaphore limiter = AsyncSemaphore.create(4);              // at most 4 calls at once
 * CompletableFuture<String> page = limiter.withPermit(() -> fetch("https://example.com"));
 * try (Permit permit = limiter.acquireBlocking()) {               // on a plain or virtual thread
 *     render(page.join());
 * }
 * }</pre>
 */
public final class AsyncSemaphore extends AsyncPermitPool {
    private final Semaphore kotlin;

    private AsyncSemaphore(Semaphore kotlin) {
        super(kotlin);
        this.kotlin = kotlin;
    }

    /**
     * @param permits the total, at least 0 (a request for more than the total fails at once)
     * @return a new semaphore
     */
    public static AsyncSemaphore create(int permits) {
        return new AsyncSemaphore(SemaphoreKt.Semaphore(permits));
    }

    /**
     * Wraps a Kotlin semaphore, so Java and Kotlin code share its line and its permits. Waiting needs
     * one made by the library's {@code Semaphore(permits)} factory (IllegalArgumentException otherwise).
     *
     * @param shared the Kotlin semaphore
     * @return a Java view of {@code shared}
     */
    public static AsyncSemaphore of(Semaphore shared) {
        return new AsyncSemaphore(Objects.requireNonNull(shared, "shared"));
    }

    /** @return the Kotlin semaphore this is a view of */
    public Semaphore asKotlin() {
        return kotlin;
    }

    /** @return a future of one permit; see {@link #acquire(int)} */
    public CompletableFuture<Permit> acquire() {
        return acquire(1);
    }

    /**
     * Requests {@code permits} permits, granted together: at once if they are free and nobody waits.
     * Cancel the future to <a href="package-summary.html#withdrawing">withdraw</a> the request.
     *
     * @param permits how many, at least 1 and at most the total
     * @return a future of the permit
     */
    public CompletableFuture<Permit> acquire(int permits) {
        return JavaBridge.acquireAsync(kotlin, permits, Waits.FOREVER, NANOSECONDS, newPermit);
    }

    /**
     * Requests {@code permits} permits for at most {@code timeout}
     * (<a href="package-summary.html#timeouts">timeouts</a>).
     *
     * @param permits how many, at least 1 and at most the total
     * @param timeout the longest wait
     * @return a future of the permit
     */
    public CompletableFuture<Permit> acquire(int permits, Duration timeout) {
        return JavaBridge.acquireAsync(kotlin, permits, Waits.nanos(timeout), NANOSECONDS, newPermit);
    }

    /** @return true if one permit was free and nobody waited; give it back with {@link #release()} */
    public boolean tryAcquire() {
        return kotlin.tryAcquire(1);
    }

    /**
     * @param permits how many, at least 1 and at most the total
     * @return true if they were free and nobody waited; give them back with {@link #release(int)}
     */
    public boolean tryAcquire(int permits) {
        return kotlin.tryAcquire(permits);
    }

    /**
     * Like {@link java.util.concurrent.Semaphore#tryAcquire(int, long, java.util.concurrent.TimeUnit)}:
     * blocks for at most {@code timeout}; give the permits back with {@link #release(int)}.
     *
     * @param permits how many, at least 1 and at most the total
     * @param timeout the longest wait
     * @return true if the permits are held, false if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public boolean tryAcquire(int permits, Duration timeout) throws InterruptedException {
        return JavaBridge.acquireBlocking(kotlin, permits, Waits.nanos(timeout), NANOSECONDS);
    }

    /**
     * @param action starts the work and returns its stage
     * @param <T> the result type
     * @return a future of the action's result; see {@link #withPermit(int, Supplier)}
     */
    public <T extends @Nullable Object> CompletableFuture<T> withPermit(Supplier<? extends CompletionStage<T>> action) {
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
    public <T extends @Nullable Object> CompletableFuture<T> withPermit(
            int permits, Supplier<? extends CompletionStage<T>> action) {
        return Waits.withPermit(Objects.requireNonNull(action, "action"), acquire(permits));
    }

    /**
     * @return one permit, to be closed
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Permit acquireBlocking() throws InterruptedException {
        return acquireBlocking(1);
    }

    /**
     * Blocks the calling thread until {@code permits} permits are granted
     * (<a href="package-summary.html#interrupts">interrupts</a>).
     *
     * @param permits how many, at least 1 and at most the total
     * @return the permit, to be closed
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Permit acquireBlocking(int permits) throws InterruptedException {
        JavaBridge.acquireBlocking(kotlin, permits, Waits.FOREVER, NANOSECONDS);
        return new Permit(permits, kotlin, null);
    }

    /**
     * @param permits how many, at least 1 and at most the total
     * @param timeout the longest wait
     * @return the permit, or empty if the time ran out (nothing held)
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Optional<Permit> acquireBlocking(int permits, Duration timeout) throws InterruptedException {
        return JavaBridge.acquireBlocking(kotlin, permits, Waits.nanos(timeout), NANOSECONDS) ? Optional.of(new Permit(permits, kotlin, null)) : Optional.empty();
    }
}
