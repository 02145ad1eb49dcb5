package dev.semaphore.async;

import static java.util.concurrent.TimeUnit.NANOSECONDS;

import dev.semaphore.JavaBridge;
import dev.semaphore.PrioritySemaphore;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A semaphore that serves requests by priority (a higher number first; first come, first served among
 * equals), for Java: futures of {@link Permit} and blocking calls. It is a view of a Kotlin
 * {@link PrioritySemaphore}; everything else is as in {@link AsyncSemaphore}, under the
 * <a href="package-summary.html#fairness">rules of the package</a>. Every method that takes a priority
 * takes the permit count right after it: {@code acquire(priority, permits)}, as in Kotlin.
 *
 * <pre>{@code
 * AsyncPrioritySemaphore database = AsyncPrioritySemaphore.create(1);
 * CompletableFuture<String> report = database.withPermit(0, 1, () -> query("nightly report"));
 * CompletableFuture<String> page = database.withPermit(10, 1, () -> query("user page")); // served first if both wait
 * }</pre>
 */
public final class AsyncPrioritySemaphore extends AsyncPermitPool {
    private final PrioritySemaphore kotlin;

    private AsyncPrioritySemaphore(PrioritySemaphore kotlin) {
        super(kotlin);
        this.kotlin = kotlin;
    }

    /**
     * @param permits the total, at least 0
     * @return a new priority semaphore without aging
     */
    public static AsyncPrioritySemaphore create(int permits) {
        return new AsyncPrioritySemaphore(JavaBridge.PrioritySemaphore(permits, null));
    }

    /**
     * @param permits the total, at least 0
     * @param aging a waiter's priority grows by one for each {@code aging} it has waited, so low priorities
     *     are not starved forever
     * @return a new priority semaphore
     */
    public static AsyncPrioritySemaphore create(int permits, Duration aging) {
        return new AsyncPrioritySemaphore(JavaBridge.PrioritySemaphore(permits, Objects.requireNonNull(aging, "aging")));
    }

    /**
     * @param shared a Kotlin priority semaphore (waiting needs one made by the library's factory)
     * @return a Java view of {@code shared}, sharing its line and permits
     */
    public static AsyncPrioritySemaphore of(PrioritySemaphore shared) {
        return new AsyncPrioritySemaphore(Objects.requireNonNull(shared, "shared"));
    }

    /** @return the Kotlin priority semaphore this is a view of */
    public PrioritySemaphore asKotlin() {
        return kotlin;
    }

    /** @return a future of one permit at priority 0 */
    public CompletableFuture<Permit> acquire() {
        return acquire(0, 1);
    }

    /**
     * @param priority any int; higher is served first
     * @param permits how many, at least 1 and at most the total
     * @return a future of the permit (<a href="package-summary.html#withdrawing">withdrawing</a>)
     */
    public CompletableFuture<Permit> acquire(int priority, int permits) {
        return JavaBridge.acquireAsync(kotlin, priority, permits, Waits.FOREVER, NANOSECONDS, newPermit);
    }

    /**
     * @param priority any int; higher is served first
     * @param permits how many, at least 1 and at most the total
     * @param timeout the longest wait (<a href="package-summary.html#timeouts">timeouts</a>)
     * @return a future of the permit
     */
    public CompletableFuture<Permit> acquire(int priority, int permits, Duration timeout) {
        return JavaBridge.acquireAsync(kotlin, priority, permits, Waits.nanos(timeout), NANOSECONDS, newPermit);
    }

    /** @return true if one permit was free and no waiter ranks at or above priority 0 */
    public boolean tryAcquire() {
        return kotlin.tryAcquire(0, 1);
    }

    /**
     * @param priority any int
     * @param permits how many, at least 1 and at most the total
     * @return true if they were free and this request would be first in line
     */
    public boolean tryAcquire(int priority, int permits) {
        return kotlin.tryAcquire(priority, permits);
    }

    /**
     * @param action starts the work and returns its stage
     * @param <T> the result type
     * @return see {@link AsyncSemaphore#withPermit(int, Supplier)}; priority 0, one permit
     */
    public <T extends @Nullable Object> CompletableFuture<T> withPermit(Supplier<? extends CompletionStage<T>> action) {
        return withPermit(0, 1, action);
    }

    /**
     * @param priority any int
     * @param permits how many, at least 1 and at most the total
     * @param action starts the work and returns its stage
     * @param <T> the result type
     * @return see {@link AsyncSemaphore#withPermit(int, Supplier)}
     */
    public <T extends @Nullable Object> CompletableFuture<T> withPermit(
            int priority, int permits, Supplier<? extends CompletionStage<T>> action) {
        return Waits.withPermit(Objects.requireNonNull(action, "action"), acquire(priority, permits));
    }

    /**
     * @param priority any int
     * @param permits how many, at least 1 and at most the total
     * @param timeout the longest wait
     * @return true if the permits are held (give them back with {@link #release(int)}), false if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public boolean tryAcquire(int priority, int permits, Duration timeout) throws InterruptedException {
        return JavaBridge.acquireBlocking(kotlin, priority, permits, Waits.nanos(timeout), NANOSECONDS);
    }

    /**
     * @return one permit at priority 0, to be closed
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Permit acquireBlocking() throws InterruptedException {
        return acquireBlocking(0, 1);
    }

    /**
     * @param priority any int
     * @param permits how many, at least 1 and at most the total
     * @return the permit, to be closed (<a href="package-summary.html#interrupts">interrupts</a>)
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Permit acquireBlocking(int priority, int permits) throws InterruptedException {
        JavaBridge.acquireBlocking(kotlin, priority, permits, Waits.FOREVER, NANOSECONDS);
        return new Permit(permits, kotlin, null);
    }

    /**
     * @param priority any int
     * @param permits how many, at least 1 and at most the total
     * @param timeout the longest wait
     * @return the permit, or empty if the time ran out (nothing held)
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Optional<Permit> acquireBlocking(int priority, int permits, Duration timeout) throws InterruptedException {
        return JavaBridge.acquireBlocking(kotlin, priority, permits, Waits.nanos(timeout), NANOSECONDS) ? Optional.of(new Permit(permits, kotlin, null)) : Optional.empty();
    }

    /**
     * @param priority a base priority
     * @return how many waiters of that priority wait now
     */
    public int queueLength(int priority) {
        return kotlin.queueLength(priority);
    }
}
