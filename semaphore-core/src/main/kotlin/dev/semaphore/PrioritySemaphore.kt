package dev.semaphore

import kotlin.coroutines.coroutineContext
import dev.semaphore.internal.WaiterQueue
import dev.semaphore.internal.acquireSuspending
import dev.semaphore.internal.acquireWithin
import kotlin.contracts.ExperimentalContracts
import kotlin.contracts.InvocationKind
import kotlin.contracts.contract
import kotlin.time.Duration
import kotlin.time.TimeSource

/**
 * A suspending semaphore that serves waiters by priority: a higher number first, first come first
 * served among equal priorities. Any `Int` is a valid priority. Everything else is as in
 * [Semaphore]: permits granted whole, head-of-line blocking (the waiter served next blocks the rest
 * until its request fits), cancellation and timeouts that never lose a permit, resizing and close.
 *
 * **Aging** (optional): with `aging = d`, a waiter's effective priority grows with the time it has
 * waited, by exactly one for each `d` (continuously in between): a waiter of priority 0 that has
 * waited `3 * d` ranks like a newcomer of priority 3 and, having waited longer, goes before it.
 * So low-priority work cannot starve forever. The clock is [TimeSource] passed at creation
 * (`testTimeSource` of `runTest` for virtual time).
 *
 * Cost: choosing the next waiter is O(1) and queueing or removing one is O(log L) for L distinct
 * priorities with waiters, whatever the number of waiters.
 *
 * ```kotlin
 * val pool = PrioritySemaphore(permits = 2)
 * launch { pool.withPermit(priority = 10) { serveInteractive() } }
 * launch { pool.withPermit(priority = 0) { runBatch() } }
 * ```
 */
public interface PrioritySemaphore : PermitPool {
    /**
     * Suspends until [permits] permits are granted to this request of [priority]. Cancellable; see
     * [Semaphore.acquire]. As on [Semaphore], a positional `Int` is the permit count; name the
     * priority: `acquire(priority = 10)`, `acquire(2, priority = 10)`.
     * @throws IllegalArgumentException if [permits] < 1 or more than the total.
     * @throws SemaphoreClosedException if closed, before or while waiting.
     * @throws IllegalStateException if, while it waits, [reducePermits] makes the total smaller than [permits]
     *   (it fails when it reaches the head of the line, with nothing held).
     */
    public suspend fun acquire(permits: Int = 1, priority: Int = 0)

    /**
     * Takes [permits] permits now if they are free and this request would be first in line (no
     * queued waiter ranks at or above [priority]); false otherwise, with nothing held.
     * @throws IllegalArgumentException if [permits] < 1 or more than the total.
     * @throws SemaphoreClosedException if closed.
     */
    public fun tryAcquire(permits: Int = 1, priority: Int = 0): Boolean

    /**
     * Waits at most [timeout] (coroutine time) for [permits] permits at [priority]: true with them held,
     * false with nothing held. Zero or negative only tries now. See [Semaphore.tryAcquire]; the timeout
     * comes first: `tryAcquire(5.seconds, permits = 2, priority = 10)`.
     */
    public suspend fun tryAcquire(timeout: Duration, permits: Int = 1, priority: Int = 0): Boolean

    /** The number of waiters queued with base priority [priority] (a snapshot). */
    public fun queueLength(priority: Int): Int
}

/**
 * Creates a [PrioritySemaphore] with [permits] permits. With a non-null [aging], waiting raises a
 * request's effective priority by one per [aging] interval, measured on [timeSource].
 * @throws IllegalArgumentException if [permits] < 0 or [aging] is not positive and finite.
 */
public fun PrioritySemaphore(
    permits: Int,
    aging: Duration? = null,
    timeSource: TimeSource = TimeSource.Monotonic,
    diagnostics: Diagnostics = Diagnostics.NONE,
): PrioritySemaphore = PrioritySemaphoreImpl(permits, aging, timeSource, diagnostics)

/**
 * Acquires [permits] permits at [priority], runs [action] and releases them however it ends. A
 * positional `Int` is the permit count, as on [Semaphore]; name the priority.
 *
 * ```kotlin
 * pool.withPermit(priority = 5) { handleRequest() }
 * pool.withPermit(2, priority = 5) { handleBatch() }
 * ```
 */
@OptIn(ExperimentalContracts::class)
public suspend inline fun <T> PrioritySemaphore.withPermit(permits: Int = 1, priority: Int = 0, action: () -> T): T {
    contract { callsInPlace(action, InvocationKind.EXACTLY_ONCE) }
    acquire(permits, priority)
    try {
        return action()
    } finally {
        releaseFromScope(this, permits, coroutineContext)
    }
}

internal class PrioritySemaphoreImpl(
    permits: Int,
    aging: Duration?,
    timeSource: TimeSource,
    diagnostics: Diagnostics = Diagnostics.NONE,
) : QueueBackedPool(permits, WaiterQueue.priorityOrder(aging), timeSource, diagnostics), PrioritySemaphore {
    override val kind: String get() = "PrioritySemaphore"

    override suspend fun acquire(permits: Int, priority: Int) {
        if (!tryAcquirePermits(permits, priority, waitsIfRefused = true)) acquireSuspending(permits, priority, this)
    }

    override fun tryAcquire(permits: Int, priority: Int): Boolean = tryAcquirePermits(permits, priority) || refused(permits)

    override suspend fun tryAcquire(timeout: Duration, permits: Int, priority: Int): Boolean =
        if (timeout.isPositive()) { // a try granted at once names its coroutine (Observer.kt, H1), as in Semaphore
            tryAcquirePermits(permits, priority, waitsIfRefused = true) || acquireWithin(permits, priority, this, timeout) { release(permits) }
        } else {
            tryAcquirePermits(permits, priority, false, null, coroutineContext) || refused(permits)
        }

    override fun toString(): String = "PrioritySemaphore(${super.toString()})"
}
