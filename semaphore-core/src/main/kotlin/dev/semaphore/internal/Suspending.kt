/*
 * Waiting by suspending a coroutine: the coroutine kind of waiter (WaiterQueue.kt, W1..W4), shared by
 * Semaphore, Lock and PrioritySemaphore.
 *
 * No CancellableContinuation: the waiter itself is what a suspension needs. It keeps the coroutine's
 * own continuation, watches the coroutine's Job with one handler (itself), and for a grant it is the
 * task that the coroutine's dispatcher runs, so that it can check prompt cancellation before the
 * coroutine goes on. (With a CancellableContinuation per suspension, a queued coroutine retained 272
 * bytes instead of 176, and a hand-off step between two coroutines took 1.03-1.07x kotlinx's time
 * instead of 0.81-0.90x: MemoryPerWaiter and HandoffBenchmark, issue 11.)
 *
 * - C1, one waker: grant, failure (close) and the Job's cancellation reach the waiter through I6, so at
 *   most one of them wakes it (wake). A CAS on `decision` settles the race between that waker and the
 *   suspender: whoever comes second resumes the coroutine (the waker) or returns at once (the suspender).
 * - W1, the claim: tryClaim refuses if the coroutine's Job is no longer active. The Job's handler then
 *   runs (it is registered before the offer, and a Job runs its cancelling handlers after it stops being
 *   active) and wakes the waiter, which the queue dropped as CANCELLED, with the CancellationException.
 * - W2: the Job's handler calls cancel(w). It is registered before the offer, so a coroutine cancelled
 *   before or during its offer never stands in line: the offer asks mayQueue() under the queue's lock,
 *   after the Job stopped being active, and drops the waiter; the suspender then throws the Job's
 *   CancellationException itself (the handler's cancel(w) of the NEW waiter changed nothing).
 * - An acquisition that does not suspend does not check for cancellation (as kotlinx's acquire() says
 *   of itself): the fast path, and an offer whose permits fit at once, return with the permits even if
 *   the Job was cancelled. So whether a cancelled coroutine gets permits depends only on whether they
 *   fit at the moment it asks, and the outcome has one order with the cancellation: the offer's.
 * - W3, prompt cancellation: a grant to a queued waiter resumes the coroutine through run()/resumeWith
 *   below, in the coroutine's context; if its Job was cancelled after the claim, the permits are handed
 *   back and the coroutine resumes with the CancellationException, never with the permits. The same
 *   check runs when the grant came while the suspender was still registering (takeEarly).
 * - C2, resuming in the coroutine's context: with a CoroutineDispatcher that needs a dispatch and no
 *   ThreadContextElement in the context, the waiter is dispatched as a Runnable (we allocate nothing;
 *   Dispatchers.Default and IO wrap a Runnable that is not one of their own tasks in a task object of
 *   theirs, and an executor's queue may add its node). A grant with no dispatch needed (Unconfined) and
 *   no ThreadContextElement, or any wake with no interceptor, has nothing to install: the waiter resumes
 *   in place, and I7 sends that wake through the trampoline, which keeps the stack flat as kotlinx's
 *   unconfined event loop would; through the dispatcher's own continuation instead, each wake cost an
 *   object and a fold of the context, 1.3x kotlinx's hand-off (docs/profiles.md). A failure keeps
 *   kotlinx's path, because it is not always delivered through the trampoline (the Job's handler wakes
 *   its own waiter). Every other case
 *   (thread-context elements to install, a ContinuationInterceptor that is not a dispatcher) goes through
 *   the interceptor's own continuation for the waiter (one object per wake), so kotlinx's machinery does
 *   what it does for any resumption. kotlinx's own waiters avoid both objects by reusing one
 *   continuation per coroutine, which its internal API allows and its public API does not (see
 *   docs/profiles.md, "Read-write section").
 * - C3, a dispatcher that refuses the wake (throws from isDispatchNeeded or dispatch): the coroutine can
 *   never run, so a grant's permits are handed back (W3), through a per-thread loop for a line of such
 *   coroutines, and the error reaches the caller that released.
 * - C4, reuse: a wait for a grantee that reusesWaiters (a Semaphore, a PrioritySemaphore, a ReadWriteLock, a Lock
 *   without owner: WaiterQueue.kt W4) by a
 *   coroutine with a Job takes its waiter from a per-thread cache of one: the waiter of that Job's last wait on
 *   this thread, if it was for the same grantee and count, its wait has ended (decision IDLE) and the Job is
 *   active. Such a waiter is registered on its Job once, when made, and stays registered across its waits, so a
 *   coroutine that waits again and again on one semaphore allocates nothing and registers nothing per wait
 *   (kotlinx reuses its CancellableContinuation for the same reason). Rules:
 *   - A wait takes the waiter by one CAS of `decision` from IDLE to UNDECIDED, then sets its caller and sets
 *     it NEW (WaiterQueue.kt I6), before its offer; it gives it back (IDLE) when it returns or throws without
 *     suspending, or in resumeWith, after its last read of the waiter and before the coroutine goes on.
 *     Nothing else relies on a waiter then: the queue and the wake chain let go of it before its wake, the
 *     observer at its end (granted, left, failed), a wake touches nothing after its last step (C1), and a
 *     Lock that records it as its owner-less holder compares it only in that wait's hand-back (Lock.kt L1).
 *   - The Job's handler is the one thing that may act on a waiter between waits, and only once the Job is no
 *     longer active, after which no wait takes the waiter again. It retires an IDLE waiter (CAS to RETIRED,
 *     then drops its coroutine and Job). Otherwise a wait may be starting: it cancels through the lock
 *     (cancelLocked, not the status check first), so that either its cancel comes after that wait's offer
 *     and finds the waiter queued, or the offer comes after it and sees the Job inactive (W2). The CAS that
 *     took the waiter and the handler's read of `decision` are the pair that makes one of them see the
 *     other: a status set NEW with release ordering alone would not be.
 *   - A wake moves `decision` only from UNDECIDED or from a suspended mark, by CAS, so a handler that comes
 *     after the wait it would cancel has ended changes nothing (C1 still holds for each wait).
 *   - The cache's waiter is replaced by the next wait on the thread that does not match, if it is IDLE or
 *     RETIRED: retired by CAS, its registration disposed. One still in use (another coroutine of this
 *     thread waits on it) stays, and that wait uses a waiter of its own, registered for that wait only.
 *     So a Job has at most one registered waiter per thread that cached one for it, and each thread keeps
 *     one waiter, replaced by its next wait, with nothing of a completed coroutine: the Job's handler drops
 *     its caller and Job when the Job completes or is cancelled between waits, and the end of a wait drops
 *     them when the Job stopped being active during that wait (its handler ran while the waiter was in use).
 * - C5, a moment's spin before suspending: a coroutine's wait that was queued (not granted at its offer) and is
 *   the only one in the line looks at its `decision` for a grant for a moment (GRANT_SPIN_TIME, 2 µs) before
 *   it suspends, so a grant from a release on another thread that comes within that moment
 *   resumes it in place: no dispatch, and its thread does not park and wake again (10-16 µs a step on our
 *   machines: docs/profiles.md, "Counted: dispatches per step"). The waiter is queued in its place meanwhile, so
 *   the order is unchanged; a wake during the spin is the early wake of C1 (`decision` set before the
 *   suspender's CAS), so a grant, a cancellation or a close ends the wait as they do any time before it
 *   suspends. Adaptive, per queue: a spin that saw no grant makes the queue's next waits skip theirs, 1, then 2,
 *   4 ... up to MAX_SPIN_BACKOFF of them; a spin that saw one halves the next such run. So where grants come from the
 *   waiter's own thread (an event loop, Unconfined) or only after long holds, one wait in 1,025 at most spins;
 *   where others wait too (the next release is someone else's, or not ours alone), none does. The two counters
 *   (WaiterQueue.spinSkip, spinBackoff) are read and written without synchronization: a lost update changes how
 *   often a wait spins, nothing else.
 * - C6, no type test on the wake's path that can see two classes: `decision` of a suspended waiter is the
 *   registration on its Job (kotlinx's node) or one of our marks, and the wake tells them apart by identity before
 *   it casts the registration to DisposableHandle, so that cast only ever sees the node's class, and the JIT compiles
 *   it to one compare of that class. Written as `as? DisposableHandle`, the test saw two classes once reusable waiters
 *   (C4, SUSPENDED_REUSABLE) existed, and cost the contended Semaphore(1) on Dispatchers.Default about 10% on JDK 17
 *   and nothing on JDK 25 (docs/profiles.md, "Waiter reuse and the contended `Semaphore(1)`"): the full test against
 *   an interface writes, on JDK 17 to 22, a one-entry cache in the node's class on every hit, which kotlinx's own tests
 *   of its nodes against its interface Incomplete rewrite (JDK-8180450, fixed in JDK 23).
 * - Timed acquisition (acquireWithin) records "acquired" in the same synchronous step in which
 *   acquire() returns; a timeout or cancellation that lands after that point gives the permits back
 *   instead of dropping them (the withTimeout { acquire() } leak of kotlinx issue 2233 cannot happen).
 *
 * kotlinx.coroutines' internal API: this file is the only one that uses it, in two calls (and
 * `Job.getCancellationException()`, the cause a cancelled Job gives its coroutine).
 * - `job.invokeOnCompletion(onCancelling = true, invokeImmediately = true, handler)` (W2): the handler
 *   must run when the Job starts cancelling. The public `invokeOnCompletion(handler)` runs when the Job
 *   completes, and the coroutine suspended here keeps its Job from completing until something wakes it,
 *   so a cancelled waiter would never wake. The public ways to hear of the cancellation of a suspended
 *   coroutine cost more per suspension: a CancellableContinuation (left out, see above), or a child
 *   `Job(job)` with a handler on its completion (a second Job and a child node for every suspension,
 *   a child that `job.children` shows while the coroutine waits, and a completion of it at every end).
 * - `handleCoroutineException(context, e)` (W3's hand-back): reports an error that no caller can catch
 *   exactly as kotlinx reports its own: to the context's CoroutineExceptionHandler, else (or if that
 *   throws) to the handlers installed through ServiceLoader (kotlinx-coroutines-test's, which makes
 *   runTest fail with the error; Android's) and then the thread's uncaught-exception handler. Its public
 *   parts (the context's handler, the thread's) skip the ServiceLoader handlers; a throwaway root
 *   coroutine that throws the error reaches the same chain, but its handler sees another coroutine's
 *   context, and the context's ThreadContextElements are installed around it.
 * Both have the same signature in kotlinx.coroutines 1.9, 1.10 and 1.11, and the same meaning (1.10
 * added only the unwrapping of a DispatchException, which a hand-back's error is not). The kotlinx-compat
 * Maven profile (semaphore-core/pom.xml, run by .ci/run) runs the core's whole test suite, with
 * KotlinxCompatSpec's tests of these two calls, on 1.9.0, 1.10.2 and 1.11.0 against these classes
 * compiled once against the build's version, so a release that changes either one's signature, or
 * what those tests check, fails it.
 */
package dev.semaphore.internal

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.DisposableHandle
import kotlinx.coroutines.InternalCoroutinesApi
import kotlinx.coroutines.Job
import kotlinx.coroutines.Runnable
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.handleCoroutineException
import kotlinx.coroutines.withTimeoutOrNull
import kotlin.coroutines.Continuation
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.coroutines.intrinsics.COROUTINE_SUSPENDED
import kotlin.coroutines.intrinsics.suspendCoroutineUninterceptedOrReturn
import kotlin.time.Duration
import kotlin.time.Duration.Companion.microseconds
import kotlin.time.TimeSource

/** `decision` of a waiter whose suspender has not decided yet and that nobody woke. */
private val UNDECIDED: Any? = null

/** `decision` once granted (the failure itself once failed or cancelled). */
private val GRANT = Any()

/** `decision` of a suspended waiter whose coroutine has no Job (else it is the Job handle). */
private val SUSPENDED_WITHOUT_JOB = Any()

/** `decision` of a suspended reusable waiter (C4): its Job's registration is kept by the thread's cache. */
private val SUSPENDED_REUSABLE = Any()

/** `decision` of a reusable waiter between two waits (C4): a wait of its coroutine may take it. */
private val IDLE = Any()

/** `decision` of a reusable waiter that no wait will take again (C4): its Job ended, or the cache let go of it. */
private val RETIRED = Any()

/** The caller of a retired waiter (C4), which holds on to nothing. */
private object RetiredCaller : Continuation<Any?> {
    override val context: CoroutineContext get() = EmptyCoroutineContext

    override fun resumeWith(result: Result<Any?>) = error("a retired waiter resumed a coroutine")
}

/**
 * A waiter that resumes the suspended coroutine [caller]. It is also the handler on the coroutine's
 * [job] (W2) and the task, or continuation, through which a grant resumes the coroutine (W3, C2).
 */
@OptIn(InternalCoroutinesApi::class)
private open class SuspendWaiter(
    permits: Int,
    grantee: Grantee,
    caller: Continuation<Any?>,
    /** The coroutine's Job; null without one, and once a reusable waiter retired (C4). */
    var job: Job?,
) : CoroutineWaiterCell(permits, grantee, caller),
    Continuation<Any?>,
    Runnable,
    (Throwable?) -> Unit {

    // decision (C1): UNDECIDED; then, if the suspender comes first, the Job handle (or
    // SUSPENDED_WITHOUT_JOB, or SUSPENDED_REUSABLE) until the waker replaces it by what run() delivers; if
    // the waker comes first, GRANT or the failure. A reusable waiter (C4) is then IDLE between its waits,
    // and RETIRED at the end.

    override val context: CoroutineContext get() = caller.context

    /** W1: under the queue's lock. */
    override fun tryClaim(): Boolean = job?.isActive != false

    /** W2: at the offer, under the queue's lock, when the request does not fit at once. */
    override fun mayQueue(): Boolean = job?.isActive != false

    override fun requester(): Requester =
        Requester(Requester.COROUTINE, currentThread(), caller.context[CoroutineName]?.name, job, grantee.owner)

    override fun onGranted() = wake(GRANT)

    override fun onFailed(cause: Throwable) = wake(cause)

    /**
     * I7: see C2; true when the resumption is dispatched. A dispatcher that throws from isDispatchNeeded is
     * left to [wake], which asks again and hands the permits back (C3).
     */
    override val wakesWithoutCallbacks: Boolean
        get() {
            val ctx = caller.context
            val d = ctx[ContinuationInterceptor] as? CoroutineDispatcher ?: return false
            return try {
                d.isDispatchNeeded(ctx)
            } catch (e: Throwable) {
                true
            }
        }

    /**
     * W2: the coroutine's Job is being cancelled. Before the offer this changes nothing: the offer,
     * ordered after it by the queue's lock, sees the Job inactive (mayQueue) and the suspender reads
     * the CANCELLED status itself.
     */
    override fun invoke(cause: Throwable?) {
        val j = job ?: return
        if (decision === IDLE && casDecision(IDLE, RETIRED)) return retire() // C4: between two waits
        val timedOut = cause is TimeoutCancellationException
        // C4: a reusable waiter's wait may be starting: through the lock, whatever the status read first.
        if (this is ReusableWaiter) queue.cancelLocked(this, timedOut) else queue.cancel(this, timedOut)
        // CANCELLED here by this cancel, by a claim refused because the Job was no longer active (W1), or by
        // the offer (mayQueue): the wake then only settles `decision`, since that suspender does not suspend.
        if (status == CANCELLED) wake(j.getCancellationException())
    }

    /** C4: drops what a retired waiter would keep alive (it is never queued again, so nothing reads these). */
    open fun retire() {
        job = null
        caller = RetiredCaller
    }

    /** C4: the wait of a reusable waiter has ended; a later wait of its coroutine may take it. */
    fun endWait() {
        decision = IDLE
        // C4: a Job that stopped being active during this wait ran its handler then, which retired nothing (the
        // waiter was in use); no wait takes the waiter again, so it retires here rather than keep the coroutine
        // alive in this thread's cache until the thread's next wait. (Either this CAS or the handler's wins.)
        val j = job
        if (j != null && !j.isActive && casDecision(IDLE, RETIRED)) retire()
    }

    /**
     * C1: the one waker ([outcome] is GRANT or the failure) resumes the coroutine, or leaves that to the suspender.
     * A wake that finds the wait woken or ended already (a Job's handler after the wait it meant: C4) does nothing.
     */
    fun wake(outcome: Any) {
        var d: Any?
        while (true) {
            d = decision
            if (d === UNDECIDED) {
                if (casDecision(UNDECIDED, outcome)) return
            } else if (d === GRANT || d === IDLE || d === RETIRED || d is Throwable) {
                return
            } else if (casDecision(d, outcome)) { // a suspended mark: `decision` is now read by run(), after the dispatch
                break
            }
        }
        // The suspended marks are ruled out by identity before the cast, so the cast only ever sees the class of
        // kotlinx's registration: compiled, it is one compare of that class (C6).
        if (d !== SUSPENDED_REUSABLE && d !== SUSPENDED_WITHOUT_JOB) (d as DisposableHandle).dispose()
        val ctx = caller.context
        val interceptor = ctx[ContinuationInterceptor]
        if (interceptor !is CoroutineDispatcher) {
            val result = resultOf(outcome)
            if (interceptor == null) resumeWith(result) else interceptor.interceptContinuation(this).resumeWith(result)
            return
        }
        // C3: a dispatcher throws here only from isDispatchNeeded or dispatch (an unconfined resume catches
        // its own errors), so the coroutine has not run: a grant's permits go back before the error goes on.
        try {
            val dispatch = interceptor.isDispatchNeeded(ctx)
            if (dispatch && !hasThreadContextElement(ctx)) return interceptor.dispatch(ctx, this)
            if (dispatch || outcome !== GRANT || hasThreadContextElement(ctx)) {
                return interceptor.interceptContinuation(this).resumeWith(resultOf(outcome))
            }
        } catch (e: Throwable) {
            if (outcome === GRANT) handBackRefused(this, e)
            if (this is ReusableWaiter) endWait() // C4: this wait never resumes its coroutine
            throw e
        }
        resumeWith(resultOf(GRANT)) // C2: a grant, no dispatch needed, nothing to install: in place (I7: the trampoline)
    }

    /** C2: the dispatched task; runs on the coroutine's dispatcher. */
    override fun run() = resumeWith(resultOf(decision!!))

    /** W3: runs in the coroutine's context; a grant to a coroutine cancelled since its claim is handed back. */
    override fun resumeWith(result: Result<Any?>) {
        val j = job
        val c = caller
        if (result.isSuccess && j != null && !j.isActive) {
            handBackOrReport()
            val e = j.getCancellationException()
            if (this is ReusableWaiter) endWait() // C4: after the last read of this waiter
            c.resumeWith(Result.failure(e))
        } else {
            if (this is ReusableWaiter) endWait()
            c.resumeWith(result)
        }
    }

    /** The suspender, once registered: true if suspended, false if already woken (then see [takeEarly]). */
    fun trySuspend(mark: Any): Boolean = casDecision(UNDECIDED, mark)

    /** The suspender's result when woken before it suspended: the failure, or the grant (W3 checked). */
    fun takeEarly(): Any {
        val d = decision
        if (d is Throwable) throw d
        val j = job
        if (j != null && !j.isActive) {
            handBackOrReport()
            throw j.getCancellationException()
        }
        return Unit
    }

    /**
     * W3's hand-back, whose error (the permits were released meanwhile by someone else: over-release)
     * goes to the coroutine's exception handler, as kotlinx does with an onCancellation hook's error,
     * instead of out of the dispatcher's task; the coroutine still resumes with its cancellation.
     */
    private fun handBackOrReport() {
        try {
            handBack()
        } catch (e: Throwable) {
            handleCoroutineException(caller.context, e)
        }
    }

    private fun resultOf(outcome: Any): Result<Any?> =
        if (outcome is Throwable) Result.failure(outcome) else Result.success(Unit)
}

/**
 * A waiter that serves its coroutine's waits one after another (C4): registered on the Job once, kept in its
 * thread's [WaiterCache]. The class is the mark (a one-wait [SuspendWaiter] stays 48 bytes); it adds the
 * registration, which a one-wait waiter keeps in `decision` while suspended.
 */
private class ReusableWaiter(permits: Int, grantee: Grantee, caller: Continuation<Any?>, job: Job) :
    SuspendWaiter(permits, grantee, caller, job) {
    /** The registration on the Job, disposed when the cache lets go of this waiter, dropped when it retires. */
    var handle: DisposableHandle? = null

    override fun retire() {
        super.retire()
        handle = null // the registration (kotlinx's node) refers to the Job
    }

    /** C4: takes this waiter for a new wait of [caller], of the same Job, grantee and count: false if it is not IDLE. */
    fun take(caller: Continuation<Any?>): Boolean {
        if (!casDecision(IDLE, UNDECIDED)) return false
        this.caller = caller
        prev = null
        next = null
        slot = null
        setStatus(NEW)
        return true
    }
}

/**
 * C5: how long a queued wait looks for a grant before it suspends: well under what a park and a wake of its thread
 * cost (10-16 µs on our machines), so a spin that comes up empty costs less than the wake it tried to save.
 */
private val GRANT_SPIN_TIME = 2.microseconds

/** C5: the most waits of a queue that skip their spin after spins that saw no grant. */
private const val MAX_SPIN_BACKOFF = 1024

/**
 * C5: looks at [w]'s `decision` for a grant (or any wake) for GRANT_SPIN_TIME, if [w] is the only
 * waiter and this queue's recent spins did not come up empty; the caller then tries to suspend as before, and takes
 * an early wake if one came.
 */
private fun WaiterQueue.spinForGrant(w: SuspendWaiter) {
    if (queueLength != 1) return // others wait too: the next release is not ours, or not ours alone
    val skip = spinSkip
    if (skip > 0) {
        spinSkip = skip - 1
        return
    }
    val start = TimeSource.Monotonic.markNow()
    while (true) {
        if (w.decision !== UNDECIDED) {
            val backoff = spinBackoff
            if (backoff > 1) spinBackoff = backoff / 2
            return
        }
        if (start.elapsedNow() >= GRANT_SPIN_TIME) break
        spinWait(0)
    }
    val backoff = spinBackoff
    spinSkip = backoff
    spinBackoff = if (backoff >= MAX_SPIN_BACKOFF) MAX_SPIN_BACKOFF else backoff * 2
}

/** One thread's reusable waiter (C4). */
private class WaiterCache {
    var waiter: ReusableWaiter? = null
}

private val waiterCache = ThreadSlot<WaiterCache>()

/**
 * C4: a waiter for a wait of [permits] for [grantee] by [caller], whose Job [job] is active: this thread's
 * cached waiter if it serves, else a new one registered on [job] and cached in its place; null if the
 * cached one is in use by another coroutine of this thread (the wait then takes a waiter of its own).
 */
@OptIn(InternalCoroutinesApi::class)
private fun reusableWaiter(permits: Int, grantee: Grantee, caller: Continuation<Any?>, job: Job): ReusableWaiter? {
    val cache = waiterCache.get() ?: WaiterCache().also { waiterCache.set(it) }
    val cached = cache.waiter
    if (cached != null) {
        if (cached.job === job && cached.grantee === grantee && cached.permits == permits && cached.take(caller)) return cached
        val d = cached.decision
        if (d === IDLE && cached.casDecision(IDLE, RETIRED)) { // let go of: its registration is disposed
            cached.handle?.dispose()
            cached.retire()
        } else if (d !== RETIRED) { // (retired by its Job's handler: nothing is left to dispose)
            return null // in use
        }
        cache.waiter = null
    }
    val w = ReusableWaiter(permits, grantee, caller, job)
    // W2: registered before the offer (the handler runs at once if the Job is already cancelling).
    val handle = job.invokeOnCompletion(onCancelling = true, invokeImmediately = true, handler = w)
    w.handle = handle // (no handler retires it before this wait ends: it is not IDLE until then)
    cache.waiter = w
    return w
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

/**
 * Suspends until [permits] are granted for [grantee] (the caller already failed a fast tryAcquire).
 *
 * The whole function is one suspendCoroutineUninterceptedOrReturn of type Unit, so the compiler makes it
 * a tail call: no continuation frame of its own, and the Ints are passed as they are. (Through a
 * function reference of type `suspend (..., Int, Int, ...) -> Unit`, each Int was boxed by
 * `Boxing.boxInt`, which allocates a new Integer: 32 bytes per suspension whenever the JIT's escape
 * analysis did not remove them.)
 */
@OptIn(InternalCoroutinesApi::class)
@Suppress("UNCHECKED_CAST")
internal suspend fun WaiterQueue.acquireSuspending(permits: Int, priority: Int, grantee: Grantee): Unit =
    suspendCoroutineUninterceptedOrReturn<Unit> { caller ->
        val job = caller.context[Job]
        if (job != null && grantee.reusesWaiters && job.isActive) {
            val r = reusableWaiter(permits, grantee, caller as Continuation<Any?>, job)
            if (r != null) return@suspendCoroutineUninterceptedOrReturn waitReusing(r, priority, job)
        }
        val w = SuspendWaiter(permits, grantee, caller as Continuation<Any?>, job)
        if (job == null) {
            if (enqueue(w, priority)) return@suspendCoroutineUninterceptedOrReturn Unit
            spinForGrant(w) // C5
            return@suspendCoroutineUninterceptedOrReturn if (w.trySuspend(SUSPENDED_WITHOUT_JOB)) COROUTINE_SUSPENDED else w.takeEarly()
        }
        // W2: the handler first (it runs at once if the Job is already cancelling), then the offer.
        val handle = job.invokeOnCompletion(onCancelling = true, invokeImmediately = true, handler = w)
        try {
            if (enqueue(w, priority)) {
                // Granted at the offer: like the fast path, a call that does not suspend does not check
                // for cancellation, so the permits are the caller's even if the Job was cancelled meanwhile.
                handle.dispose()
                return@suspendCoroutineUninterceptedOrReturn Unit
            }
        } catch (e: Throwable) { // closed, or a request larger than the total: nothing is queued
            handle.dispose()
            throw e
        }
        if (w.status == PermitWaiter.CANCELLED) { // W2: the Job is no longer active, and nothing is held
            handle.dispose()
            throw job.getCancellationException()
        }
        spinForGrant(w) // C5
        if (w.trySuspend(handle)) COROUTINE_SUSPENDED else {
            handle.dispose()
            w.takeEarly()
        }
    }

/**
 * acquireSuspending's wait with a reusable waiter [w] (C4), taken for this wait (UNDECIDED, NEW) and registered on
 * [job]: as the wait with a waiter of its own, with the waiter given back (IDLE) wherever the wait ends without
 * suspending, and no registration to dispose.
 */
@OptIn(InternalCoroutinesApi::class)
private fun WaiterQueue.waitReusing(w: ReusableWaiter, priority: Int, job: Job): Any? {
    try {
        if (enqueue(w, priority)) {
            w.endWait() // granted at the offer (the fast path's rule: no check for cancellation)
            return Unit
        }
    } catch (e: Throwable) { // closed, or a request larger than the total: nothing is queued
        w.endWait()
        throw e
    }
    if (w.status == PermitWaiter.CANCELLED) { // W2: the Job is no longer active, and nothing is held
        w.endWait()
        throw job.getCancellationException()
    }
    spinForGrant(w) // C5
    if (w.trySuspend(SUSPENDED_REUSABLE)) return COROUTINE_SUSPENDED
    try {
        return w.takeEarly()
    } finally {
        w.endWait()
    }
}

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
    if (!timeout.isPositive()) return refused(permits) // a try without waiting
    if (timeout.isInfinite()) {
        acquireSuspending(permits, priority, grantee)
        return true
    }
    return waitWithin(timeout, giveBack) { acquireSuspending(permits, priority, grantee) }
}

/**
 * Runs [acquire] (an acquisition from this queue, maybe in several steps) within a positive, finite
 * [timeout], announced to observation as the request's deadline: true once it returned, false if the
 * timeout came first. [giveBack] returns what it acquired when the caller is cancelled at the very
 * moment it returned (`acquired` is set in the step in which it returns).
 */
internal suspend inline fun WaiterQueue.waitWithin(timeout: Duration, giveBack: () -> Unit, crossinline acquire: suspend () -> Unit): Boolean {
    var acquired = false
    val announcer = announceDeadline(timeout.inWholeNanoseconds) // for observation: the request's deadline
    try {
        withTimeoutOrNull(timeout) {
            acquire()
            acquired = true
        }
    } catch (e: Throwable) {
        if (acquired) giveBack()
        throw e
    } finally {
        if (announcer != null) clearDeadline(announcer)
    }
    return acquired
}

