package dev.semaphore.async;

import dev.semaphore.Lock;
import dev.semaphore.LockKt;
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
 * A fair, non-reentrant mutual-exclusion lock for Java: the lock comes as a future of a {@link Permit}
 * (closing it unlocks), or from blocking calls for plain and virtual threads. It is a view of a Kotlin
 * {@link dev.semaphore.Lock}: coroutines, futures and blocked threads wait in one first-come,
 * first-served line.
 *
 * <p><b>Owners.</b> The {@code owner} variants record who holds the lock (any object, compared by
 * identity), as the Kotlin Lock does: locking again with the owner that holds it throws
 * {@link IllegalStateException} instead of deadlocking, and {@link #unlock(Object)} with another owner
 * throws. Kotlin code sees the same holder through {@code holdsLock(owner)}. The variants without an
 * owner do no such checks.
 *
 * <pre>{@code
 * AsyncLock lock = AsyncLock.create();
 * CompletableFuture<Void> saved = lock.withLock(() -> repository.saveAsync(order));
 *
 * try (Permit held = lock.lockBlocking()) {          // on a (virtual) thread
 *     balance -= amount;
 * }
 * }</pre>
 *
 * <p>Cancellation, timeouts and threads behave as in {@link AsyncSemaphore}: a request cancelled or timed
 * out leaves the line, and a lock granted in that same instant is passed to the next waiter.
 */
public final class AsyncLock {
    private static final String NAME = "AsyncLock";

    private final Lock kotlin;
    private final WaiterQueue queue;
    private final QueueFront front;

    private AsyncLock(Lock kotlin, WaiterQueue queue) {
        this.kotlin = kotlin;
        this.queue = queue;
        this.front = new QueueFront(
                queue,
                (permits, priority, owner) -> kotlin.tryLock(owner),
                (permits, owner) -> new Permit(1, n -> kotlin.unlock(owner), NAME));
    }

    /**
     * Creates an unlocked lock.
     *
     * <pre>{@code
     * AsyncLock lock = AsyncLock.create();
     * }</pre>
     *
     * @return a new lock
     */
    public static AsyncLock create() {
        return create(false);
    }

    /**
     * Creates a lock, already held (without owner) if {@code locked} is true; then {@link #unlock()} frees it.
     *
     * <pre>{@code
     * AsyncLock gate = AsyncLock.create(true);   // closed until initialization is done
     * initialize().thenRun(gate::unlock);
     * }</pre>
     *
     * @param locked whether it starts held
     * @return a new lock
     */
    public static AsyncLock create(boolean locked) {
        return of(LockKt.Lock(locked));
    }

    /**
     * Wraps a Kotlin lock so Java and Kotlin code exclude each other through one line.
     *
     * <pre>{@code
     * // Kotlin: val accountLock = Lock()
     * AsyncLock accountLock = AsyncLock.of(KotlinAccounts.getAccountLock());
     * }</pre>
     *
     * @param shared a lock made by the Kotlin factory {@code Lock()}
     * @return a Java view of {@code shared}
     * @throws NullPointerException if {@code shared} is null
     * @throws IllegalArgumentException if {@code shared} is not backed by the library's engine
     */
    public static AsyncLock of(Lock shared) {
        Objects.requireNonNull(shared, "shared must not be null");
        if (!(shared instanceof WaiterQueueOwner)) {
            throw new IllegalArgumentException("cannot share a queue with " + shared
                    + " (" + shared.getClass().getName() + "): it is not made by dev.semaphore's Lock() factory");
        }
        return new AsyncLock(shared, ((WaiterQueueOwner) shared).getWaiterQueue());
    }

    /**
     * The Kotlin lock this object is a view of.
     *
     * <pre>{@code
     * kotlinRepository.guardWith(lock.asKotlin());
     * }</pre>
     *
     * @return the shared Kotlin lock
     */
    public Lock asKotlin() {
        return kotlin;
    }

    /**
     * Requests the lock without an owner. The future completes with a {@link Permit} whose
     * {@code close()} unlocks; cancel it to withdraw the request.
     *
     * <pre>{@code
     * lock.lock().thenAccept(held -> { try (held) { update(); } });
     * }</pre>
     *
     * @return a future of the held lock
     */
    public CompletableFuture<Permit> lock() {
        return front.acquire(1, 0, null);
    }

    /**
     * Requests the lock for {@code owner}; the holder is recorded when it is granted.
     *
     * <pre>{@code
     * lock.lock(this).thenAccept(held -> { try (held) { update(); } });
     * }</pre>
     *
     * @param owner who will hold the lock
     * @return a future of the held lock
     * @throws NullPointerException if {@code owner} is null (use {@link #lock()})
     * @throws IllegalStateException if {@code owner} holds the lock already (it is not reentrant)
     */
    public CompletableFuture<Permit> lock(Object owner) {
        Objects.requireNonNull(owner, "owner must not be null");
        return front.acquire(1, 0, owner);
    }

    /**
     * Requests the lock for at most {@code timeout}; the future fails with {@link TimeoutException}
     * (nothing held) if it is not granted in time. Zero or negative only tries now.
     *
     * <pre>{@code
     * lock.lock(Duration.ofMillis(100)).thenAccept(held -> { try (held) { update(); } });
     * }</pre>
     *
     * @param timeout the longest wait
     * @return a future of the held lock
     * @throws NullPointerException if {@code timeout} is null
     */
    public CompletableFuture<Permit> lock(Duration timeout) {
        QueueFront.checkTimeout(timeout);
        return front.acquire(1, 0, null, timeout);
    }

    /**
     * Requests the lock for {@code owner} for at most {@code timeout}.
     *
     * <pre>{@code
     * lock.lock(this, Duration.ofSeconds(1)).thenAccept(held -> { try (held) { update(); } });
     * }</pre>
     *
     * @param owner who will hold the lock
     * @param timeout the longest wait; zero or negative only tries now
     * @return a future of the held lock
     * @throws NullPointerException if {@code owner} or {@code timeout} is null
     * @throws IllegalStateException if {@code owner} holds the lock already
     */
    public CompletableFuture<Permit> lock(Object owner, Duration timeout) {
        Objects.requireNonNull(owner, "owner must not be null");
        QueueFront.checkTimeout(timeout);
        return front.acquire(1, 0, owner, timeout);
    }

    /**
     * Takes the lock if it is free and nobody waits. Unlock with {@link #unlock()}.
     *
     * <pre>{@code
     * if (lock.tryLock()) { try { update(); } finally { lock.unlock(); } }
     * }</pre>
     *
     * @return true if the lock was taken
     */
    public boolean tryLock() {
        return kotlin.tryLock(null);
    }

    /**
     * Takes the lock for {@code owner} if it is free and nobody waits.
     *
     * <pre>{@code
     * if (lock.tryLock(this)) { try { update(); } finally { lock.unlock(this); } }
     * }</pre>
     *
     * @param owner who will hold the lock
     * @return true if the lock was taken
     * @throws NullPointerException if {@code owner} is null
     * @throws IllegalStateException if {@code owner} holds the lock already
     */
    public boolean tryLock(Object owner) {
        Objects.requireNonNull(owner, "owner must not be null");
        return kotlin.tryLock(owner);
    }

    /**
     * Blocks for at most {@code timeout} for the lock, like
     * {@link java.util.concurrent.locks.Lock#tryLock(long, java.util.concurrent.TimeUnit)}; unlock with
     * {@link #unlock()}. Interrupts as in {@link #lockBlocking()}.
     *
     * <pre>{@code
     * if (lock.tryLock(Duration.ofSeconds(1))) { try { update(); } finally { lock.unlock(); } }
     * }</pre>
     *
     * @param timeout the longest wait; zero or negative only tries now
     * @return true if the lock is held, false if the time ran out
     * @throws InterruptedException if interrupted (not held)
     * @throws NullPointerException if {@code timeout} is null
     */
    public boolean tryLock(Duration timeout) throws InterruptedException {
        return lockBlocking(timeout).isPresent();
    }

    /**
     * Blocks for at most {@code timeout} for the lock for {@code owner}.
     *
     * <pre>{@code
     * if (lock.tryLock(this, Duration.ofSeconds(1))) { try { update(); } finally { lock.unlock(this); } }
     * }</pre>
     *
     * @param owner who will hold the lock
     * @param timeout the longest wait; zero or negative only tries now
     * @return true if the lock is held
     * @throws InterruptedException if interrupted (not held)
     * @throws NullPointerException if {@code owner} or {@code timeout} is null
     * @throws IllegalStateException if {@code owner} holds the lock already
     */
    public boolean tryLock(Object owner, Duration timeout) throws InterruptedException {
        return lockBlocking(owner, timeout).isPresent();
    }

    /**
     * Unlocks a lock taken without owner (or by any owner); the next waiter in line gets it. Locks held
     * as a {@link Permit} are unlocked with {@link Permit#close()} instead.
     *
     * <pre>{@code
     * lock.unlock();
     * }</pre>
     *
     * @throws IllegalStateException if the lock is not held
     */
    public void unlock() {
        kotlin.unlock(null);
    }

    /**
     * Unlocks a lock held by {@code owner}.
     *
     * <pre>{@code
     * lock.unlock(this);
     * }</pre>
     *
     * @param owner the holder
     * @throws NullPointerException if {@code owner} is null
     * @throws IllegalStateException if the lock is not held, or held by someone else
     */
    public void unlock(Object owner) {
        Objects.requireNonNull(owner, "owner must not be null");
        kotlin.unlock(owner);
    }

    /**
     * Locks (without owner), runs {@code action}, and unlocks when its stage completes, whichever way, or
     * when it throws or returns null (which fail the result). See {@link AsyncSemaphore#withPermit(int, Supplier)}.
     *
     * <pre>{@code
     * CompletableFuture<Void> saved = lock.withLock(() -> repository.saveAsync(order));
     * }</pre>
     *
     * @param action starts the work and returns its stage
     * @param <T> the result type
     * @return a future of the action's result
     * @throws NullPointerException if {@code action} is null
     */
    public <T extends @Nullable Object> CompletableFuture<T> withLock(Supplier<? extends CompletionStage<T>> action) {
        QueueFront.checkAction(action);
        return QueueFront.withPermit(front.acquire(1, 0, null), action);
    }

    /**
     * Locks for {@code owner}, runs {@code action}, and unlocks when its stage completes.
     *
     * <pre>{@code
     * CompletableFuture<Void> saved = lock.withLock(this, () -> repository.saveAsync(order));
     * }</pre>
     *
     * @param owner who holds the lock while the action runs
     * @param action starts the work and returns its stage
     * @param <T> the result type
     * @return a future of the action's result
     * @throws NullPointerException if {@code owner} or {@code action} is null
     * @throws IllegalStateException if {@code owner} holds the lock already
     */
    public <T extends @Nullable Object> CompletableFuture<T> withLock(
            Object owner, Supplier<? extends CompletionStage<T>> action) {
        Objects.requireNonNull(owner, "owner must not be null");
        QueueFront.checkAction(action);
        return QueueFront.withPermit(front.acquire(1, 0, owner), action);
    }

    /**
     * Blocks until the lock is granted (without owner). Interrupts: the request leaves the line and
     * {@link InterruptedException} is thrown with the lock not held; a lock granted in the same instant
     * as the interrupt is passed on to the next waiter. Parks with LockSupport: a virtual thread frees
     * its carrier while waiting.
     *
     * <pre>{@code
     * try (Permit held = lock.lockBlocking()) {
     *     update();
     * }
     * }</pre>
     *
     * @return the held lock; close it to unlock
     * @throws InterruptedException if interrupted (not held)
     */
    public Permit lockBlocking() throws InterruptedException {
        return Objects.requireNonNull(front.acquireBlocking(1, 0, null, -1L));
    }

    /**
     * Blocks until the lock is granted to {@code owner}.
     *
     * <pre>{@code
     * try (Permit held = lock.lockBlocking(this)) { update(); }
     * }</pre>
     *
     * @param owner who will hold the lock
     * @return the held lock; close it to unlock
     * @throws InterruptedException if interrupted (not held)
     * @throws NullPointerException if {@code owner} is null
     * @throws IllegalStateException if {@code owner} holds the lock already
     */
    public Permit lockBlocking(Object owner) throws InterruptedException {
        Objects.requireNonNull(owner, "owner must not be null");
        return Objects.requireNonNull(front.acquireBlocking(1, 0, owner, -1L));
    }

    /**
     * Blocks for at most {@code timeout} for the lock: the held lock, or empty if the time ran out.
     *
     * <pre>{@code
     * Optional<Permit> held = lock.lockBlocking(Duration.ofMillis(200));
     * if (held.isPresent()) { try (Permit p = held.get()) { update(); } }
     * }</pre>
     *
     * @param timeout the longest wait; zero or negative only tries now
     * @return the held lock, or empty on timeout
     * @throws InterruptedException if interrupted (not held)
     * @throws NullPointerException if {@code timeout} is null
     */
    public Optional<Permit> lockBlocking(Duration timeout) throws InterruptedException {
        QueueFront.checkTimeout(timeout);
        long nanos = Math.max(0L, Timeouts.saturatedNanos(timeout));
        return Optional.ofNullable(front.acquireBlocking(1, 0, null, nanos));
    }

    /**
     * Blocks for at most {@code timeout} for the lock for {@code owner}.
     *
     * <pre>{@code
     * lock.lockBlocking(this, Duration.ofMillis(200)).ifPresent(p -> { try (p) { update(); } });
     * }</pre>
     *
     * @param owner who will hold the lock
     * @param timeout the longest wait; zero or negative only tries now
     * @return the held lock, or empty on timeout
     * @throws InterruptedException if interrupted (not held)
     * @throws NullPointerException if {@code owner} or {@code timeout} is null
     * @throws IllegalStateException if {@code owner} holds the lock already
     */
    public Optional<Permit> lockBlocking(Object owner, Duration timeout) throws InterruptedException {
        Objects.requireNonNull(owner, "owner must not be null");
        QueueFront.checkTimeout(timeout);
        long nanos = Math.max(0L, Timeouts.saturatedNanos(timeout));
        return Optional.ofNullable(front.acquireBlocking(1, 0, owner, nanos));
    }

    /**
     * True while the lock is held (a snapshot).
     *
     * <pre>{@code
     * assert !lock.isLocked();
     * }</pre>
     *
     * @return whether the lock is held
     */
    public boolean isLocked() {
        return kotlin.isLocked();
    }

    /**
     * True if {@code owner} holds the lock (identity).
     *
     * <pre>{@code
     * assert lock.holdsLock(this);
     * }</pre>
     *
     * @param owner the owner to test
     * @return whether {@code owner} is the holder
     * @throws NullPointerException if {@code owner} is null
     */
    public boolean holdsLock(Object owner) {
        Objects.requireNonNull(owner, "owner must not be null");
        return kotlin.holdsLock(owner);
    }

    /**
     * The number of requests waiting for the lock: futures, threads and coroutines (a snapshot).
     *
     * <pre>{@code
     * int waiting = lock.queueLength();
     * }</pre>
     *
     * @return the number of queued requests
     */
    public int queueLength() {
        return queue.getQueueLength();
    }

    /**
     * Describes the state, e.g. {@code AsyncLock(Lock(holder=nobody, queued=0))}.
     *
     * <pre>{@code
     * log.debug("{}", lock);
     * }</pre>
     */
    @Override
    public String toString() {
        return NAME + "(" + kotlin + ")";
    }
}
