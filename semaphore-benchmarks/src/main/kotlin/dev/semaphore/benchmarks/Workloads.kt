/*
 * The suspending workloads the Java JMH benchmarks call. Kotlin, because they are coroutine code;
 * the JMH classes stay in Java so that JMH's annotation processor sees them directly.
 *
 * Invariants (each workload checks its own outcome and throws if it is wrong, so a broken primitive
 * cannot produce a fast number):
 * - contended(): every one of the `sections` critical sections runs exactly once.
 * - handoff(): the two coroutines strictly alternate (each section is entered by the other coroutine
 *   than the previous one), so every step is a real suspend-and-hand-over.
 * - the uncontended loops (direct or through SuspendCycle) never suspend (checked: the coroutine must complete
 *   synchronously).
 * - WaiterSet: after fill(), every coroutine is suspended in acquire; cancelSpread(k) cancels k of them,
 *   spread evenly over the line, and each cancelled coroutine has completed when it returns.
 * Work is deterministic: a per-coroutine xorshift generator drawn until a 1-in-mean value (geometric
 * number of steps with the given mean), so ours and the peers do exactly the same work.
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
import dev.semaphore.Semaphore as OurSemaphore
import kotlinx.coroutines.sync.Mutex as KotlinxMutex
import kotlinx.coroutines.sync.Semaphore as KotlinxSemaphore

/** Workloads shared by the benchmarks (static entry points for Java). */
public object Workloads {
    /**
     * Geometric work: steps an xorshift64 generator from [state] until it draws a value divisible by
     * [mean] (so the number of steps is geometric with mean [mean]); returns the new state.
     */
    @JvmStatic
    public fun geometricWork(state: Long, mean: Int): Long {
        var x = state
        do {
            x = x xor (x shl 13)
            x = x xor (x ushr 7)
            x = x xor (x shl 17)
        } while ((x ushr 1) % mean != 0L)
        return x
    }

    /** A non-zero generator seed for coroutine [index]. */
    @JvmStatic
    public fun seed(index: Int): Long = (index + 1L) * -0x61c8864680b583ebL

    /**
     * Runs [sections] critical sections split over [coroutines] coroutines on [dispatcher]; each section
     * does geometric work of mean [workOutside] before acquiring and [workInside] while holding the permit.
     * Returns a digest of the work (for a Blackhole).
     */
    @JvmStatic
    public fun contended(
        permits: SuspendPermits,
        dispatcher: CoroutineDispatcher,
        coroutines: Int,
        sections: Int,
        workInside: Int,
        workOutside: Int,
    ): Long = runBlocking {
        require(coroutines >= 1) { "coroutines must be >= 1, was $coroutines" }
        val done = IntArray(coroutines)
        val digest = LongArray(coroutines)
        val jobs = List(coroutines) { i ->
            val mine = sections / coroutines + if (i < sections % coroutines) 1 else 0
            launch(dispatcher) {
                var x = seed(i)
                repeat(mine) {
                    x = section(permits, i, x, workInside, workOutside)
                    done[i]++
                }
                digest[i] = x
            }
        }
        jobs.joinAll()
        val total = done.sum()
        check(total == sections) { "ran $total critical sections, expected $sections" }
        digest.sum()
    }

    /**
     * One platform thread's share of a [ThreadsBenchmark] run with a suspending primitive: [sections]
     * sections in the thread's own runBlocking (its event loop parks the thread while it waits), the
     * work as in [contended]. Returns the work's digest.
     */
    @JvmStatic
    public fun sectionsInRunBlocking(permits: SuspendPermits, caller: Int, sections: Int, workInside: Int, workOutside: Int): Long =
        runBlocking {
            var x = seed(caller)
            repeat(sections) { x = section(permits, caller, x, workInside, workOutside) }
            x
        }

    /**
     * One critical section of the contended workloads: work of mean [workOutside] on [state], then of mean
     * [workInside] while holding a permit of [permits]. Inline, so that it adds no suspend frame (and no
     * allocation) to the loops that call it.
     */
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
     * Two coroutines on runBlocking's single thread strictly alternate [iterations] acquire/release steps
     * on a one-permit [permits] that starts held (so both queue before the first hand-over). Returns the
     * number of steps.
     */
    @JvmStatic
    public fun handoff(permits: SuspendPermits, iterations: Int): Int = runBlocking {
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

    /** [n] times acquire()+release() of our Semaphore inside one coroutine that must never suspend. */
    @JvmStatic
    public fun oursSemaphoreLoop(s: OurSemaphore, n: Int): Unit = runUnsuspended {
        repeat(n) {
            s.acquire(1)
            s.release(1)
        }
    }

    /** [n] times acquire()+release() of a kotlinx Semaphore inside one coroutine that must never suspend. */
    @JvmStatic
    public fun kotlinxSemaphoreLoop(s: KotlinxSemaphore, n: Int): Unit = runUnsuspended {
        repeat(n) {
            s.acquire()
            s.release()
        }
    }

    /** [n] times lock()+unlock() of our Lock inside one coroutine that must never suspend. */
    @JvmStatic
    public fun oursLockLoop(l: OurLock, n: Int): Unit = runUnsuspended {
        repeat(n) {
            l.lock(null)
            l.unlock(null)
        }
    }

    /** [n] times lock()+unlock() of a kotlinx Mutex inside one coroutine that must never suspend. */
    @JvmStatic
    public fun kotlinxMutexLoop(m: KotlinxMutex, n: Int): Unit = runUnsuspended {
        repeat(n) {
            m.lock(null)
            m.unlock(null)
        }
    }

    /**
     * [n] times [SuspendCycle.cycle] (acquire()+release() behind a one-method interface) inside one coroutine that
     * must never suspend: the interface shape of the suspending loops (UncontendedInterfaceBenchmark).
     */
    @JvmStatic
    public fun suspendCycleLoop(c: SuspendCycle, n: Int): Unit = runUnsuspended {
        repeat(n) { c.cycle() }
    }

    /** Starts [block] on the calling thread and requires it to finish without suspending. */
    private fun runUnsuspended(block: suspend () -> Unit) {
        val result = block.startCoroutineUninterceptedOrReturn(NeverResumed)
        check(result !== COROUTINE_SUSPENDED) { "the loop suspended: the acquisition was not uncontended" }
    }

    /** Completion of an unsuspended loop: it is never resumed, because the loop completes synchronously. */
    private object NeverResumed : Continuation<Unit> {
        override val context: CoroutineContext get() = EmptyCoroutineContext
        override fun resumeWith(result: Result<Unit>) {
            throw IllegalStateException("an uncontended loop was resumed asynchronously: $result")
        }
    }
}

/** Coroutines started without a parent Job, on the Unconfined dispatcher (each runs in the thread that wakes it). */
private object RootUnconfined : CoroutineScope {
    override val coroutineContext: CoroutineContext = Dispatchers.Unconfined
}

/**
 * [size] coroutines suspended in [SuspendPermits.acquire] of a primitive that has no free permit, kept
 * by their Jobs. The array is allocated by the constructor, the coroutines by [fill], so a memory probe
 * can measure the two apart.
 */
public class WaiterSet(private val permits: SuspendPermits, public val size: Int) {
    private val jobs = arrayOfNulls<Job>(size)

    /** Starts the [size] coroutines; each runs at once until it suspends in acquire (it is then queued). */
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

    /** Checks that exactly the [count] waiters of [cancelSpread] are gone and the rest still wait. */
    public fun verifyCancelled(count: Int) {
        val step = size / count
        for (k in 0 until count) {
            val j = jobs[k * step]!!
            check(j.isCancelled && j.isCompleted) { "waiter ${k * step} was not cancelled and completed" }
        }
        val q = permits.queued
        check(q == -1 || q == size - count) { "expected ${size - count} queued waiters after cancelling $count, found $q" }
    }

    /** Cancels every waiter still queued (to free the primitive after a measurement). */
    public fun cancelAll() {
        for (j in jobs) j?.cancel()
    }
}
