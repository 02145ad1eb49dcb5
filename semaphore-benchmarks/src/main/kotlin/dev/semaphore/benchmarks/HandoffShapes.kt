/*
 * The hand-off in each dispatcher shape (HandoffShapesBenchmark): a waiter coroutine acquires in a loop on a
 * one-permit primitive that the runBlocking body holds, and the body releases, once per step, after the waiter has
 * taken the previous grant. Each release finds the waiter queued (on one thread: always; on another: unless it has not
 * come back to acquire yet, when its next acquire takes the permit at once), so every step is one grant handed from a
 * releaser to a waiter and the waiter's resumption on its dispatcher.
 */
package dev.semaphore.benchmarks

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import dev.semaphore.Lock as OurLock
import dev.semaphore.Semaphore as OurSemaphore
import kotlinx.coroutines.sync.Mutex as KotlinxMutex
import kotlinx.coroutines.sync.Semaphore as KotlinxSemaphore

public object HandoffShapes {
    /**
     * The waiter's context in [shape]: "unconfined" (Dispatchers.Unconfined: it runs inside the release),
     * "eventLoop" (runBlocking's own loop, as the body), "default" (Dispatchers.Default: another thread) or
     * "singleThread" ([single], a thread of its own).
     */
    @JvmStatic public fun waiterContext(shape: String, single: CoroutineDispatcher): CoroutineContext = when (shape) {
        "unconfined" -> Dispatchers.Unconfined
        "eventLoop" -> EmptyCoroutineContext
        "default" -> Dispatchers.Default
        "singleThread" -> single
        else -> throw IllegalArgumentException("unknown waiter shape '$shape' (expected unconfined, eventLoop, default or singleThread)")
    }

    /**
     * [steps] hand-offs of a one-permit semaphore (or a lock, [lock]) of [impl] ("ours" or "kotlinx"), called
     * directly on its class or behind [SuspendPermits] ([call]: "direct" or "interface"), to a waiter in [waiter].
     */
    @JvmStatic public fun run(impl: String, lock: Boolean, call: String, waiter: CoroutineContext, steps: Int): Int = when (call) {
        "interface" -> {
            val p = if (lock) Primitives.lock(impl, false) else Primitives.semaphore(impl, 1)
            loop(waiter, steps, { p.acquire(0) }, { p.release() })
        }
        "direct" -> when (impl) {
            "ours" -> if (lock) {
                val l = OurLock()
                loop(waiter, steps, { l.lock(null) }, { l.unlock(null) })
            } else {
                val s = OurSemaphore(1)
                loop(waiter, steps, { s.acquire(1) }, { s.release(1) })
            }
            "kotlinx" -> if (lock) {
                val m = KotlinxMutex()
                loop(waiter, steps, { m.lock(null) }, { m.unlock(null) })
            } else {
                val s = KotlinxSemaphore(1)
                loop(waiter, steps, { s.acquire() }, { s.release() })
            }
            else -> throw IllegalArgumentException("unknown impl '$impl' (expected ours or kotlinx)")
        }
        else -> throw IllegalArgumentException("unknown call '$call' (expected direct or interface)")
    }

    /**
     * [delegate], counting the coroutines it is asked to dispatch (HandoffModesBenchmark): in the hand-off loop, one
     * per step whose release found the waiter queued, none for a step whose waiter took a free permit at once.
     */
    public class CountingDispatcher(private val delegate: CoroutineDispatcher) : CoroutineDispatcher() {
        private val count = AtomicLong()

        /** The dispatches so far. */
        public val dispatches: Long get() = count.get()

        override fun isDispatchNeeded(context: CoroutineContext): Boolean = delegate.isDispatchNeeded(context)

        override fun dispatch(context: CoroutineContext, block: Runnable) {
            count.incrementAndGet()
            delegate.dispatch(context, block)
        }

        override fun toString(): String = "Counting($delegate)"
    }

    /** Inlined into each caller above, so that "direct" calls each primitive's own class, with nothing between. */
    private inline fun loop(waiter: CoroutineContext, steps: Int, crossinline acquire: suspend () -> Unit, crossinline release: () -> Unit): Int =
        runBlocking {
            acquire() // the body holds the only permit: the waiter's first acquire waits
            val taken = AtomicInteger()
            val job = launch(waiter) {
                repeat(steps) {
                    acquire()
                    taken.incrementAndGet()
                }
            }
            yield() // the waiter (on this loop, or already on its own thread) reaches its first acquire
            for (i in 0 until steps) {
                // The permit is held (by the body at first, then by the waiter, which has taken i grants): a release
                // now hands it on, and never makes more permits than one.
                while (taken.get() < i) yield()
                release()
            }
            job.join()
            check(taken.get() == steps) { "the waiter took ${taken.get()} grants, expected $steps" }
            steps
        }
}
