/*
 * Waiting for permits without a coroutine, on the JVM: as a CompletableFuture, or by parking the
 * calling thread. These are the building blocks of the Java API (module semaphore-java-api, which adds
 * Permit, java.time.Duration overloads and withPermit over CompletionStage); Kotlin code on the JVM
 * may use them too. Futures and threads stand in the same line as the coroutines of the same
 * primitive and follow the same waiter protocol (internal/WaiterQueue.kt, W1..W4).
 */
@file:JvmName("JavaBridge")

package dev.semaphore

import dev.semaphore.internal.GrantFuture
import dev.semaphore.internal.acquireBlocking
import dev.semaphore.internal.notEngineBacked
import dev.semaphore.internal.requestFuture
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import kotlin.time.toKotlinDuration

/**
 * Requests [permits] permits as a future, waiting at most [timeout] (`Long.MAX_VALUE`: no limit).
 *
 * When the permits are granted (at once if they are free and nobody waits), [onGrant] is called with
 * [permits] and the future completes with its result: the caller's handle on the permits (it must not
 * throw). The rules of these futures:
 * - **Withdrawing.** Completing the future yourself (`cancel`, `complete`, `completeExceptionally`)
 *   withdraws the request; permits granted in that same instant are released, never lost. So a
 *   `cancel` that returns true means nothing is held, and one that returns false means the future
 *   holds the handle. The future refuses `obtrudeValue` and `obtrudeException`.
 * - **Timeout.** If the permits are not granted within [timeout], the future fails with
 *   `TimeoutException` (through `CompletableFuture.orTimeout`) and the request is withdrawn the same
 *   way. Zero or negative only tries now.
 * - **Threads.** A queued request's future completes on the thread that frees the permits (in a
 *   `release`, a cancellation...) or on the JDK's timeout thread, so its non-async dependents run
 *   there: keep them short and never block in them. Chains of dependents that release again are
 *   stack-safe (the engine's trampoline).
 * - A closed semaphore gives a future failed with [SemaphoreClosedException].
 * @throws IllegalArgumentException if [permits] < 1 or more than the total, or this semaphore was not
 *     made by the library's factories; nothing is queued.
 */
public fun <T> Semaphore.acquireAsync(permits: Int, timeout: Long, unit: TimeUnit, onGrant: (Int) -> T): CompletableFuture<T> {
    val pool = this as? QueueBackedPool ?: throw notEngineBacked(this)
    val queue = pool.waiterQueue
    return future(timeout, unit, { queue.tryAcquire(permits) }, { onGrant(permits) }) {
        queue.requestFuture(permits, 0, pool, onGrant, permits)
    }
}

/** [Semaphore.acquireAsync] for a request of [priority]. */
public fun <T> PrioritySemaphore.acquireAsync(
    priority: Int,
    permits: Int,
    timeout: Long,
    unit: TimeUnit,
    onGrant: (Int) -> T,
): CompletableFuture<T> {
    val pool = this as? QueueBackedPool ?: throw notEngineBacked(this)
    val queue = pool.waiterQueue
    return future(timeout, unit, { queue.tryAcquire(permits, priority) }, { onGrant(permits) }) {
        queue.requestFuture(permits, priority, pool, onGrant, permits)
    }
}

/**
 * Requests the lock for [owner] (null: none) as a future of `onGrant(hold)`, where the [LockHold] is
 * this acquisition's own identity: its `unlock` ends exactly this hold. Otherwise as
 * [Semaphore.acquireAsync].
 * @throws IllegalStateException if [owner] is not null and already holds the lock (it is not reentrant).
 */
public fun <T> Lock.lockAsync(owner: Any?, timeout: Long, unit: TimeUnit, onGrant: (LockHold) -> T): CompletableFuture<T> {
    val lock = this as? LockImpl ?: throw notEngineBacked(this)
    val hold = lock.Hold(owner)
    return future(timeout, unit, { lock.tryTake(owner, hold) }, { onGrant(hold) }) {
        lock.waiterQueue.requestFuture(1, 0, hold, onGrant, hold)
    }
}

/**
 * Blocks the calling thread until [permits] permits are granted (true) or [timeout] passes (false,
 * nothing held; `Long.MAX_VALUE`: no limit; zero or negative only tries now). It waits in the same
 * line as futures and coroutines and parks with `LockSupport`, so a virtual thread frees its carrier.
 *
 * **Interrupts**: an interrupt, before or during the wait, withdraws the request and throws
 * `InterruptedException` with nothing held (permits granted in that same instant are released), and
 * the interrupt status is cleared, as usual.
 * @throws IllegalArgumentException if [permits] < 1 or more than the total (nothing is queued).
 * @throws SemaphoreClosedException if the semaphore is or becomes closed.
 */
@Throws(InterruptedException::class)
public fun Semaphore.acquireBlocking(permits: Int, timeout: Long, unit: TimeUnit): Boolean {
    val pool = this as? QueueBackedPool ?: throw notEngineBacked(this)
    val queue = pool.waiterQueue
    return block(timeout, unit, { queue.tryAcquire(permits) }) { queue.acquireBlocking(permits, 0, pool, it) }
}

/** [Semaphore.acquireBlocking] for a request of [priority]. */
@Throws(InterruptedException::class)
public fun PrioritySemaphore.acquireBlocking(priority: Int, permits: Int, timeout: Long, unit: TimeUnit): Boolean {
    val pool = this as? QueueBackedPool ?: throw notEngineBacked(this)
    val queue = pool.waiterQueue
    return block(timeout, unit, { queue.tryAcquire(permits, priority) }) { queue.acquireBlocking(permits, priority, pool, it) }
}

/**
 * Blocks until the lock is granted to [owner] (null: none) and returns its [LockHold], or null if
 * [timeout] passed. Otherwise as [Semaphore.acquireBlocking].
 * @throws IllegalStateException if [owner] is not null and already holds the lock.
 */
@Throws(InterruptedException::class)
public fun Lock.lockBlocking(owner: Any?, timeout: Long, unit: TimeUnit): LockHold? {
    val lock = this as? LockImpl ?: throw notEngineBacked(this)
    val hold = lock.Hold(owner)
    val held = block(timeout, unit, { lock.tryTake(owner, hold) }) { lock.waiterQueue.acquireBlocking(1, 0, hold, it) }
    return if (held) hold else null
}

/**
 * Creates a [PrioritySemaphore] whose waiters age by one priority step per [aging] waited (null: no
 * aging), on the monotonic clock: the Kotlin factory takes a `kotlin.time.Duration`, which Java cannot pass.
 * @throws IllegalArgumentException if [permits] < 0 or [aging] is not positive.
 */
public fun PrioritySemaphore(permits: Int, aging: java.time.Duration?): PrioritySemaphore =
    PrioritySemaphore(permits, aging?.toKotlinDuration())

private inline fun <T> future(
    timeout: Long,
    unit: TimeUnit,
    tryNow: () -> Boolean,
    grantNow: () -> T,
    queue: () -> GrantFuture<T>,
): CompletableFuture<T> {
    val nanos = unit.toNanos(timeout)
    return try {
        when {
            tryNow() -> GrantFuture<T>().also { it.deliver(grantNow()) }
            nanos <= 0 -> GrantFuture<T>().also { it.fail(TimeoutException("not granted at once, and the timeout was $timeout $unit")) }
            nanos == Long.MAX_VALUE -> queue()
            else -> queue().orTimeout(nanos, TimeUnit.NANOSECONDS)
        }
    } catch (e: SemaphoreClosedException) {
        GrantFuture<T>().also { it.fail(e) }
    }
}

private inline fun block(timeout: Long, unit: TimeUnit, tryNow: () -> Boolean, wait: (Long) -> Boolean): Boolean {
    if (Thread.interrupted()) throw InterruptedException("interrupted before waiting for permits")
    if (tryNow()) return true
    val nanos = unit.toNanos(timeout)
    return nanos > 0 && wait(nanos)
}
