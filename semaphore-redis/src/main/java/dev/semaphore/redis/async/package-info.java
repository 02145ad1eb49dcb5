/**
 * The Java front-end of {@code semaphore-redis}: {@link dev.semaphore.redis.async.AsyncRedisSemaphore}
 * and {@link dev.semaphore.redis.async.AsyncRedisLock} as {@code CompletableFuture}s, over the same
 * Kotlin {@code RedisSemaphore} and {@code RedisLock} (one line across every JVM on the server; the
 * guarantees, and what is not promised, are in the README's "Across many JVMs" and at the top of
 * {@code RedisSemaphore.kt}). The rules every method here follows:
 *
 * <h2 id="withdrawing">Withdrawing a request</h2>
 * Cancelling a pending future, or completing it yourself, withdraws the request from the line; if the
 * permits were granted in that same instant they are handed back. Nothing is held after a future that
 * did not complete with a permit. ({@code obtrudeValue} is not guarded: a lease it overwrites stays
 * held until it expires.) Cancelling a {@code withPermit} future while its action runs cancels the
 * action's stage (if it is a {@code CompletableFuture}), then releases.
 *
 * <h2 id="timeouts">Timeouts</h2>
 * A {@code Duration} timeout completes the future with {@link java.util.concurrent.TimeoutException}
 * and nothing held; a grant that raced the timeout completes it with the permit instead. Zero or
 * negative: only tries now.
 *
 * <h2 id="replicas">Replicas</h2>
 * With {@code config(...).withReplicaAcks(n, timeout)}, a future completes with a permit only once
 * {@code n} replicas acknowledged the grant; otherwise it fails with
 * {@link dev.semaphore.redis.NotReplicatedException} and the grant is handed back (see the README's
 * "Across many JVMs" for what this protects and what it does not).
 *
 * <h2 id="threads">Threads</h2>
 * Futures complete on the client's background threads ({@code Dispatchers.Default}): do not block in
 * their dependents; use the {@code *Async} methods of {@code CompletableFuture} for long work.
 *
 * <h2 id="closing">Closing a permit</h2>
 * {@link dev.semaphore.redis.async.RedisPermit#close()} releases once and blocks the calling thread
 * until the server answers (at most Lettuce's command timeout, 60 s by default, if it cannot be
 * reached); later calls do nothing, even if the first one threw. {@code release()} is the same without
 * blocking: every call returns the first call's future. A lease that expired before it was released
 * makes them throw (fail with) {@link dev.semaphore.redis.LeaseLostException}: its permits already went
 * to others. A release that failed otherwise (the server unreachable) is not retried: the permits come
 * back when the lease expires. A permit never closed stays held until its lease expires (nothing
 * renews it; {@code withPermit} does).
 *
 * <h2 id="errors">Bad input</h2>
 * A permit count below 1 or above the total throws {@code IllegalArgumentException} at the call, with
 * nothing sent; a closed handle throws {@code SemaphoreClosedException}.
 */
@NullMarked
package dev.semaphore.redis.async;

import org.jspecify.annotations.NullMarked;
