package dev.semaphore.async;

import static java.util.concurrent.TimeUnit.NANOSECONDS;

import dev.semaphore.JavaBridge;
import dev.semaphore.Lock;
import dev.semaphore.LockKt;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A fair, non-reentrant mutual-exclusion lock for Java: the lock comes as a future of a {@link Permit}
 * (closing it unlocks), or from blocking calls. It is a view of a Kotlin {@link Lock}: coroutines,
 * futures and blocked threads wait in one line, under the <a href="package-summary.html#fairness">rules
 * of the package</a>.
 *
 * <p><b>Holds.</b> Each {@code Permit} stands for one hold of the lock: closing it unlocks that hold
 * only, and throws {@link IllegalStateException} (changing nothing) if someone already ended it, however
 * the lock was taken again since. <b>Owners.</b> The {@code owner} variants record who holds the lock
 * (any object, compared by identity), as the Kotlin Lock does: locking again with the owner that holds
 * it throws {@link IllegalStateException} instead of deadlocking, {@link #unlock(Object)} with another
 * owner throws, and Kotlin code sees the holder through {@code holdsLock(owner)}.
 *
 * <pre>{@code
 * AsyncLock lock = AsyncLock.create();
 * CompletableFuture<Integer> saved = lock.withLock(() -> save(order));
 * try (Permit held = lock.lockBlocking()) {        // on a plain or virtual thread
 *     balance -= 10;
 * }
 * }</pre>
 */
public final class AsyncLock {
    private final Lock kotlin;

    private AsyncLock(Lock kotlin) {
        this.kotlin = kotlin;
    }

    /** @return a new, unlocked lock */
    public static AsyncLock create() {
        return create(false);
    }

    /**
     * @param locked whether it starts held (without owner; {@link #unlock()} frees it)
     * @return a new lock
     */
    public static AsyncLock create(boolean locked) {
        return new AsyncLock(LockKt.Lock(locked));
    }

    /**
     * @param shared a Kotlin lock (waiting needs one made by the library's {@code Lock()} factory)
     * @return a Java view of {@code shared}: Java and Kotlin code exclude each other through one line
     */
    public static AsyncLock of(Lock shared) {
        return new AsyncLock(Objects.requireNonNull(shared, "shared"));
    }

    /** @return the Kotlin lock this is a view of */
    public Lock asKotlin() {
        return kotlin;
    }

    /** @return a future of the held lock, without owner (<a href="package-summary.html#withdrawing">withdrawing</a>) */
    public CompletableFuture<Permit> lock() {
        return JavaBridge.lockAsync(kotlin, null, Waits.FOREVER, NANOSECONDS, Permit.OF_HOLD);
    }

    /**
     * @param owner who will hold the lock
     * @return a future of the held lock
     * @throws IllegalStateException if {@code owner} holds the lock already
     */
    public CompletableFuture<Permit> lock(Object owner) {
        return JavaBridge.lockAsync(kotlin, checked(owner), Waits.FOREVER, NANOSECONDS, Permit.OF_HOLD);
    }

    /**
     * @param timeout the longest wait (<a href="package-summary.html#timeouts">timeouts</a>)
     * @return a future of the held lock, without owner
     */
    public CompletableFuture<Permit> lock(Duration timeout) {
        return JavaBridge.lockAsync(kotlin, null, Waits.nanos(timeout), NANOSECONDS, Permit.OF_HOLD);
    }

    /**
     * @param owner who will hold the lock
     * @param timeout the longest wait
     * @return a future of the held lock
     * @throws IllegalStateException if {@code owner} holds the lock already
     */
    public CompletableFuture<Permit> lock(Object owner, Duration timeout) {
        return JavaBridge.lockAsync(kotlin, checked(owner), Waits.nanos(timeout), NANOSECONDS, Permit.OF_HOLD);
    }

    /** @return true if the lock was free and nobody waited; unlock with {@link #unlock()} */
    public boolean tryLock() {
        return kotlin.tryLock(null);
    }

    /**
     * @param owner who will hold the lock
     * @return true if the lock was free and nobody waited; unlock with {@link #unlock(Object)}
     * @throws IllegalStateException if {@code owner} holds the lock already
     */
    public boolean tryLock(Object owner) {
        return kotlin.tryLock(checked(owner));
    }

    /**
     * Like {@link java.util.concurrent.locks.Lock#tryLock(long, java.util.concurrent.TimeUnit)}.
     *
     * @param timeout the longest wait
     * @return true if the lock is held (unlock with {@link #unlock()}), false if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public boolean tryLock(Duration timeout) throws InterruptedException {
        return lockBlocking(timeout).isPresent();
    }

    /**
     * @param owner who will hold the lock
     * @param timeout the longest wait
     * @return true if the lock is held (unlock with {@link #unlock(Object)}), false if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public boolean tryLock(Object owner, Duration timeout) throws InterruptedException {
        return lockBlocking(owner, timeout).isPresent();
    }

    /**
     * Unlocks whoever holds the lock (a {@code Permit}'s hold too: that permit's close then throws).
     *
     * @throws IllegalStateException if the lock is not held
     */
    public void unlock() {
        kotlin.unlock(null);
    }

    /**
     * @param owner the holder
     * @throws IllegalStateException if the lock is not held, or held by someone else
     */
    public void unlock(Object owner) {
        kotlin.unlock(checked(owner));
    }

    /**
     * Locks (without owner), runs {@code action}, and unlocks when its stage completes, however it ends;
     * see {@link AsyncSemaphore#withPermit(int, Supplier)}.
     *
     * @param action starts the work and returns its stage
     * @param <T> the result type
     * @return a future of the action's result
     */
    public <T extends @Nullable Object> CompletableFuture<T> withLock(Supplier<? extends CompletionStage<T>> action) {
        return Waits.withPermit(Objects.requireNonNull(action, "action"), lock());
    }

    /**
     * @param owner who holds the lock while the action runs
     * @param action starts the work and returns its stage
     * @param <T> the result type
     * @return a future of the action's result; see {@link #withLock(Supplier)}
     */
    public <T extends @Nullable Object> CompletableFuture<T> withLock(
            Object owner, Supplier<? extends CompletionStage<T>> action) {
        return Waits.withPermit(Objects.requireNonNull(action, "action"), lock(owner));
    }

    /**
     * @return the held lock, without owner; close it to unlock (<a href="package-summary.html#interrupts">interrupts</a>)
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Permit lockBlocking() throws InterruptedException {
        return new Permit(Objects.requireNonNull(JavaBridge.lockBlocking(kotlin, null, Waits.FOREVER, NANOSECONDS)));
    }

    /**
     * @param owner who will hold the lock
     * @return the held lock; close it to unlock
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Permit lockBlocking(Object owner) throws InterruptedException {
        return new Permit(Objects.requireNonNull(JavaBridge.lockBlocking(kotlin, checked(owner), Waits.FOREVER, NANOSECONDS)));
    }

    /**
     * @param timeout the longest wait
     * @return the held lock (without owner), or empty if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Optional<Permit> lockBlocking(Duration timeout) throws InterruptedException {
        return Optional.ofNullable(JavaBridge.lockBlocking(kotlin, null, Waits.nanos(timeout), NANOSECONDS)).map(Permit::new);
    }

    /**
     * @param owner who will hold the lock
     * @param timeout the longest wait
     * @return the held lock, or empty if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Optional<Permit> lockBlocking(Object owner, Duration timeout) throws InterruptedException {
        return Optional.ofNullable(JavaBridge.lockBlocking(kotlin, checked(owner), Waits.nanos(timeout), NANOSECONDS)).map(Permit::new);
    }

    /** @return true while the lock is held (a snapshot) */
    public boolean isLocked() {
        return kotlin.isLocked();
    }

    /**
     * @param owner the owner to test
     * @return true if {@code owner} holds the lock
     */
    public boolean holdsLock(Object owner) {
        return kotlin.holdsLock(checked(owner));
    }

    /** @return the futures, threads and coroutines waiting for the lock (a snapshot) */
    public int queueLength() {
        return kotlin.getQueueLength();
    }

    @Override
    public String toString() {
        return "AsyncLock(" + kotlin + ")";
    }

    private static Object checked(Object owner) {
        return Objects.requireNonNull(owner, "owner (use the variant without owner)");
    }
}
