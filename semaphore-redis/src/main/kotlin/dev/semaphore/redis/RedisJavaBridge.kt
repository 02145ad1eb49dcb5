/*
 * The Java-callable forms of RedisSemaphore and RedisLock, for the Java front-end
 * (dev.semaphore.redis.async, whose package documentation states the rules for callers): futures over
 * the same suspending calls. A returned future runs its coroutine on the client's background scope;
 * cancelling or completing the future cancels that coroutine, which withdraws the request and hands
 * back a grant that raced it (R8 in RedisSemaphore.kt); a lease obtained after the future was completed
 * is released, so nothing is held unless the future completed with it.
 */
@file:JvmName("RedisJavaBridge")

package dev.semaphore.redis

import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.future.await
import kotlinx.coroutines.future.future
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionStage
import java.util.concurrent.TimeoutException
import kotlin.time.toJavaDuration
import kotlin.time.toKotlinDuration

/**
 * Requests [permits] permits as a future of `onGrant(lease)` (it must not throw): waits without limit
 * (null [timeout]), at most [timeout] (then fails with `TimeoutException`, nothing held), or, for a
 * zero or negative [timeout], only tries now.
 * @throws IllegalArgumentException at once if [permits] < 1 or more than the total; nothing is sent.
 * @throws dev.semaphore.SemaphoreClosedException at once if the handle is closed.
 */
public fun <T> RedisSemaphore.acquireAsync(permits: Int, timeout: java.time.Duration?, onGrant: (Lease) -> T): CompletableFuture<T> =
    leaseFuture(permits, { lease -> onGrant(lease!!) }) {
        if (timeout == null) {
            acquire(permits)
        } else {
            tryAcquire(permits, timeout.toKotlinDuration())
                ?: throw TimeoutException("$permits permits of $name were not granted within $timeout")
        }
    }

/** [RedisSemaphore.tryAcquire] now, as a future of `onGrant(lease)`, or of [none] if not granted; as [acquireAsync]. */
public fun <T> RedisSemaphore.tryAcquireAsync(permits: Int, none: T, onGrant: (Lease) -> T): CompletableFuture<T> =
    leaseFuture(permits, { lease -> if (lease == null) none else onGrant(lease) }) { tryAcquire(permits) }

/** Runs [take] on the client's scope; the future completes with `wrap(lease)`, or a lease it could not take is released. */
private fun <R> RedisSemaphore.leaseFuture(permits: Int, wrap: (Lease?) -> R, take: suspend () -> Lease?): CompletableFuture<R> {
    val handle = handle()
    handle.checkRequest(permits)
    val result = CompletableFuture<R>()
    val job = handle.client.background.launch {
        try {
            val lease = take()
            if (!result.complete(wrap(lease)) && lease != null) { // cancelled or completed meanwhile: hand it back
                withContext(NonCancellable) { runCatching { release(lease) } }
            }
        } catch (e: Throwable) {
            result.completeExceptionally(e)
        }
    }
    job.invokeOnCompletion { cause -> if (cause != null) result.completeExceptionally(cause) } // never ran: client closed
    result.whenComplete { _, _ -> job.cancel() }
    return result
}

/** [RedisSemaphore.release] as a future (completed with null). */
public fun RedisSemaphore.releaseAsync(lease: Lease): CompletableFuture<Void?> =
    handle().client.background.future { release(lease); null }

/** [RedisSemaphore.renew] as a future (completed with null). */
public fun RedisSemaphore.renewAsync(lease: Lease): CompletableFuture<Void?> =
    handle().client.background.future { renew(lease); null }

/** [RedisSemaphore.availablePermits] as a future. */
public fun RedisSemaphore.availablePermitsAsync(): CompletableFuture<Int> = handle().client.background.future { availablePermits() }

/** [RedisSemaphore.queueLength] as a future. */
public fun RedisSemaphore.queueLengthAsync(): CompletableFuture<Int> = handle().client.background.future { queueLength() }

/**
 * [withPermit] with a stage: holds [permits] permits (renewing the lease) until the stage that
 * [action] returns completes, however it completes, then releases them. Completes as that stage did,
 * or with [LeaseLostException] if the lease was lost meanwhile. Bad input throws as in [acquireAsync].
 */
public fun <T> RedisSemaphore.withPermitAsync(permits: Int, action: (Lease) -> CompletionStage<T>): CompletableFuture<T> {
    val handle = handle()
    handle.checkRequest(permits)
    return handle.client.background.future { withPermit(permits) { lease -> action(lease).await() } }
}

/** [Lease.remaining] as a `java.time.Duration`. */
public fun Lease.remainingDuration(): java.time.Duration = remaining.toJavaDuration()

/**
 * A [RedisSemaphoreConfig] from `java.time` durations (Java cannot call its constructor, whose
 * parameters are Kotlin durations); a null interval takes its default.
 */
public fun redisSemaphoreConfig(
    leaseTime: java.time.Duration,
    renewInterval: java.time.Duration?,
    waiterTimeToLive: java.time.Duration,
    heartbeatInterval: java.time.Duration?,
): RedisSemaphoreConfig {
    val lease = leaseTime.toKotlinDuration()
    val ttl = waiterTimeToLive.toKotlinDuration()
    val defaults = RedisSemaphoreConfig(leaseTime = lease, waiterTimeToLive = ttl)
    return RedisSemaphoreConfig(
        leaseTime = lease,
        renewInterval = renewInterval?.toKotlinDuration() ?: defaults.renewInterval,
        waiterTimeToLive = ttl,
        heartbeatInterval = heartbeatInterval?.toKotlinDuration() ?: defaults.heartbeatInterval,
    )
}

/** The semaphore of one permit that this lock is (the same line, under the same name). */
public fun RedisLock.asSemaphore(): RedisSemaphore =
    (this as? RedisLockHandle ?: throw IllegalArgumentException("not a RedisLock of this library: $this")).semaphore
