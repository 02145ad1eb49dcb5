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
 * - A dispatcher that throws from dispatch when the grant wakes the coroutine: the coroutine can never
 *   run, so onGranted hands the permits back (W3) and the error reaches the caller that released.
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

    /**
     * W3 also covers a dispatcher that refuses the wake: with a CoroutineDispatcher, completeResume
     * throws only from the dispatcher's isDispatchNeeded or dispatch (kotlinx's DispatchException), so
     * the coroutine will never run and take the permits; they are handed back before the error goes on
     * to the caller that granted them. (An unconfined resume catches its own errors.)
     */
    @OptIn(InternalCoroutinesApi::class)
    override fun onGranted() {
        try {
            cont.completeResume(slot!!)
        } catch (e: Throwable) {
            if (wakesWithoutCallbacks) handBackRefused(this, e)
            throw e
        }
    }

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

/** The hand-backs of refused wakes on one thread, made one after another instead of nested. */
private class RefusedWakes {
    val pending = ArrayDeque<PermitWaiter>()
    var draining = false
}

private val refusedWakes = ThreadSlot<RefusedWakes>()

/**
 * Hands [w]'s permits back (W3) after its dispatcher refused to wake it with [error]. The hand-back
 * releases, and the release may grant the next coroutine of the same dispatcher, whose refused wake
 * comes back here while this one runs: it is queued and made by this loop, so a long line of refused
 * coroutines costs a loop, not a stack frame each (I7). The errors of those nested releases are added
 * to [error] as suppressed.
 */
private fun handBackRefused(w: PermitWaiter, error: Throwable) {
    val r = refusedWakes.get() ?: RefusedWakes().also { refusedWakes.set(it) }
    r.pending.addLast(w)
    if (r.draining) return
    r.draining = true
    try {
        while (true) {
            val next = r.pending.removeFirstOrNull() ?: break
            try {
                next.handBack()
            } catch (e: Throwable) {
                if (e !== error) error.addSuppressed(e)
            }
        }
    } finally {
        r.draining = false
    }
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
