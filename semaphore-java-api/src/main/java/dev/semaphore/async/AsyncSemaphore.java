package dev.semaphore.async;

import dev.semaphore.Semaphore;
import dev.semaphore.SemaphoreClosedException;
import dev.semaphore.SemaphoreKt;
import dev.semaphore.internal.WaiterQueue;
import dev.semaphore.internal.WaiterQueueOwner;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A fair counting semaphore for Java: permits come as {@link CompletableFuture}s of {@link Permit}, or
 * from blocking calls for plain and virtual threads. It is a view of a Kotlin
 * {@link dev.semaphore.Semaphore}: futures, blocked threads and coroutines all wait in ONE first-come,
 * first-served line for ONE permit count.
 *
 * <pre>{@code
 * AsyncSemaphore semaphore = AsyncSemaphore.create(4);          // at most 4 calls at once
 * CompletableFuture<String> page = semaphore.withPermit(() -> client.fetchAsync(url));
 *
 * try (Permit permit = semaphore.acquireBlocking()) {            // on a (virtual) thread
 *     render(page.join());
 * }
 * }</pre>
 *
 * <p><b>Fairness.</b> While anyone waits, no newcomer takes permits, not even {@link #tryAcquire()}.
 * A request for n permits is granted whole when it is first in line and n are free; until then it
 * blocks the requests behind it (head-of-line blocking), so large requests are never starved.
 *
 * <p><b>Nothing lost.</b> Cancelling a pending future, its timeout, or completing it yourself removes the
 * request from the line; if the permits were granted in that same instant they are passed on to the
 * next waiter. If {@code future.cancel(..)} returns false the future holds a {@link Permit} that you must
 * close. {@code obtrudeValue}/{@code obtrudeException} are refused on these futures. Cancelling a
 * future derived from it ({@code thenApply} etc.) does not reach it.
 *
 * <p><b>Threads.</b> A queued future is completed on the thread that frees the permits (inside
 * {@link Permit#close()}, {@link #release()}, a cancellation...) or on the library's timeout thread, so
 * its non-async dependents run there. Keep them short, and never block in them (no {@code join()}, no
 * {@code acquireBlocking}): the releasing thread is delivering a batch of grants and the rest of the
 * batch waits for it. Use the {@code ...Async} variants to move work elsewhere. Long chains of
 * dependents that release synchronously are stack-safe.
 */
public final class AsyncSemaphore extends AsyncPermitPool {
    private static final String NAME = "AsyncSemaphore";

    private final Semaphore kotlin;
    private final QueueFront front;

    private AsyncSemaphore(Semaphore kotlin, WaiterQueue queue) {
        super(queue, NAME);
        this.kotlin = kotlin;
        this.front = new QueueFront(
                queue,
                (permits, priority, owner) -> queue.tryAcquire(permits, 0),
                (permits, owner) -> new Permit(permits, queue::release, NAME));
    }

    /**
     * Creates a semaphore with {@code permits} permits. Its Kotlin twin is {@link #asKotlin()}.
     * A request for more permits than the total is rejected with {@link IllegalArgumentException} (it
     * could never be granted), so a semaphore created with 0 permits accepts requests only after
     * {@link #addPermits(int)}. To start with every permit taken, create it with the total and call
     * {@link #drainPermits()}.
     *
     * <pre>{@code
     * AsyncSemaphore pool = AsyncSemaphore.create(10);
     * }</pre>
     *
     * @param permits the initial number of permits, at least 0
     * @return a new semaphore
     * @throws IllegalArgumentException if {@code permits} is negative
     */
    public static AsyncSemaphore create(int permits) {
        if (permits < 0) throw new IllegalArgumentException("permits must be >= 0, was " + permits);
        return of(SemaphoreKt.Semaphore(permits));
    }

    /**
     * Wraps a Kotlin semaphore, so Java and Kotlin code share its line and its permits. Wrapping the same
     * semaphore twice gives two views of one state.
     *
     * <pre>{@code
     * // Kotlin: val limiter = Semaphore(8)
     * AsyncSemaphore limiter = AsyncSemaphore.of(KotlinConfig.getLimiter());
     * }</pre>
     *
     * @param shared a semaphore made by the Kotlin factory {@code Semaphore(permits)}
     * @return a Java view of {@code shared}
     * @throws NullPointerException if {@code shared} is null
     * @throws IllegalArgumentException if {@code shared} is not backed by the library's engine (another
     *     implementation of the interface), since there would be no queue to share
     */
    public static AsyncSemaphore of(Semaphore shared) {
        Objects.requireNonNull(shared, "shared must not be null");
        if (!(shared instanceof WaiterQueueOwner)) {
            throw new IllegalArgumentException("cannot share a queue with " + shared
                    + " (" + shared.getClass().getName() + "): it is not made by dev.semaphore's Semaphore(permits) factory");
        }
        return new AsyncSemaphore(shared, ((WaiterQueueOwner) shared).getWaiterQueue());
    }

    /**
     * The Kotlin semaphore this object is a view of; coroutines that use it wait in the same line.
     *
     * <pre>{@code
     * kotlinService.start(semaphore.asKotlin());
     * }</pre>
     *
     * @return the shared Kotlin semaphore
     */
    public Semaphore asKotlin() {
        return kotlin;
    }

    /**
     * Requests one permit. Same as {@link #acquire(int) acquire(1)}.
     *
     * <pre>{@code
     * semaphore.acquire().thenAccept(permit -> { try (permit) { work(); } });
     * }</pre>
     *
     * @return a future of the permit; see {@link #acquire(int)}
     */
    public CompletableFuture<Permit> acquire() {
        return front.acquire(1, 0, null);
    }

    /**
     * Requests {@code permits} permits, granted together. The future completes with a {@link Permit}
     * when they are granted (at once if free and nobody waits), or exceptionally with
     * {@link SemaphoreClosedException} if the semaphore is or becomes closed, or with an
     * {@code IllegalStateException} if {@link #reducePermits(int)} made the request impossible.
     * Cancel the future to withdraw the request (see the class comment: nothing is lost).
     *
     * <pre>{@code
     * CompletableFuture<Permit> two = semaphore.acquire(2);
     * two.thenAccept(p -> { try (p) { copyTwoFiles(); } });
     * }</pre>
     *
     * @param permits how many permits, at least 1 and at most the total
     * @return a future of the permit
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total (nothing is queued)
     */
    public CompletableFuture<Permit> acquire(int permits) {
        QueueFront.checkPermits(permits);
        return front.acquire(permits, 0, null);
    }

    /**
     * Requests {@code permits} permits for at most {@code timeout}. If they are not granted in time the
     * future fails with {@link TimeoutException} and nothing is held (a grant that races the timeout is
     * passed on, never lost). A zero or negative timeout only tries now: the future is then already
     * complete, with a permit or with {@code TimeoutException}.
     *
     * <pre>{@code
     * semaphore.acquire(1, Duration.ofMillis(200))
     *          .thenAccept(p -> { try (p) { work(); } })
     *          .exceptionally(e -> { log("busy, try later"); return null; });
     * }</pre>
     *
     * @param permits how many permits, at least 1 and at most the total
     * @param timeout the longest wait; zero or negative means "only if free now"
     * @return a future of the permit
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total
     * @throws NullPointerException if {@code timeout} is null
     */
    public CompletableFuture<Permit> acquire(int permits, Duration timeout) {
        QueueFront.checkPermits(permits);
        QueueFront.checkTimeout(timeout);
        return front.acquire(permits, 0, null, timeout);
    }

    /**
     * Takes one permit if one is free and nobody waits. Release it with {@link #release()}.
     *
     * <pre>{@code
     * if (semaphore.tryAcquire()) {
     *     try { work(); } finally { semaphore.release(); }
     * }
     * }</pre>
     *
     * @return true if the permit was taken
     * @throws SemaphoreClosedException if the semaphore is closed
     */
    public boolean tryAcquire() {
        return queue.tryAcquire(1, 0);
    }

    /**
     * Takes {@code permits} permits if they are free and nobody waits; false otherwise, with nothing held.
     *
     * <pre>{@code
     * if (semaphore.tryAcquire(3)) {
     *     try { bulkWork(); } finally { semaphore.release(3); }
     * }
     * }</pre>
     *
     * @param permits how many permits, at least 1 and at most the total
     * @return true if the permits were taken
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total
     * @throws SemaphoreClosedException if the semaphore is closed
     */
    public boolean tryAcquire(int permits) {
        QueueFront.checkPermits(permits);
        return queue.tryAcquire(permits, 0);
    }

    /**
     * Blocks the calling thread for at most {@code timeout} until {@code permits} permits are granted, like
     * {@link java.util.concurrent.Semaphore#tryAcquire(int, long, java.util.concurrent.TimeUnit)}. Release
     * them with {@link #release(int)}. See {@link #acquireBlocking(int, Duration)} for interrupts.
     *
     * <pre>{@code
     * if (semaphore.tryAcquire(1, Duration.ofSeconds(1))) {
     *     try { work(); } finally { semaphore.release(); }
     * }
     * }</pre>
     *
     * @param permits how many permits, at least 1 and at most the total
     * @param timeout the longest wait; zero or negative only tries now
     * @return true if the permits are held, false if the time ran out (nothing held)
     * @throws InterruptedException if interrupted (nothing held)
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total
     * @throws NullPointerException if {@code timeout} is null
     * @throws SemaphoreClosedException if the semaphore is or becomes closed
     */
    public boolean tryAcquire(int permits, Duration timeout) throws InterruptedException {
        Optional<Permit> p = acquireBlocking(permits, timeout);
        return p.isPresent();
    }

    /**
     * Acquires one permit, runs {@code action}, and releases the permit when the stage the action returns
     * completes, normally or exceptionally. See {@link #withPermit(int, Supplier)}.
     *
     * <pre>{@code
     * CompletableFuture<Response> r = semaphore.withPermit(() -> client.sendAsync(request));
     * }</pre>
     *
     * @param action starts the work and returns its stage
     * @param <T> the result type
     * @return a future of the action's result
     * @throws NullPointerException if {@code action} is null
     */
    public <T extends @Nullable Object> CompletableFuture<T> withPermit(Supplier<? extends CompletionStage<T>> action) {
        return withPermit(1, action);
    }

    /**
     * Acquires {@code permits} permits, runs {@code action}, and releases them when the stage the action
     * returns completes, normally or exceptionally; also when the action throws (the result fails with
     * that exception) or returns null (the result fails with {@link NullPointerException}). Cancelling the
     * result while the permits are not yet granted withdraws the request; once the action runs,
     * cancelling the result does not stop it and the permits are released when its stage completes.
     * The action runs on the thread that grants the permits (the caller's, if they are free).
     *
     * <pre>{@code
     * CompletableFuture<Report> report = semaphore.withPermit(2, () -> CompletableFuture.supplyAsync(this::buildReport, pool));
     * }</pre>
     *
     * @param permits how many permits, at least 1 and at most the total
     * @param action starts the work and returns its stage
     * @param <T> the result type
     * @return a future of the action's result, failed if the acquisition fails (e.g. closed semaphore)
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total
     * @throws NullPointerException if {@code action} is null
     */
    public <T extends @Nullable Object> CompletableFuture<T> withPermit(
            int permits, Supplier<? extends CompletionStage<T>> action) {
        QueueFront.checkPermits(permits);
        QueueFront.checkAction(action);
        return QueueFront.withPermit(front.acquire(permits, 0, null), action);
    }

    /**
     * Blocks until one permit is granted. Same as {@link #acquireBlocking(int) acquireBlocking(1)}.
     *
     * <pre>{@code
     * try (Permit permit = semaphore.acquireBlocking()) {
     *     work();
     * }
     * }</pre>
     *
     * @return the permit, to be closed
     * @throws InterruptedException if interrupted before or while waiting (nothing held)
     * @throws SemaphoreClosedException if the semaphore is or becomes closed
     */
    public Permit acquireBlocking() throws InterruptedException {
        return acquireBlocking(1);
    }

    /**
     * Blocks the calling thread until {@code permits} permits are granted, waiting in the same line as
     * futures and coroutines. Made for plain and virtual threads: the thread parks with
     * {@link java.util.concurrent.locks.LockSupport}, so a virtual thread frees its carrier while waiting.
     *
     * <p><b>Interrupts.</b> An interrupt, before or during the wait, removes the request and throws
     * {@link InterruptedException} with nothing held (the interrupt flag is cleared, as usual). If the
     * permits were granted in the same instant as the interrupt, they are handed back to the semaphore
     * (the next waiter) and the exception is still thrown: {@code InterruptedException} always means
     * nothing is held.
     *
     * <pre>{@code
     * try (Permit permit = semaphore.acquireBlocking(2)) {
     *     transfer();
     * }
     * }</pre>
     *
     * @param permits how many permits, at least 1 and at most the total
     * @return the permit, to be closed
     * @throws InterruptedException if interrupted (nothing held)
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total
     * @throws SemaphoreClosedException if the semaphore is or becomes closed
     */
    public Permit acquireBlocking(int permits) throws InterruptedException {
        QueueFront.checkPermits(permits);
        return Objects.requireNonNull(front.acquireBlocking(permits, 0, null, -1L));
    }

    /**
     * Blocks for at most {@code timeout} until {@code permits} permits are granted. Returns the permit, or
     * an empty Optional if the time ran out (nothing held; a grant racing the deadline is kept and
     * returned, never lost). A zero or negative timeout only tries now. Interrupts as in
     * {@link #acquireBlocking(int)}.
     *
     * <pre>{@code
     * Optional<Permit> maybe = semaphore.acquireBlocking(1, Duration.ofMillis(500));
     * if (maybe.isPresent()) {
     *     try (Permit p = maybe.get()) { work(); }
     * } else {
     *     rejectRequest();
     * }
     * }</pre>
     *
     * @param permits how many permits, at least 1 and at most the total
     * @param timeout the longest wait
     * @return the permit, or empty on timeout
     * @throws InterruptedException if interrupted (nothing held)
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total
     * @throws NullPointerException if {@code timeout} is null
     * @throws SemaphoreClosedException if the semaphore is or becomes closed
     */
    public Optional<Permit> acquireBlocking(int permits, Duration timeout) throws InterruptedException {
        QueueFront.checkPermits(permits);
        QueueFront.checkTimeout(timeout);
        long nanos = Math.max(0L, Timeouts.saturatedNanos(timeout));
        return Optional.ofNullable(front.acquireBlocking(permits, 0, null, nanos));
    }

}
