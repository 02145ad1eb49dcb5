/*
 * Waiting by suspending a coroutine: the coroutine kind of waiter (WaiterQueue.kt, W1..W4), shared by
 * Semaphore, Lock and PrioritySemaphore.
 *
 * - W1, the claim: kotlinx's tryResume(value, onCancellation) under the queue's lock; it fails if the
 *   coroutine is already cancelled. Once it succeeds cancellation can no longer win the continuation:
 *   completeResume (outside the lock) dispatches it.
 * - W2: the continuation's cancellation handler calls cancel(w). It is registered before the offer,
 *   so a coroutine cancelled before or during its offer never stands in line: cancel(w) of the NEW
 *   waiter makes the offer do nothing (and a Job's cancel() returns only after the handler ran).
 * - W3: if the coroutine's Job is cancelled after the claim but before it resumes (prompt
 *   cancellation), the onCancellation hook hands the permits back before the coroutine sees the
 *   CancellationException. Granted at enqueue (inside suspendCancellableCoroutine's block), the
 *   waiter resumes with the same hook, which hands back at once if the coroutine is already cancelled.
 * - Timed acquisition (acquireWithin) records "acquired" in the same synchronous step in which
 *   acquire() returns; a timeout or cancellation that lands after that point gives the permits back
 *   instead of dropping them (the withTimeout { acquire() } leak of kotlinx issue 2233 cannot happen).
 */
package dev.semaphore.internal

import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.InternalCoroutinesApi
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.withTimeoutOrNull
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.resumeWithException
import kotlin.time.Duration

/** A waiter that resumes a suspended coroutine; it is also its own cancellation handlers (no extra allocation). */
private class SuspendWaiter(
    permits: Int,
    grantee: Grantee,
) : PermitWaiter(permits, grantee),
    (Throwable?) -> Unit,
    (Throwable, Any?, CoroutineContext) -> Unit {

    /** Set once, inside suspendCancellableCoroutine, before the waiter is offered to the queue. */
    lateinit var cont: CancellableContinuation<Any?>

    /** This waiter as the prompt-cancellation hook of resume (typed, to pick the 3-argument overload). */
    val handBackOnCancel: (Throwable, Any?, CoroutineContext) -> Unit get() = this

    @OptIn(InternalCoroutinesApi::class)
    override fun tryClaim(): Boolean {
        val token = cont.tryResume(Unit, null, handBackOnCancel) ?: return false
        slot = token // read by onGranted after the lock is released
        return true
    }

    @OptIn(InternalCoroutinesApi::class)
    override fun onGranted() = cont.completeResume(slot!!)

    /**
     * I7: with a CoroutineDispatcher, completeResume dispatches, or kotlinx's unconfined event loop
     * queues a nested resume. Without one (a coroutine started with no dispatcher, or a bare
     * ContinuationInterceptor), kotlinx resumes inline: that wake goes through the trampoline.
     */
    override val wakesWithoutCallbacks: Boolean
        get() = cont.context[ContinuationInterceptor] is CoroutineDispatcher

    override fun onFailed(cause: Throwable) = cont.resumeWithException(cause)

    /** W2: the coroutine was cancelled while suspended. */
    override fun invoke(cause: Throwable?) {
        queue.cancel(this)
    }

    /** W3: granted, but the coroutine was cancelled before it could take the permits. */
    override fun invoke(cause: Throwable, value: Any?, context: CoroutineContext) = handBack()
}

/** Suspends until [permits] are granted for [grantee] (the caller already failed a fast tryAcquire). */
internal suspend fun WaiterQueue.acquireSuspending(permits: Int, priority: Int, grantee: Grantee): Unit =
    suspendForGrantAsUnit(this, SuspendWaiter(permits, grantee), priority)

/*
 * Why the detour: with Kotlin 2.4, a Unit-returning function that contains suspendCancellableCoroutine
 * gets a continuation frame of its own (plus a fresh DispatchedContinuation for it) on every
 * suspension, about 90 bytes, because the compiler does not treat the inlined suspension as a tail call
 * of a Unit function. The same body returning Any? is a tail call (no frame), and a Unit function
 * tail-calls a value of type `suspend (...) -> Unit`. So the suspension lives in suspendForGrant
 * (Any?, always resumed with Unit) and is called through this Unit-typed reference: no frame, no
 * allocation (the reference is a singleton).
 */
private suspend fun suspendForGrant(queue: WaiterQueue, waiter: SuspendWaiter, priority: Int): Any? =
    suspendCancellableCoroutine<Any?> { cont ->
        waiter.cont = cont
        cont.invokeOnCancellation(waiter) // W2, before the offer (runs at once if already cancelled)
        if (queue.enqueue(waiter, priority)) cont.resume(Unit, waiter.handBackOnCancel)
    }

@Suppress("UNCHECKED_CAST")
private val suspendForGrantAsUnit: suspend (WaiterQueue, SuspendWaiter, Int) -> Unit =
    ::suspendForGrant as suspend (WaiterQueue, SuspendWaiter, Int) -> Unit

/**
 * Waits at most [timeout] for [permits] (the caller already failed a fast tryAcquire). True with the
 * permits held, false with nothing held. [giveBack] returns permits that were acquired when the
 * caller is cancelled at the very moment of success.
 */
internal suspend inline fun WaiterQueue.acquireWithin(
    permits: Int,
    priority: Int,
    grantee: Grantee,
    timeout: Duration,
    giveBack: () -> Unit,
): Boolean {
    if (!timeout.isPositive()) return false
    if (timeout.isInfinite()) {
        acquireSuspending(permits, priority, grantee)
        return true
    }
    var acquired = false
    try {
        withTimeoutOrNull(timeout) {
            acquireSuspending(permits, priority, grantee)
            acquired = true
        }
    } catch (e: Throwable) {
        if (acquired) giveBack()
        throw e
    }
    return acquired
}
