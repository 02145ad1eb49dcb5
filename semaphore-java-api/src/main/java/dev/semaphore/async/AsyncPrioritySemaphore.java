package dev.semaphore.async;

import dev.semaphore.Diagnostics;
import dev.semaphore.PrioritySemaphore;
import dev.semaphore.bridge.JavaBridge;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A semaphore that serves requests by priority (a higher number first; first come, first served among
 * equals), for Java. It is a view of a Kotlin {@link PrioritySemaphore}, and takes permits in every way
 * {@link AsyncPermitPool} describes, at the priority of the view: 0 for the one {@link #create(int)}
 * gives, and the one you name for {@link #atPriority(int)}. So a priority is never a positional
 * {@code int} next to a permit count: {@code pool.atPriority(10).acquire(2)} asks for 2 permits at
 * priority 10.
 *
 * <pre>{@code
 * AsyncPrioritySemaphore database = AsyncPrioritySemaphore.create(1);
 * CompletableFuture<String> report = database.withPermit(() -> query("nightly report"));              // priority 0
 * CompletableFuture<String> page = database.atPriority(10).withPermit(() -> query("user page"));      // served first if both wait
 * }</pre>
 */
public final class AsyncPrioritySemaphore extends AsyncPermitPool {
    private final PrioritySemaphore kotlin;
    private final int priority;

    private AsyncPrioritySemaphore(PrioritySemaphore kotlin, int priority) {
        super(kotlin, priority);
        this.kotlin = kotlin;
        this.priority = priority;
    }

    /**
     * @param permits the total, at least 0
     * @return a new priority semaphore without aging, whose requests have priority 0
     */
    public static AsyncPrioritySemaphore create(int permits) {
        return new AsyncPrioritySemaphore(JavaBridge.prioritySemaphore(permits, null, Diagnostics.NONE), 0);
    }

    /**
     * @param permits the total, at least 0
     * @param aging a waiter's priority grows by one for each {@code aging} it has waited, so low priorities
     *     are not starved forever
     * @return a new priority semaphore, whose requests have priority 0
     */
    public static AsyncPrioritySemaphore create(int permits, Duration aging) {
        return new AsyncPrioritySemaphore(
                JavaBridge.prioritySemaphore(permits, Objects.requireNonNull(aging, "aging"), Diagnostics.NONE), 0);
    }

    /**
     * @param permits the total, at least 0
     * @param aging as in {@link #create(int, Duration)}, or null for none
     * @param diagnostics what it reports about itself, such as its name: {@code Diagnostics.named("jobs")}
     * @return a new priority semaphore, whose requests have priority 0
     */
    public static AsyncPrioritySemaphore create(int permits, @Nullable Duration aging, Diagnostics diagnostics) {
        return new AsyncPrioritySemaphore(
                JavaBridge.prioritySemaphore(permits, aging, Objects.requireNonNull(diagnostics, "diagnostics")), 0);
    }

    /**
     * @param shared a Kotlin priority semaphore (waiting needs one made by the library's factory)
     * @return a Java view of {@code shared}, sharing its line and permits, whose requests have priority 0
     */
    public static AsyncPrioritySemaphore of(PrioritySemaphore shared) {
        return new AsyncPrioritySemaphore(Objects.requireNonNull(shared, "shared"), 0);
    }

    /**
     * A view of the same semaphore (the same permits, the same line) whose requests have
     * {@code priority}: {@code atPriority(10).acquire(2)} asks for 2 permits at priority 10. Cheap; make
     * one per call or keep it.
     *
     * @param priority any int; higher is served first
     * @return the view
     */
    public AsyncPrioritySemaphore atPriority(int priority) {
        return priority == this.priority ? this : new AsyncPrioritySemaphore(kotlin, priority);
    }

    /** @return the priority of this view's requests */
    public int priority() {
        return priority;
    }

    /**
     * @param priority a base priority
     * @return how many waiters of that priority wait now
     */
    public int queueLength(int priority) {
        return kotlin.queueLength(priority);
    }

    /** @return the Kotlin priority semaphore this is a view of */
    @Override
    public PrioritySemaphore asKotlin() {
        return kotlin;
    }
}
