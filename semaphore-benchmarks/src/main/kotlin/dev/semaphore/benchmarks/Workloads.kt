/*
 * The suspending workloads the JMH classes call. Each checks its own outcome and throws if it is wrong, so a broken
 * primitive cannot post a fast number: contended() runs every section exactly once; in handoff() the two coroutines
 * strictly alternate; the uncontended loops never suspend; WaiterSet's waiters are all suspended after fill().
 * The work is deterministic (a per-coroutine xorshift), so ours and the peers do exactly the same work.
 */
package dev.semaphore.benchmarks

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import kotlin.coroutines.Continuation
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.coroutines.intrinsics.COROUTINE_SUSPENDED
import kotlin.coroutines.intrinsics.startCoroutineUninterceptedOrReturn
import dev.semaphore.Lock as OurLock
import dev.semaphore.withPermit
import kotlinx.coroutines.sync.withPermit
import dev.semaphore.Semaphore as OurSemaphore
import kotlinx.coroutines.sync.Mutex as KotlinxMutex
import kotlinx.coroutines.sync.Semaphore as KotlinxSemaphore

public object Workloads {
    /** Steps an xorshift64 generator from [state] until it draws a multiple of [mean]: geometric, mean [mean] steps. */
    @JvmStatic public fun geometricWork(state: Long, mean: Int): Long {
        var x = state
        do {
            x = x xor (x shl 13)
            x = x xor (x ushr 7)
            x = x xor (x shl 17)
        } while ((x ushr 1) % mean != 0L)
        return x
    }

    /** A non-zero generator seed for caller [index]. */
    @JvmStatic public fun seed(index: Int): Long = (index + 1L) * -0x61c8864680b583ebL

    /** Caller [i]'s share when [total] items are split over [callers]. */
    @JvmStatic public fun share(total: Int, callers: Int, i: Int): Int = total / callers + if (i < total % callers) 1 else 0

    /**
     * [sections] critical sections split over [coroutines] coroutines on [dispatcher], each with work of mean
     * [workOutside] before acquiring and [workInside] while holding. Returns the work's digest.
     */
    @JvmStatic public fun contended(
        permits: SuspendPermits, dispatcher: CoroutineDispatcher, coroutines: Int, sections: Int, workInside: Int, workOutside: Int,
    ): Long = runBlocking {
        require(coroutines >= 1) { "coroutines must be >= 1, was $coroutines" }
        val done = IntArray(coroutines)
        val digest = LongArray(coroutines)
        List(coroutines) { i ->
            launch(dispatcher) {
                var x = seed(i)
                repeat(share(sections, coroutines, i)) {
                    x = section(permits, i, x, workInside, workOutside)
                    done[i]++
                }
                digest[i] = x
            }
        }.joinAll()
        check(done.sum() == sections) { "ran ${done.sum()} critical sections, expected $sections" }
        digest.sum()
    }

    /** One platform thread's [sections] sections in its own runBlocking (as [contended]); returns the digest. */
    @JvmStatic public fun sectionsInRunBlocking(permits: SuspendPermits, caller: Int, sections: Int, workInside: Int, workOutside: Int): Long =
        runBlocking {
            var x = seed(caller)
            repeat(sections) { x = section(permits, caller, x, workInside, workOutside) }
            x
        }

    /** One critical section; inline so that it adds no suspend frame (and no allocation) to its callers' loops. */
    @Suppress("NOTHING_TO_INLINE")
    private suspend inline fun section(permits: SuspendPermits, caller: Int, state: Long, workInside: Int, workOutside: Int): Long {
        val x = geometricWork(state, workOutside)
        permits.acquire(caller)
        try {
            return geometricWork(x, workInside)
        } finally {
            permits.release()
        }
    }

    /**
     * Two coroutines on runBlocking's thread strictly alternate [iterations] acquire/release steps on a one-permit
     * [permits] that starts held (both queue before the first hand-over). Returns the number of steps.
     */
    @JvmStatic public fun handoff(permits: SuspendPermits, iterations: Int): Int = runBlocking {
        permits.acquire(0)
        var steps = 0
        var last = -1
        val jobs = List(2) { id ->
            launch {
                repeat(iterations / 2) {
                    permits.acquire(id)
                    check(last != id) { "coroutine $id entered twice in a row at step $steps: no strict alternation" }
                    last = id
                    steps++
                    permits.release()
                }
            }
        }
        yield() // both coroutines run to their first acquire and queue behind the held permit
        permits.release()
        jobs.joinAll()
        check(steps == iterations / 2 * 2) { "ran $steps steps, expected ${iterations / 2 * 2}" }
        steps
    }

    // The uncontended loops: n acquire + release in one coroutine that must never suspend.

    @JvmStatic public fun oursSemaphoreLoop(s: OurSemaphore, n: Int): Unit = runUnsuspended { repeat(n) { s.acquire(1); s.release(1) } }
    @JvmStatic public fun kotlinxSemaphoreLoop(s: KotlinxSemaphore, n: Int): Unit = runUnsuspended { repeat(n) { s.acquire(); s.release() } }
    @JvmStatic public fun oursLockLoop(l: OurLock, n: Int): Unit = runUnsuspended { repeat(n) { l.lock(null); l.unlock(null) } }
    @JvmStatic public fun kotlinxMutexLoop(m: KotlinxMutex, n: Int): Unit = runUnsuspended { repeat(n) { m.lock(null); m.unlock(null) } }

    /** The scoped form (withPermit), n times: ours names its coroutine at the release only while observed. */
    @JvmStatic public fun oursWithPermitLoop(s: OurSemaphore, n: Int): Unit = runUnsuspended { repeat(n) { s.withPermit { } } }
    @JvmStatic public fun kotlinxWithPermitLoop(s: KotlinxSemaphore, n: Int): Unit = runUnsuspended { repeat(n) { s.withPermit { } } }

    /** [SuspendCycle.cycle] (acquire + release behind a one-method interface) [n] times. */
    @JvmStatic public fun suspendCycleLoop(c: SuspendCycle, n: Int): Unit = runUnsuspended { repeat(n) { c.cycle() } }

    private fun runUnsuspended(block: suspend () -> Unit) {
        check(block.startCoroutineUninterceptedOrReturn(NEVER_RESUMED) !== COROUTINE_SUSPENDED) { "the loop suspended: the acquisition was not uncontended" }
    }

    private val NEVER_RESUMED = Continuation<Unit>(EmptyCoroutineContext) { throw IllegalStateException("an uncontended loop was resumed asynchronously: $it") }
}

/** Coroutines with no parent Job, on Unconfined (each runs in the thread that wakes it). */
private object RootUnconfined : CoroutineScope { override val coroutineContext: CoroutineContext = Dispatchers.Unconfined }

/**
 * [size] coroutines suspended in [SuspendPermits.acquire] of a primitive with no free permit. The constructor
 * allocates the Job array and [fill] the coroutines, so that a memory probe can measure them apart.
 */
public class WaiterSet(private val permits: SuspendPermits, public val size: Int) {
    private val jobs = arrayOfNulls<Job>(size)

    /** Starts the coroutines; each runs at once until it is queued in acquire. */
    public fun fill(): WaiterSet {
        for (i in 0 until size) {
            jobs[i] = RootUnconfined.launch(start = CoroutineStart.UNDISPATCHED) {
                permits.acquire(i)
                permits.release()
            }
        }
        val q = permits.queued
        check(q == -1 || q == size) { "expected $size queued waiters, found $q" }
        for (j in jobs) check(j!!.isActive && !j.isCompleted) { "a waiter did not suspend" }
        return this
    }

    /** Cancels [count] waiters spread evenly over the line (every size/count-th, from the head). */
    public fun cancelSpread(count: Int) {
        val step = size / count
        for (k in 0 until count) jobs[k * step]!!.cancel()
    }

    /** Checks that exactly the waiters of [cancelSpread] ([count]) are cancelled and completed and the rest wait. */
    public fun verifyCancelled(count: Int) {
        val step = size / count
        for (k in 0 until count) {
            check(jobs[k * step]!!.let { it.isCancelled && it.isCompleted }) { "waiter ${k * step} was not cancelled and completed" }
        }
        val q = permits.queued
        check(q == -1 || q == size - count) { "expected ${size - count} queued waiters after cancelling $count, found $q" }
    }

    public fun cancelAll() { for (j in jobs) j?.cancel() }
}
