package dev.semaphore.benchmarks

import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.InternalCoroutinesApi
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlin.coroutines.CoroutineContext

/**
 * The floor of ContendedBenchmark's semaphore rows: a FIFO semaphore that waits the way kotlinx.coroutines' public API
 * offers (a suspendCancellableCoroutine per waiter in a plain array, one cancellation handler shared by all; the count
 * and the array under a monitor, the resume outside it) and keeps what ours promises (a cancelled waiter leaves the
 * line; one cancelled as it was granted hands the permit back), nothing more. Why: docs/benchmarking.md#floors.
 */
public class QueueFloor(private val permits: Int) :
    SuspendPermits,
    (Throwable?) -> Unit,
    (Throwable, Any?, CoroutineContext) -> Unit {

    init {
        require(permits >= 1) { "permits must be >= 1, was $permits" }
    }

    private val lock = Any()
    private var free = permits // none while anyone waits
    private var waiters = arrayOfNulls<CancellableContinuation<Any?>>(16)
    private var head = 0
    private var tail = 0
    private var cancelledHint = 0 // cancellations since the last compaction: only decides when to compact

    /** The prompt-cancellation hook of the resume (typed to pick tryResume's 3-argument overload). */
    private val handBackOnCancel: (Throwable, Any?, CoroutineContext) -> Unit get() = this

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
                if (head == tail) {
                    free++
                    return
                }
                cont = waiters[head]!!
                waiters[head++] = null
            }
            val token = cont.tryResume(Unit, null, handBackOnCancel)
            if (token != null) {
                cont.completeResume(token)
                return
            } // else cancelled before the claim: the permit goes on to the next one
        }
    }

    public val available: Int get() = synchronized(lock) { free }

    /** Waiters now, not counting cancelled entries not yet dropped (a scan: for checks). */
    override val queued: Int get() = synchronized(lock) { (head until tail).count { !waiters[it]!!.isCancelled } }

    /** The shared cancellation handler: compacts when about half of the line may be cancelled (amortized O(1)). */
    override fun invoke(cause: Throwable?) {
        synchronized(lock) {
            cancelledHint++
            if (cancelledHint * 2 >= tail - head) compact()
        }
    }

    /** Granted, but cancelled before it ran: the permit is handed back. */
    override fun invoke(cause: Throwable, value: Any?, context: CoroutineContext) = release()

    internal fun park(cont: CancellableContinuation<Any?>) {
        cont.invokeOnCancellation(this)
        synchronized(lock) {
            if (free == 0) {
                if (tail == waiters.size) {
                    compact()
                    if (tail == waiters.size) waiters = waiters.copyOf(waiters.size * 2)
                }
                waiters[tail++] = cont
                return
            }
            free--
        }
        cont.resume(Unit, handBackOnCancel)
    }

    /** Drops cancelled entries and moves the live ones to the front (under the lock). */
    private fun compact() {
        var to = 0
        for (i in head until tail) {
            val c = waiters[i]!!
            waiters[i] = null
            if (!c.isCancelled) waiters[to++] = c
        }
        head = 0
        tail = to
        cancelledHint = 0
    }
}

// A Unit function containing suspendCancellableCoroutine gets a continuation frame per suspension; one returning Any?,
// tail-called through a `suspend (QueueFloor) -> Unit` reference, does not (as in semaphore-core's Suspending.kt).
private suspend fun suspendInQueue(floor: QueueFloor): Any? = suspendCancellableCoroutine<Any?> { cont -> floor.park(cont) }

@Suppress("UNCHECKED_CAST")
private val suspendInQueueAsUnit: suspend (QueueFloor) -> Unit = ::suspendInQueue as suspend (QueueFloor) -> Unit
