package dev.semaphore.async;

import dev.semaphore.PrioritySemaphore;
import dev.semaphore.internal.JavaInterop;
import dev.semaphore.SemaphoreClosedException;
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
 * A semaphore that serves requests by priority (a higher number first; first come, first served among
 * equals), for Java: futures of {@link Permit} and blocking calls. It is a view of a Kotlin
 * {@link dev.semaphore.PrioritySemaphore}; coroutines of the same semaphore wait in the same line.
 * Everything else (whole grants, head-of-line blocking, nothing lost on cancel or timeout, which
 * thread runs the dependents) is as in {@link AsyncSemaphore}.
 *
 * <p>To avoid mixing up the two int arguments, every method that takes a priority takes the permit
 * count right after it: {@code acquire(priority, permits)}, as in Kotlin.
 *
 * <pre>{@code
 * AsyncPrioritySemaphore db = AsyncPrioritySemaphore.create(2);
 * db.withPermit(10, 1, () -> interactiveQuery());   // served before
 * db.withPermit(0, 1, () -> nightlyBatch());        // this, if both wait
 * }</pre>
 */
public final class AsyncPrioritySemaphore extends AsyncPermitPool {
    private static final String NAME = "AsyncPrioritySemaphore";

    private final PrioritySemaphore kotlin;
    private final QueueFront front;

    private AsyncPrioritySemaphore(PrioritySemaphore kotlin, WaiterQueue queue) {
        super(queue, NAME);
        this.kotlin = kotlin;
        this.front = new QueueFront(
                queue,
                (permits, priority, owner) -> queue.tryAcquire(permits, priority),
                (permits, owner) -> new Permit(permits, queue::release, NAME));
    }

    /**
     * Creates a priority semaphore with {@code permits} permits and no aging.
     *
     * <pre>{@code
     * AsyncPrioritySemaphore pool = AsyncPrioritySemaphore.create(4);
     * }</pre>
     *
     * @param permits the initial number of permits, at least 0
     * @return a new priority semaphore
     * @throws IllegalArgumentException if {@code permits} is negative
     */
    public static AsyncPrioritySemaphore create(int permits) {
        if (permits < 0) throw new IllegalArgumentException("permits must be >= 0, was " + permits);
        return of(JavaInterop.prioritySemaphore(permits, 0L));
    }

    /**
     * Creates a priority semaphore with aging: a request's effective priority grows by one for every
     * {@code aging} it has waited, so low priorities cannot starve forever.
     *
     * <pre>{@code
     * AsyncPrioritySemaphore pool = AsyncPrioritySemaphore.create(4, Duration.ofSeconds(1));
     * }</pre>
     *
     * @param permits the initial number of permits, at least 0
     * @param aging the wait that raises the priority by one; positive
     * @return a new priority semaphore
     * @throws IllegalArgumentException if {@code permits} is negative or {@code aging} is not positive
     * @throws NullPointerException if {@code aging} is null
     */
    public static AsyncPrioritySemaphore create(int permits, Duration aging) {
        if (permits < 0) throw new IllegalArgumentException("permits must be >= 0, was " + permits);
        Objects.requireNonNull(aging, "aging must not be null");
        if (aging.isNegative() || aging.isZero()) {
            throw new IllegalArgumentException("aging must be positive, was " + aging);
        }
        return of(JavaInterop.prioritySemaphore(permits, Timeouts.saturatedNanos(aging)));
    }

    /**
     * Wraps a Kotlin priority semaphore, so Java and Kotlin share its line and permits.
     *
     * <pre>{@code
     * // Kotlin: val pool = PrioritySemaphore(2, aging = 1.seconds)
     * AsyncPrioritySemaphore pool = AsyncPrioritySemaphore.of(KotlinConfig.getPool());
     * }</pre>
     *
     * @param shared a priority semaphore made by the Kotlin factory {@code PrioritySemaphore(...)}
     * @return a Java view of {@code shared}
     * @throws NullPointerException if {@code shared} is null
     * @throws IllegalArgumentException if {@code shared} is not backed by the library's engine
     */
    public static AsyncPrioritySemaphore of(PrioritySemaphore shared) {
        Objects.requireNonNull(shared, "shared must not be null");
        if (!(shared instanceof WaiterQueueOwner)) {
            throw new IllegalArgumentException("cannot share a queue with " + shared
                    + " (" + shared.getClass().getName() + "): it is not made by dev.semaphore's PrioritySemaphore factory");
        }
        return new AsyncPrioritySemaphore(shared, ((WaiterQueueOwner) shared).getWaiterQueue());
    }

    /**
     * The Kotlin priority semaphore this object is a view of.
     *
     * <pre>{@code
     * kotlinScheduler.use(pool.asKotlin());
     * }</pre>
     *
     * @return the shared Kotlin priority semaphore
     */
    public PrioritySemaphore asKotlin() {
        return kotlin;
    }

    /**
     * Requests one permit at priority 0.
     *
     * <pre>{@code
     * pool.acquire().thenAccept(p -> { try (p) { work(); } });
     * }</pre>
     *
     * @return a future of the permit; see {@link #acquire(int, int)}
     */
    public CompletableFuture<Permit> acquire() {
        return front.acquire(1, 0, null);
    }

    /**
     * Requests {@code permits} permits at {@code priority}. The future completes with the {@link Permit}
     * when granted, or exceptionally with {@link SemaphoreClosedException} if closed. Cancel it to
     * withdraw the request; nothing is lost (see {@link AsyncSemaphore}).
     *
     * <pre>{@code
     * pool.acquire(5, 1).thenAccept(p -> { try (p) { urgentWork(); } });
     * }</pre>
     *
     * @param priority any int; higher is served first
     * @param permits how many permits, at least 1 and at most the total
     * @return a future of the permit
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total
     */
    public CompletableFuture<Permit> acquire(int priority, int permits) {
        QueueFront.checkPermits(permits);
        return front.acquire(permits, priority, null);
    }

    /**
     * Requests {@code permits} permits at {@code priority} for at most {@code timeout}; the future fails
     * with {@link TimeoutException} (nothing held) if they are not granted in time. Zero or negative
     * only tries now.
     *
     * <pre>{@code
     * pool.acquire(1, 1, Duration.ofMillis(100)).exceptionally(e -> { shed(); return null; });
     * }</pre>
     *
     * @param priority any int; higher is served first
     * @param permits how many permits, at least 1 and at most the total
     * @param timeout the longest wait
     * @return a future of the permit
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total
     * @throws NullPointerException if {@code timeout} is null
     */
    public CompletableFuture<Permit> acquire(int priority, int permits, Duration timeout) {
        QueueFront.checkPermits(permits);
        QueueFront.checkTimeout(timeout);
        return front.acquire(permits, priority, null, timeout);
    }

    /**
     * Takes one permit at priority 0 if it is free and no queued request ranks at or above 0.
     *
     * <pre>{@code
     * if (pool.tryAcquire()) { try { work(); } finally { pool.release(); } }
     * }</pre>
     *
     * @return true if taken
     * @throws SemaphoreClosedException if closed
     */
    public boolean tryAcquire() {
        return queue.tryAcquire(1, 0);
    }

    /**
     * Takes {@code permits} permits now if they are free and this request would be first in line (no
     * queued request ranks at or above {@code priority}); false otherwise, with nothing held.
     *
     * <pre>{@code
     * if (pool.tryAcquire(10, 2)) { try { work(); } finally { pool.release(2); } }
     * }</pre>
     *
     * @param priority the request's priority
     * @param permits how many permits, at least 1 and at most the total
     * @return true if taken
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total
     * @throws SemaphoreClosedException if closed
     */
    public boolean tryAcquire(int priority, int permits) {
        QueueFront.checkPermits(permits);
        return queue.tryAcquire(permits, priority);
    }

    /**
     * Blocks for at most {@code timeout} for {@code permits} permits at {@code priority}; true if they are
     * held (release them with {@link #release(int)}), false if the time ran out. Interrupts as in
     * {@link AsyncSemaphore#acquireBlocking(int)}.
     *
     * <pre>{@code
     * if (pool.tryAcquire(3, 1, Duration.ofSeconds(1))) { try { work(); } finally { pool.release(); } }
     * }</pre>
     *
     * @param priority the request's priority
     * @param permits how many permits, at least 1 and at most the total
     * @param timeout the longest wait; zero or negative only tries now
     * @return true if held
     * @throws InterruptedException if interrupted (nothing held)
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total
     * @throws NullPointerException if {@code timeout} is null
     */
    public boolean tryAcquire(int priority, int permits, Duration timeout) throws InterruptedException {
        return acquireBlocking(priority, permits, timeout).isPresent();
    }

    /**
     * {@link #withPermit(int, int, Supplier)} with priority 0 and one permit.
     *
     * <pre>{@code
     * CompletableFuture<Row> row = pool.withPermit(() -> db.queryAsync(sql));
     * }</pre>
     *
     * @param action starts the work and returns its stage
     * @param <T> the result type
     * @return a future of the action's result
     * @throws NullPointerException if {@code action} is null
     */
    public <T extends @Nullable Object> CompletableFuture<T> withPermit(Supplier<? extends CompletionStage<T>> action) {
        return withPermit(0, 1, action);
    }

    /**
     * Acquires {@code permits} permits at {@code priority}, runs {@code action}, and releases them when
     * its stage completes (or when it throws or returns null, which fail the result). See
     * {@link AsyncSemaphore#withPermit(int, Supplier)}.
     *
     * <pre>{@code
     * CompletableFuture<Row> row = pool.withPermit(10, 1, () -> db.queryAsync(sql));
     * }</pre>
     *
     * @param priority the request's priority
     * @param permits how many permits, at least 1 and at most the total
     * @param action starts the work and returns its stage
     * @param <T> the result type
     * @return a future of the action's result
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total
     * @throws NullPointerException if {@code action} is null
     */
    public <T extends @Nullable Object> CompletableFuture<T> withPermit(
            int priority, int permits, Supplier<? extends CompletionStage<T>> action) {
        QueueFront.checkPermits(permits);
        QueueFront.checkAction(action);
        return QueueFront.withPermit(front.acquire(permits, priority, null), action);
    }

    /**
     * Blocks until one permit at priority 0 is granted.
     *
     * <pre>{@code
     * try (Permit p = pool.acquireBlocking()) { work(); }
     * }</pre>
     *
     * @return the permit, to be closed
     * @throws InterruptedException if interrupted (nothing held)
     */
    public Permit acquireBlocking() throws InterruptedException {
        return acquireBlocking(0, 1);
    }

    /**
     * Blocks until {@code permits} permits at {@code priority} are granted; interrupts as in
     * {@link AsyncSemaphore#acquireBlocking(int)} (InterruptedException always means nothing is held).
     *
     * <pre>{@code
     * try (Permit p = pool.acquireBlocking(10, 2)) { work(); }
     * }</pre>
     *
     * @param priority the request's priority
     * @param permits how many permits, at least 1 and at most the total
     * @return the permit, to be closed
     * @throws InterruptedException if interrupted (nothing held)
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total
     * @throws SemaphoreClosedException if the semaphore is or becomes closed
     */
    public Permit acquireBlocking(int priority, int permits) throws InterruptedException {
        QueueFront.checkPermits(permits);
        return Objects.requireNonNull(front.acquireBlocking(permits, priority, null, -1L));
    }

    /**
     * Blocks for at most {@code timeout} for {@code permits} permits at {@code priority}: the permit, or
     * empty when the time ran out (nothing held). Zero or negative only tries now.
     *
     * <pre>{@code
     * pool.acquireBlocking(1, 1, Duration.ofMillis(50)).ifPresentOrElse(p -> { try (p) { work(); } }, this::shed);
     * }</pre>
     *
     * @param priority the request's priority
     * @param permits how many permits, at least 1 and at most the total
     * @param timeout the longest wait
     * @return the permit, or empty on timeout
     * @throws InterruptedException if interrupted (nothing held)
     * @throws IllegalArgumentException if {@code permits < 1} or more than the total
     * @throws NullPointerException if {@code timeout} is null
     */
    public Optional<Permit> acquireBlocking(int priority, int permits, Duration timeout) throws InterruptedException {
        QueueFront.checkPermits(permits);
        QueueFront.checkTimeout(timeout);
        long nanos = Math.max(0L, Timeouts.saturatedNanos(timeout));
        return Optional.ofNullable(front.acquireBlocking(permits, priority, null, nanos));
    }

    /**
     * The number of requests in line with base priority {@code priority} (a snapshot).
     *
     * <pre>{@code
     * int urgentWaiting = pool.queueLength(10);
     * }</pre>
     *
     * @param priority the base priority
     * @return the number of queued requests at that priority
     */
    public int queueLength(int priority) {
        return queue.queueLength(priority);
    }

}
