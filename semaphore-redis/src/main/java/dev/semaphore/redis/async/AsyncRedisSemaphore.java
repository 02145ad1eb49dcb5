package dev.semaphore.redis.async;

import dev.semaphore.redis.Lease;
import dev.semaphore.redis.RedisJavaBridge;
import dev.semaphore.redis.RedisSemaphore;
import dev.semaphore.redis.RedisSemaphoreClient;
import dev.semaphore.redis.RedisSemaphoreConfig;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A {@link RedisSemaphore} for Java callers: the same fair line across every JVM on the server, with
 * futures. The rules (withdrawing, timeouts, threads, closing, bad input) are in the
 * <a href="package-summary.html">package documentation</a>.
 */
public final class AsyncRedisSemaphore {
    private final RedisSemaphore kotlin;

    private AsyncRedisSemaphore(RedisSemaphore kotlin) {
        this.kotlin = kotlin;
    }

    /** A handle on the semaphore {@code name} of {@code permits} permits, with the default timings. */
    public static AsyncRedisSemaphore create(RedisSemaphoreClient client, String name, int permits) {
        return new AsyncRedisSemaphore(client.semaphore(name, permits, new RedisSemaphoreConfig()));
    }

    /** The same with {@code config}'s lease and heartbeat timings. */
    public static AsyncRedisSemaphore create(RedisSemaphoreClient client, String name, int permits, RedisSemaphoreConfig config) {
        return new AsyncRedisSemaphore(client.semaphore(name, permits, config));
    }

    /**
     * Timings for {@link #create(RedisSemaphoreClient, String, int, RedisSemaphoreConfig)} and
     * {@link AsyncRedisLock}, as {@link RedisSemaphoreConfig} describes them.
     *
     * @param renewInterval null: the default for {@code leaseTime}
     * @param heartbeatInterval null: the default for {@code waiterTimeToLive}
     */
    public static RedisSemaphoreConfig config(
        Duration leaseTime, @Nullable Duration renewInterval, Duration waiterTimeToLive, @Nullable Duration heartbeatInterval) {
        return RedisJavaBridge.redisSemaphoreConfig(leaseTime, renewInterval, waiterTimeToLive, heartbeatInterval);
    }

    /** Shares {@code semaphore} (a Kotlin handle) with Java callers. */
    public static AsyncRedisSemaphore of(RedisSemaphore semaphore) {
        return new AsyncRedisSemaphore(semaphore);
    }

    /** Waits in line for one permit. */
    public CompletableFuture<RedisPermit> acquire() {
        return acquire(1);
    }

    /** Waits in line for {@code permits} permits, granted together. */
    public CompletableFuture<RedisPermit> acquire(int permits) {
        return RedisJavaBridge.acquireAsync(kotlin, permits, null, lease -> new RedisPermit(kotlin, lease));
    }

    /** Waits at most {@code timeout}; see <a href="package-summary.html#timeouts">timeouts</a>. */
    public CompletableFuture<RedisPermit> acquire(int permits, Duration timeout) {
        return RedisJavaBridge.acquireAsync(kotlin, permits, timeout, lease -> new RedisPermit(kotlin, lease));
    }

    /** Takes {@code permits} permits now if nobody is queued and they are free; empty otherwise. */
    public CompletableFuture<Optional<RedisPermit>> tryAcquire(int permits) {
        return RedisJavaBridge.tryAcquireAsync(kotlin, permits, Optional.empty(), lease -> Optional.of(new RedisPermit(kotlin, lease)));
    }

    /** {@link #withPermit(int, Function)} with one permit. */
    public <T> CompletableFuture<T> withPermit(Function<Lease, ? extends CompletionStage<T>> action) {
        return withPermit(1, action);
    }

    /**
     * Holds {@code permits} permits, renewing their lease, until the stage {@code action} returns
     * completes, then releases them; completes as that stage did, or with {@code LeaseLostException}.
     */
    public <T> CompletableFuture<T> withPermit(int permits, Function<Lease, ? extends CompletionStage<T>> action) {
        return RedisJavaBridge.withPermitAsync(kotlin, permits, action::apply);
    }

    /** @return the permits free now */
    public CompletableFuture<Integer> availablePermits() {
        return RedisJavaBridge.availablePermitsAsync(kotlin);
    }

    /** @return the requests waiting in line now, from every JVM */
    public CompletableFuture<Integer> queueLength() {
        return RedisJavaBridge.queueLengthAsync(kotlin);
    }

    /** Closes this handle: its pending futures fail and leave the line; permits stay valid. */
    public void close() {
        kotlin.close();
    }

    /** @return the Kotlin handle this wraps */
    public RedisSemaphore asKotlin() {
        return kotlin;
    }

    @Override
    public String toString() {
        return "Async" + kotlin;
    }
}
