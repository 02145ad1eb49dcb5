package dev.semaphore.redis.async;

import dev.semaphore.redis.Lease;
import dev.semaphore.redis.RedisJavaBridge;
import dev.semaphore.redis.RedisLock;
import dev.semaphore.redis.RedisSemaphoreClient;
import dev.semaphore.redis.RedisSemaphoreConfig;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * A {@link RedisLock} for Java callers: a first-in-first-out lock across every JVM on the server, whose
 * {@link RedisPermit} is the owner (not reentrant). The rules are in the
 * <a href="package-summary.html">package documentation</a>.
 */
public final class AsyncRedisLock {
    private final RedisLock kotlin;
    private final AsyncRedisSemaphore line;

    private AsyncRedisLock(RedisLock kotlin) {
        this.kotlin = kotlin;
        this.line = AsyncRedisSemaphore.of(RedisJavaBridge.asSemaphore(kotlin));
    }

    /** A handle on the lock {@code name}, with the default timings. */
    public static AsyncRedisLock create(RedisSemaphoreClient client, String name) {
        return new AsyncRedisLock(client.lock(name, new RedisSemaphoreConfig()));
    }

    /** The same with {@code config}'s lease and heartbeat timings. */
    public static AsyncRedisLock create(RedisSemaphoreClient client, String name, RedisSemaphoreConfig config) {
        return new AsyncRedisLock(client.lock(name, config));
    }

    /** Waits in line for the lock; closing the permit unlocks. */
    public CompletableFuture<RedisPermit> lock() {
        return line.acquire(1);
    }

    /** Waits at most {@code timeout}; see <a href="package-summary.html#timeouts">timeouts</a>. */
    public CompletableFuture<RedisPermit> lock(Duration timeout) {
        return line.acquire(1, timeout);
    }

    /** Takes the lock now if it is free and nobody is queued; empty otherwise. */
    public CompletableFuture<Optional<RedisPermit>> tryLock() {
        return line.tryAcquire(1);
    }

    /** Holds the lock until the stage {@code action} returns completes; see {@link AsyncRedisSemaphore#withPermit}. */
    public <T> CompletableFuture<T> withLock(Function<Lease, ? extends CompletionStage<T>> action) {
        return line.withPermit(1, action);
    }

    /** @return true if someone, in any JVM, holds the lock now */
    public CompletableFuture<Boolean> isLocked() {
        return line.availablePermits().thenApply(free -> free == 0);
    }

    /** @return the requests waiting in line now, from every JVM */
    public CompletableFuture<Integer> queueLength() {
        return line.queueLength();
    }

    /** Closes this handle: its pending futures fail and leave the line; a held lock stays held. */
    public void close() {
        kotlin.close();
    }

    /** @return the Kotlin handle this wraps */
    public RedisLock asKotlin() {
        return kotlin;
    }

    @Override
    public String toString() {
        return "Async" + kotlin;
    }
}
