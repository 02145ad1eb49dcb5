/*
 * The suspending front-end shared by Semaphore, Lock and PrioritySemaphore: a PermitWaiter that
 * resumes a CancellableContinuation.
 *
 * Invariants (on top of WaiterQueue's):
 * S1  Cancelled while QUEUED: the cancellation handler calls WaiterQueue.cancel, which unlinks the
 *     waiter (and grants those behind it if they now fit).
 * S2  Granted from the queue: under the queue's lock the waiter claims its continuation with
 *     tryResume(value, onCancellation). If the coroutine is already cancelled the claim fails and the
 *     queue skips the waiter (the permits go to the next in line; the cancellation handler's cancel()
 *     then finds nothing to do). If the claim succeeds, cancellation can no longer win the state of
 *     the continuation: completeResume (outside the lock) dispatches it, and if its Job is cancelled
 *     before it runs (prompt cancellation), onCancellation hands the permits back
 *     (WaiterQueue.handBack) before the coroutine sees the CancellationException.
 *     Granted at enqueue (inside suspendCancellableCoroutine's block): resume(value, onCancellation),
 *     which hands back at once if the coroutine is already cancelled.
 *     So a grant is either returned from acquire() or handed back, never both, never neither, and the
 *     hand-back happens before a cancelled acquire() completes.
 * S3  Timed acquisition records "acquired" in the same synchronous step that acquire() returns in; a
 *     timeout or cancellation that lands after that point hands the permits back instead of
 *     dropping them (the withTimeout { acquire() } leak of kotlinx issue 2233 cannot happen).
 */
package dev.semaphore.internal

import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.InternalCoroutinesApi
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.withTimeoutOrNull
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.resumeWithException
import kotlin.time.Duration

/** A waiter that resumes a suspended coroutine; it is also its own cancellation handlers (no extra allocation). */
@OptIn(InternalSemaphoreApi::class)
private class SuspendWaiter(
    val queue: WaiterQueue,
    permits: Int,
    priority: Int,
    owner: Any?,
) : PermitWaiter(permits, priority, owner),
    (Throwable?) -> Unit,
    (Throwable, Any?, CoroutineContext) -> Unit {

    /** Set once, inside suspendCancellableCoroutine, before the waiter is offered to the queue. */
    lateinit var cont: CancellableContinuation<Any?>

    /** The token of a successful claim (S2), read by onGranted after the lock is released. */
    private var resumeToken: Any? = null

    /** This waiter as the prompt-cancellation hook of resume (typed, to pick the 3-argument overload). */
    val handBackOnCancel: (Throwable, Any?, CoroutineContext) -> Unit get() = this

    @OptIn(InternalCoroutinesApi::class)
    override fun tryClaim(): Boolean {
        resumeToken = cont.tryResume(Unit, null, handBackOnCancel)
        return resumeToken != null
    }

    @OptIn(InternalCoroutinesApi::class)
    override fun onGranted() = cont.completeResume(resumeToken!!)

    override fun onFailed(cause: Throwable) = cont.resumeWithException(cause)

    /** S1: the coroutine was cancelled while suspended. */
    override fun invoke(cause: Throwable?) {
        queue.cancel(this)
    }

    /** S2: granted, but the coroutine was cancelled before it could take the permits. */
    override fun invoke(cause: Throwable, value: Any?, context: CoroutineContext) {
        queue.handBack(this)
    }
}

/** Suspends until [permits] are granted (the caller already failed a fast tryAcquire). */
internal suspend fun WaiterQueue.acquireSuspending(permits: Int, priority: Int, owner: Any?): Unit =
    suspendForGrantAsUnit(SuspendWaiter(this, permits, priority, owner))

/*
 * Why the detour: with Kotlin 2.4, a Unit-returning function that contains suspendCancellableCoroutine
 * gets a continuation frame of its own (plus a fresh DispatchedContinuation for it) on every
 * suspension, about 90 bytes, because the compiler does not treat the inlined suspension as a tail call
 * of a Unit function. The same body returning Any? is a tail call (no frame), and a Unit function
 * tail-calls a value of type `suspend (...) -> Unit`. So the suspension lives in suspendForGrant
 * (Any?, always resumed with Unit) and is called through this Unit-typed reference: no frame, no
 * allocation (the reference is a singleton).
 */
private suspend fun suspendForGrant(waiter: SuspendWaiter): Any? =
    suspendCancellableCoroutine<Any?> { cont ->
        waiter.cont = cont
        if (waiter.queue.enqueue(waiter)) cont.resume(Unit, waiter.handBackOnCancel) else cont.invokeOnCancellation(waiter)
    }

@Suppress("UNCHECKED_CAST")
private val suspendForGrantAsUnit: suspend (SuspendWaiter) -> Unit =
    ::suspendForGrant as suspend (SuspendWaiter) -> Unit

/**
 * Waits at most [timeout] for [permits] (the caller already failed a fast tryAcquire). True with the
 * permits held, false with nothing held. [giveBack] returns permits that were acquired when the
 * caller is cancelled at the very moment of success (S3).
 */
@OptIn(InternalSemaphoreApi::class)
internal suspend inline fun WaiterQueue.acquireWithin(
    permits: Int,
    priority: Int,
    owner: Any?,
    timeout: Duration,
    giveBack: () -> Unit,
): Boolean {
    if (!timeout.isPositive()) return false
    if (timeout.isInfinite()) {
        acquireSuspending(permits, priority, owner)
        return true
    }
    var acquired = false
    try {
        withTimeoutOrNull(timeout) {
            acquireSuspending(permits, priority, owner)
            acquired = true
        }
    } catch (e: Throwable) {
        if (acquired) giveBack()
        throw e
    }
    return acquired
}
