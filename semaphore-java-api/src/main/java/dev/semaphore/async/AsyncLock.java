package dev.semaphore.async;

import static dev.semaphore.bridge.JavaBridge.NO_TIMEOUT;

import dev.semaphore.Diagnostics;
import dev.semaphore.Lock;
import dev.semaphore.LockKt;
import dev.semaphore.bridge.JavaBridge;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A fair, non-reentrant mutual-exclusion lock for Java: the lock comes as a future of a {@link Permit}
 * (closing it unlocks), from blocking calls, or from {@code java.util.concurrent.locks.Lock}-style
 * {@code tryLock} forms. The families and their shapes are those of {@link AsyncPermitPool}, for one
 * hold: {@code lock}, {@code lockBlocking}, {@code tryLock} (then {@link #unlock()}), {@code withLock}. It
 * is a view of a Kotlin {@link Lock}: coroutines, futures and blocked threads wait in one line, under the
 * <a href="package-summary.html#fairness">rules of the package</a>.
 *
 * <p><b>Holds.</b> Each {@code Permit} stands for one hold of the lock: closing it unlocks that hold
 * only, and throws {@link IllegalStateException} (changing nothing) if someone already ended it, however
 * the lock was taken again since. That is what the Kotlin lock's owners give Kotlin code, so this class
 * takes no owner: an {@code Object owner} parameter would also accept {@code tryLock(5000)} and take
 * the lock with 5000 as its owner. (Kotlin code sees the holds of Java callers as holds without owner.)
 *
 * <pre>{@code
 * AsyncLock lock = AsyncLock.create();
 * CompletableFuture<Integer> saved = lock.withLock(() -> save(order));
 * try (Permit held = lock.lockBlocking()) {        // on a plain or virtual thread
 *     balance -= 10;
 * }
 * }</pre>
 */
public final class AsyncLock implements AsyncInspectable {
    private final Lock kotlin;

    private AsyncLock(Lock kotlin) {
        this.kotlin = kotlin;
    }

    /** @return a new, unlocked lock */
    public static AsyncLock create() {
        return new AsyncLock(LockKt.Lock(false, Diagnostics.NONE));
    }

    /**
     * @param diagnostics what it reports about itself, such as its name: {@code Diagnostics.named("ledger")}
     * @return a new, unlocked lock
     */
    public static AsyncLock create(Diagnostics diagnostics) {
        return new AsyncLock(LockKt.Lock(false, Objects.requireNonNull(diagnostics, "diagnostics")));
    }

    /**
     * @param shared a Kotlin lock (waiting needs one made by the library's {@code Lock()} factory)
     * @return a Java view of {@code shared}: Java and Kotlin code exclude each other through one line
     */
    public static AsyncLock of(Lock shared) {
        return new AsyncLock(Objects.requireNonNull(shared, "shared"));
    }

    /** @return the Kotlin lock this is a view of */
    @Override
    public Lock asKotlin() {
        return kotlin;
    }


    /** @return a future of the held lock (<a href="package-summary.html#withdrawing">withdrawing</a>) */
    public CompletableFuture<Permit> lock() {
        return JavaBridge.lockAsync(kotlin, NO_TIMEOUT, Permit.OF_HOLD);
    }

    /**
     * @param timeout the longest wait (<a href="package-summary.html#timeouts">timeouts</a>)
     * @return a future of the held lock, failed with a {@code TimeoutException} if the time ran out
     */
    public CompletableFuture<Permit> lock(Duration timeout) {
        return JavaBridge.lockAsync(kotlin, Waits.nanos(timeout), Permit.OF_HOLD);
    }

    /**
     * @return the held lock; close it to unlock (<a href="package-summary.html#interrupts">interrupts</a>)
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Permit lockBlocking() throws InterruptedException {
        return Objects.requireNonNull(JavaBridge.lockBlocking(kotlin, NO_TIMEOUT, Permit.OF_HOLD));
    }

    /**
     * @param timeout the longest wait; zero or negative only tries now
     * @return the held lock, or empty if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Optional<Permit> lockBlocking(Duration timeout) throws InterruptedException {
        return Optional.ofNullable(JavaBridge.lockBlocking(kotlin, Waits.nanos(timeout), Permit.OF_HOLD));
    }

    /** @return true if the lock was free and nobody waited; unlock with {@link #unlock()}. Never waits. */
    public boolean tryLock() {
        return kotlin.tryLock(null);
    }

    /**
     * Like {@link java.util.concurrent.locks.Lock#tryLock(long, java.util.concurrent.TimeUnit)}:
     * <b>blocks</b> the calling thread for at most {@code timeout}.
     *
     * @param timeout the longest wait; zero or negative only tries now
     * @return true if the lock is held (unlock with {@link #unlock()}), false if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public boolean tryLock(Duration timeout) throws InterruptedException {
        return JavaBridge.lockBlocking(kotlin, Waits.nanos(timeout), hold -> hold) != null;
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
     * Locks, runs {@code action}, and unlocks when its stage completes, however it ends; see
     * {@link AsyncPermitPool#withPermit(int, Supplier)}.
     *
     * @param action starts the work and returns its stage
     * @param <T> the result type
     * @return a future of the action's result
     */
    public <T extends @Nullable Object> CompletableFuture<T> withLock(Supplier<? extends CompletionStage<T>> action) {
        return Waits.withPermit(Objects.requireNonNull(action, "action"), lock());
    }

    /** @return true while the lock is held (a snapshot) */
    public boolean isLocked() {
        return kotlin.isLocked();
    }

    /** @return the futures, threads and coroutines waiting for the lock (a snapshot) */
    public int queueLength() {
        return kotlin.getQueueLength();
    }

    /** @return true once {@link #close(Throwable)} was called */
    public boolean isClosed() {
        return kotlin.isClosed();
    }

    /**
     * Fails every waiter with {@link dev.semaphore.SemaphoreClosedException} carrying {@code cause}, and
     * every later {@code lock} and {@code tryLock}; the holder may still unlock. See {@link Lock#close(Throwable)}.
     *
     * @param cause the reason, or null
     */
    public void close(@Nullable Throwable cause) {
        kotlin.close(cause);
    }

    @Override
    public String toString() {
        return "AsyncLock(" + kotlin + ")";
    }
}
