package dev.semaphore.distributed.async;

import dev.semaphore.distributed.Lease;
import dev.semaphore.distributed.DistributedJavaBridge;
import dev.semaphore.distributed.DistributedLock;
import dev.semaphore.distributed.LockInspection;
import dev.semaphore.distributed.DistributedSemaphoreClient;
import dev.semaphore.distributed.DistributedConfig;
import dev.semaphore.distributed.DistributedSemaphoreKt;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A {@link DistributedLock} for Java callers: a first-in-first-out lock across every JVM on the server, whose
 * {@link DistributedPermit} is the owner (not reentrant: locking again while holding waits for yourself).
 * The same families as {@link AsyncDistributedSemaphore}, named for a lock: {@code lock} (futures),
 * {@code lockBlocking}, {@code tryLock}, {@code withLock}. The rules are in the
 * <a href="package-summary.html">package documentation</a>.
 */
public final class AsyncDistributedLock {
    private final DistributedLock kotlin;
    private final AsyncDistributedSemaphore line;

    private AsyncDistributedLock(DistributedLock kotlin) {
        this.kotlin = kotlin;
        this.line = AsyncDistributedSemaphore.of(DistributedSemaphoreKt.asSemaphore(kotlin));
    }

    /**
     * A handle on the lock {@code name}, with the default timings.
     *
     * @param client the connections to the server
     * @param name the lock's name on the server (the same line as a semaphore of 1 permit of that name)
     * @return the handle
     */
    public static AsyncDistributedLock create(DistributedSemaphoreClient client, String name) {
        return new AsyncDistributedLock(client.lock(name, new DistributedConfig()));
    }

    /**
     * The same with {@code config}'s timings.
     *
     * @param client the connections to the server
     * @param name the lock's name on the server
     * @param config the lease and heartbeat timings, and the replicas to wait for
     * @return the handle
     */
    public static AsyncDistributedLock create(DistributedSemaphoreClient client, String name, DistributedConfig config) {
        return new AsyncDistributedLock(client.lock(name, config));
    }

    /**
     * Shares {@code lock} (a Kotlin handle) with Java callers.
     *
     * @param lock a handle from {@link DistributedSemaphoreClient#lock}
     * @return a Java view of it
     */
    public static AsyncDistributedLock of(DistributedLock lock) {
        return new AsyncDistributedLock(Objects.requireNonNull(lock, "lock"));
    }

    /** @return the Kotlin handle this wraps */
    public DistributedLock asKotlin() {
        return kotlin;
    }

    /** @return a future of the lock (closing the permit unlocks); see {@link AsyncDistributedSemaphore#acquire(int)} */
    public CompletableFuture<DistributedPermit> lock() {
        return line.acquire(1);
    }

    /**
     * @param timeout the longest wait; zero or negative: only tries now
     * @return a future of the lock, failed with {@link java.util.concurrent.TimeoutException} if the time
     *     ran out; see {@link AsyncDistributedSemaphore#acquire(int, Duration)}
     */
    public CompletableFuture<DistributedPermit> lock(Duration timeout) {
        return line.acquire(1, timeout);
    }

    /**
     * @return the lock, to be closed; see {@link AsyncDistributedSemaphore#acquireBlocking(int)}
     * @throws InterruptedException if interrupted: the request was withdrawn, nothing is held
     */
    public DistributedPermit lockBlocking() throws InterruptedException {
        return line.acquireBlocking(1);
    }

    /**
     * @param timeout the longest wait; zero or negative: only tries now
     * @return the lock, or empty if the time ran out; see {@link AsyncDistributedSemaphore#acquireBlocking(int, Duration)}
     * @throws InterruptedException if interrupted: the request was withdrawn, nothing is held
     */
    public Optional<DistributedPermit> lockBlocking(Duration timeout) throws InterruptedException {
        return line.acquireBlocking(1, timeout);
    }

    /**
     * @return the lock if it was free and nobody was queued (one round trip, never queued), or empty;
     *     see {@link AsyncDistributedSemaphore#tryAcquire(int)}
     */
    public Optional<DistributedPermit> tryLock() {
        return line.tryAcquire(1);
    }

    /**
     * Holds the lock until the stage {@code action} returns completes; see
     * {@link AsyncDistributedSemaphore#withPermit(int, Function)}.
     *
     * @param action starts the work with the lease and returns its stage
     * @param <T> the result type
     * @return a future of the action's result
     */
    public <T> CompletableFuture<T> withLock(Function<Lease, ? extends CompletionStage<T>> action) {
        return line.withPermit(1, action);
    }

    /** @return a future of true if someone, in any JVM, holds the lock now */
    public CompletableFuture<Boolean> isLocked() {
        return line.availablePermits().thenApply(free -> free <= 0);
    }

    /**
     * Removes the lock from the server if nobody holds or waits on it; see
     * {@link AsyncDistributedSemaphore#delete()}.
     *
     * @return a future that completes once it was removed, or fails with {@code IllegalStateException}
     */
    public CompletableFuture<@Nullable Void> delete() {
        return line.delete();
    }

    /** @return a future of the number of requests waiting in line now, from every JVM */
    public CompletableFuture<Integer> queueLength() {
        return line.queueLength();
    }

    /**
     * Who holds this lock and who waits for it, from every JVM (at most 100 of the line); see
     * {@link #inspect(int)}.
     *
     * @return a future of the inspection
     */
    public CompletableFuture<LockInspection> inspect() {
        return inspect(100);
    }

    /**
     * Who holds this lock (client id and name, fencing token, {@code remaining()} time, and the owner
     * if this JVM holds it for one) and at most {@code limit} requests of its line, with the true
     * count: one read-only call; see {@link AsyncDistributedSemaphore#inspect(int)}.
     *
     * @param limit the most requests of the line listed, 0 to 1000 (checked at once)
     * @return a future of the inspection
     */
    public CompletableFuture<LockInspection> inspect(int limit) {
        return DistributedJavaBridge.inspectAsync(kotlin, limit);
    }

    /** Closes this handle: its pending requests fail and leave the line; a held lock stays held. */
    public void close() {
        kotlin.close();
    }

    @Override
    public String toString() {
        return "Async" + kotlin;
    }
}
