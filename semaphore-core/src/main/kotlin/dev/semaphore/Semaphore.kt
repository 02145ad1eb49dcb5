package dev.semaphore

import kotlin.coroutines.coroutineContext
import dev.semaphore.internal.FifoOrder
import dev.semaphore.internal.acquireSuspending
import dev.semaphore.internal.acquireWithin
import kotlin.contracts.ExperimentalContracts
import kotlin.contracts.InvocationKind
import kotlin.contracts.contract
import kotlin.jvm.JvmOverloads
import kotlin.time.Duration

/**
 * A fair, suspending counting semaphore for coroutines.
 *
 * - **Fair**: waiters are served strictly first come, first served, and while anyone waits no
 *   newcomer (not even [tryAcquire]) can take the permits.
 * - **Multi-permit, granted whole**: a request for `n` permits is granted all at once when it is
 *   first in line and `n` permits are free. Until then it blocks the requests behind it, even
 *   smaller ones that would fit (head-of-line blocking), so large requests are never starved.
 * - **Cancellation-safe**: a coroutine cancelled while waiting leaves the line at once (and the
 *   waiters behind it are granted if they now fit); one cancelled just as it was granted hands the
 *   permits on. No permit is ever lost or counted twice, timeouts included.
 *
 * ```kotlin
 * val semaphore = Semaphore(4)
 * coroutineScope {
 *     repeat(100) { i -> launch { semaphore.withPermit { fetch(i) } } } // at most 4 fetches at once
 * }
 * ```
 *
 * Create one with the [Semaphore] factory function.
 */
public interface Semaphore : PermitPool {
    /**
     * Suspends until [permits] permits are granted. Cancellable: if the coroutine is cancelled while
     * waiting, nothing is held when the `CancellationException` is thrown. A call that need not wait
     * does not check for cancellation (as kotlinx's `Semaphore.acquire`): a coroutine already cancelled
     * still takes permits that are free when it asks, and throws at once, never standing in line, when
     * it would have to wait.
     * @throws IllegalArgumentException if [permits] < 1, or more than this semaphore's total (it could never be granted).
     * @throws SemaphoreClosedException if the semaphore is or becomes closed while waiting.
     * @throws IllegalStateException if, while it waits, [reducePermits] makes the total smaller than [permits]
     *   (it fails when it reaches the head of the line, with nothing held).
     */
    public suspend fun acquire(permits: Int = 1)

    /**
     * Takes [permits] permits if they are free now and nobody is waiting; returns false otherwise,
     * with nothing held.
     * @throws IllegalArgumentException if [permits] < 1 or more than the total.
     * @throws SemaphoreClosedException if the semaphore is closed.
     */
    public fun tryAcquire(permits: Int = 1): Boolean

    /**
     * Waits at most [timeout] (coroutine time: virtual under `runTest`) for [permits] permits. Returns
     * true with the permits held, or false with nothing held; a grant that races the timeout is never
     * lost. A zero or negative [timeout] only tries now; `Duration.INFINITE` waits without limit.
     *
     * The timeout comes first in every timed call of the library (`tryAcquire(5.seconds)`,
     * `tryAcquire(5.seconds, permits = 2)`), so a positional `Int` is never taken for a time.
     * @throws IllegalArgumentException if [permits] < 1 or more than the total.
     * @throws SemaphoreClosedException if the semaphore is or becomes closed while waiting.
     */
    public suspend fun tryAcquire(timeout: Duration, permits: Int = 1): Boolean
}

/**
 * Creates a fair [Semaphore] with [permits] permits in total.
 *
 * The total is the most that can ever be held at once, so a request for more than the total fails
 * at once, and releasing more than is held fails too (over-release). 0 is allowed: such a semaphore
 * refuses every request as impossible until [Semaphore.addPermits] gives it permits (to use it as a
 * signal, start with `Semaphore(1)` and `acquire()` the permit first).
 * @throws IllegalArgumentException if [permits] < 0.
 */
@JvmOverloads
public fun Semaphore(permits: Int, diagnostics: Diagnostics = Diagnostics.NONE): Semaphore =
    SemaphoreImpl(permits, diagnostics)

/**
 * Acquires [permits] permits, runs [action] and releases them, however [action] ends (returns,
 * throws or is cancelled).
 *
 * ```kotlin
 * val body = semaphore.withPermit { httpClient.get(url) }
 * ```
 */
@OptIn(ExperimentalContracts::class)
public suspend inline fun <T> Semaphore.withPermit(permits: Int = 1, action: () -> T): T {
    contract { callsInPlace(action, InvocationKind.EXACTLY_ONCE) }
    acquire(permits)
    try {
        return action()
    } finally {
        releaseFromScope(this, permits, coroutineContext)
    }
}

internal class SemaphoreImpl(permits: Int, diagnostics: Diagnostics = Diagnostics.NONE) :
    QueueBackedPool(permits, FifoOrder(), null, diagnostics), Semaphore {
    override val kind: String get() = "Semaphore"

    override suspend fun acquire(permits: Int) {
        if (!tryAcquirePermits(permits, 0, waitsIfRefused = true)) acquireSuspending(permits, 0, this)
    }

    override fun tryAcquire(permits: Int): Boolean = tryAcquirePermits(permits) || refused(permits)

    // A try granted at once names its coroutine (Observer.kt, H1): the waiter does when it may wait, the context when not.
    override suspend fun tryAcquire(timeout: Duration, permits: Int): Boolean =
        if (timeout.isPositive()) {
            tryAcquirePermits(permits, 0, waitsIfRefused = true) || acquireWithin(permits, 0, this, timeout) { release(permits) }
        } else {
            tryAcquirePermits(permits, 0, false, null, coroutineContext) || refused(permits)
        }

    override fun toString(): String = "Semaphore(${super.toString()})"
}
