/*
 * The public-API floor: the least work a coroutine primitive that waits the way kotlinx.coroutines' PUBLIC API
 * offers, in a suspendCancellableCoroutine (no `internal`, no INVISIBLE_REFERENCE suppression; the
 * @InternalCoroutinesApi opt-in functions tryResume and completeResume are allowed), must do to suspend a waiter
 * and hand it a permit, while keeping what our library promises: a cancelled waiter is told (invokeOnCancellation), and a waiter
 * cancelled at the very moment it was granted hands the permit back (the onCancellation hook of tryResume).
 *
 * Our own waiter does not wait in a CancellableContinuation (semaphore-core's Suspending.kt: the waiter is its
 * own continuation, Job handler and dispatched task), so it can be below these floors; they show what that saves.
 *
 * What one suspension through that API costs and cannot avoid (kotlinx 1.11, measured by the findings of
 * issue 11 with an Epsilon class histogram):
 * - a fresh CancellableContinuationImpl (48 B): suspendCancellableCoroutine always creates one (the reusable
 *   variant kotlinx's own Semaphore uses is `internal`);
 * - its parent-job handle, ChildContinuation (32 B), installed on the caller's Job and removed again when the
 *   continuation resumes (the list insert/remove on the Job's handler list is most of its time);
 * - the CancelHandler.UserSupplied wrapper (16 B) of the public invokeOnCancellation(handler);
 * - CompletedContinuation (32 B), because the resume carries an onCancellation hook.
 *
 * Invariants of HandoffFloor (what is NOT there is the point):
 * - No queue, no lock, no permit counting: one AtomicReference slot that is FREE (the permit is free), null
 *   (held, nobody waits) or the waiting continuation. One CAS to publish the waiter, one CAS to take it.
 * - No object of its own per suspension: the floor itself is both cancellation handlers (shared by every waiter),
 *   and the suspension is a tail call (no continuation frame; see suspendInSlotAsUnit).
 * - At most two waiters, FIFO. The hand-off workload queues both coroutines behind the held permit before the
 *   first hand-over, so at the start the slot holds a Two(first, second) pair for one step; from then on it holds
 *   one continuation at most, and the pair is never allocated again. A third waiter is refused with
 *   IllegalStateException: the floor is for the strict hand-off between two coroutines and nothing else.
 *
 * QueueFloor is the memory floor of a queued waiter and the floor of the contended benchmarks: the same suspension,
 * the continuation kept in a plain array (4 B per waiter with compressed references, the array allocated by the first
 * waiter), one handler shared by all waiters (a cancelled waiter is dropped lazily, so no per-waiter handler object),
 * a permit count and the array under a monitor, and the resume (tryResume, completeResume) outside it. It has what a
 * FIFO semaphore needs and nothing more: no multi-permit requests, priorities, resizing, close or metrics.
 */
package dev.semaphore.benchmarks

import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.InternalCoroutinesApi
import kotlinx.coroutines.suspendCancellableCoroutine
import java.util.concurrent.atomic.AtomicReference
import kotlin.coroutines.CoroutineContext

/** The slot's "the permit is free" state. */
private val FREE = Any()

/**
 * The public-API floor of one hand-off step: a one-permit primitive whose whole state is one slot (see the file
 * comment). [held] = start with the permit taken.
 */
public class HandoffFloor(held: Boolean) :
    SuspendPermits,
    (Throwable?) -> Unit,
    (Throwable, Any?, CoroutineContext) -> Unit {

    /** FREE, null (held, no waiter), the waiting CancellableContinuation, or Two waiting ones (first in line first). */
    internal val slot = AtomicReference<Any?>(if (held) null else FREE)

    /** Two waiters at once (only at the start of the hand-off workload). */
    private class Two(val first: CancellableContinuation<Any?>, val second: CancellableContinuation<Any?>)

    /** The prompt-cancellation hook of the resume, typed to pick tryResume's 3-argument overload. */
    internal val handBackOnCancel: (Throwable, Any?, CoroutineContext) -> Unit get() = this

    override suspend fun acquire(caller: Int) {
        if (slot.get() === FREE && slot.compareAndSet(FREE, null)) return
        suspendInSlotAsUnit(this)
    }

    @OptIn(InternalCoroutinesApi::class)
    override fun release() {
        while (true) {
            val s = slot.get()
            val next: CancellableContinuation<Any?>
            when {
                s == null -> if (slot.compareAndSet(null, FREE)) return else continue
                s === FREE -> throw IllegalStateException("over-release: the floor's permit is already free")
                s is Two -> if (slot.compareAndSet(s, s.second)) next = s.first else continue
                else -> {
                    if (!slot.compareAndSet(s, null)) continue
                    @Suppress("UNCHECKED_CAST")
                    next = s as CancellableContinuation<Any?>
                }
            }
            val token = next.tryResume(Unit, null, handBackOnCancel)
            if (token != null) {
                next.completeResume(token)
                return
            }
            // The waiter was cancelled before the claim: the permit goes on to the next one, or becomes free.
        }
    }

    /** 1 if the permit is free, else 0. */
    public val available: Int get() = if (slot.get() === FREE) 1 else 0

    /** Waiters now: 0, 1 or 2. */
    override val queued: Int
        get() = when (slot.get()) {
            is Two -> 2
            is CancellableContinuation<*> -> 1
            else -> 0
        }

    /** The cancellation handler of every waiter: a cancelled waiter leaves the slot. */
    override fun invoke(cause: Throwable?) {
        while (true) {
            val s = slot.get()
            val rest: Any? = when {
                s is Two && s.first.isCancelled -> s.second
                s is Two && s.second.isCancelled -> s.first
                s is CancellableContinuation<*> && s.isCancelled -> null
                else -> return
            }
            if (slot.compareAndSet(s, rest)) return
        }
    }

    /** Granted, but cancelled before it could run (prompt cancellation): the permit is handed back. */
    override fun invoke(cause: Throwable, value: Any?, context: CoroutineContext) = release()

    /** Inside suspendCancellableCoroutine: register the handler, then publish [cont] or take a permit freed meanwhile. */
    internal fun park(cont: CancellableContinuation<Any?>) {
        cont.invokeOnCancellation(this)
        while (true) {
            val s = slot.get()
            when {
                s == null -> if (slot.compareAndSet(null, cont)) return
                s === FREE -> if (slot.compareAndSet(FREE, null)) {
                    cont.resume(Unit, handBackOnCancel)
                    return
                }
                s is Two -> throw IllegalStateException("the hand-off floor holds two waiters at most")
                else -> {
                    @Suppress("UNCHECKED_CAST")
                    if (slot.compareAndSet(s, Two(s as CancellableContinuation<Any?>, cont))) return
                }
            }
        }
    }
}

/*
 * As in the engine (semaphore-core's Suspending.kt): a Unit function that contains suspendCancellableCoroutine
 * gets a continuation frame of its own on every suspension, a function returning Any? does not, and a Unit
 * function tail-calls a `suspend (...) -> Unit` reference to it. So the floor pays no frame either.
 */
private suspend fun suspendInSlot(floor: HandoffFloor): Any? =
    suspendCancellableCoroutine<Any?> { cont -> floor.park(cont) }

@Suppress("UNCHECKED_CAST")
private val suspendInSlotAsUnit: suspend (HandoffFloor) -> Unit = ::suspendInSlot as suspend (HandoffFloor) -> Unit

/**
 * The floor of a queued waiter: a semaphore of [permits] permits (1 unless given) whose waiters are continuations
 * in a FIFO array (see the file comment). [held] = start with one permit taken. [capacityHint] = the size of the
 * array the first waiter allocates (it doubles when full), so that a probe of N waiters counts 4 B each and no
 * growth slack. The memory probe uses it with one held permit; the contended benchmarks with every permit count.
 */
public class QueueFloor @JvmOverloads constructor(
    held: Boolean,
    private val capacityHint: Int = 16,
    private val permits: Int = 1,
) :
    SuspendPermits,
    (Throwable?) -> Unit,
    (Throwable, Any?, CoroutineContext) -> Unit {

    private val lock = Any()
    /** Permits free now: none while anyone waits. */
    private var free = permits - (if (held) 1 else 0)
    private var waiters: Array<CancellableContinuation<Any?>?>? = null
    private var head = 0
    private var tail = 0

    /** Cancellations since the last compaction (a hint: it only decides when to compact). */
    private var cancelledHint = 0

    internal val handBackOnCancel: (Throwable, Any?, CoroutineContext) -> Unit get() = this

    override suspend fun acquire(caller: Int) {
        synchronized(lock) {
            if (free > 0) {
                free--
                return
            }
        }
        suspendInQueueAsUnit(this)
    }

    @OptIn(InternalCoroutinesApi::class)
    override fun release() {
        while (true) {
            val cont: CancellableContinuation<Any?>
            synchronized(lock) {
                check(free < permits) { "over-release: the floor's $permits permits are all free" }
                val w = waiters
                if (w == null || head == tail) {
                    free++
                    return
                }
                cont = w[head]!!
                w[head++] = null
            }
            val token = cont.tryResume(Unit, null, handBackOnCancel)
            if (token != null) {
                cont.completeResume(token)
                return
            }
        }
    }

    /** Permits free now. */
    public val available: Int get() = synchronized(lock) { free }

    /** Waiters now, not counting cancelled entries not yet dropped (a scan: for checks, not for speed). */
    override val queued: Int
        get() = synchronized(lock) {
            val w = waiters ?: return 0
            (head until tail).count { !w[it]!!.isCancelled }
        }

    /** The shared cancellation handler: compact when about half of the line may be cancelled (amortized O(1)). */
    override fun invoke(cause: Throwable?) {
        synchronized(lock) {
            cancelledHint++
            if (cancelledHint * 2 >= tail - head) compact()
        }
    }

    override fun invoke(cause: Throwable, value: Any?, context: CoroutineContext) = release()

    internal fun park(cont: CancellableContinuation<Any?>) {
        cont.invokeOnCancellation(this)
        synchronized(lock) {
            if (free > 0) {
                free--
            } else {
                var w = waiters ?: arrayOfNulls<CancellableContinuation<Any?>?>(capacityHint).also { waiters = it }
                if (tail == w.size) {
                    compact()
                    w = waiters!!
                    if (tail == w.size) w = w.copyOf(w.size * 2).also { waiters = it }
                }
                w[tail++] = cont
                return
            }
        }
        cont.resume(Unit, handBackOnCancel)
    }

    /** Drops cancelled entries and moves the live ones to the front (under the lock). */
    private fun compact() {
        val w = waiters ?: return
        var to = 0
        for (i in head until tail) {
            val c = w[i]!!
            w[i] = null
            if (!c.isCancelled) w[to++] = c
        }
        head = 0
        tail = to
        cancelledHint = 0
    }
}

private suspend fun suspendInQueue(floor: QueueFloor): Any? =
    suspendCancellableCoroutine<Any?> { cont -> floor.park(cont) }

@Suppress("UNCHECKED_CAST")
private val suspendInQueueAsUnit: suspend (QueueFloor) -> Unit = ::suspendInQueue as suspend (QueueFloor) -> Unit
