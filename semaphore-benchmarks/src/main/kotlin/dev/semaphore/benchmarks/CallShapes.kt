/*
 * CallShapesBenchmark's call shapes, ours and kotlinx's Semaphore behind the same code: Sem, an interface with a
 * one-line wrapper per implementation; a Holder, the semaphore in a field of another class, called directly; loops in
 * runBlocking, in a coroutine launched from it, and through a suspend lambda. Then UncontendedInterfaceBenchmark's
 * cycles: UncontendedBenchmark's direct rows on a semaphore of one permit, through a one-method interface (the shape of
 * an independent harness); "floor" is ExactCasFloor behind kotlinx's cycle classes, so its calls are exactly kotlinx's.
 */
package dev.semaphore.benchmarks

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import dev.semaphore.Semaphore as OurSemaphore
import kotlinx.coroutines.sync.Semaphore as KotlinxSemaphore

public interface Sem {
    public suspend fun acquire()
    public fun tryAcquire(): Boolean
    public fun release()
    public val available: Int
}

private class OursSem(private val s: OurSemaphore) : Sem {
    override suspend fun acquire() = s.acquire()
    override fun tryAcquire() = s.tryAcquire()
    override fun release() = s.release()
    override val available: Int get() = s.availablePermits
}

private class KotlinxSem(private val s: KotlinxSemaphore) : Sem {
    override suspend fun acquire() = s.acquire()
    override fun tryAcquire() = s.tryAcquire()
    override fun release() = s.release()
    override val available: Int get() = s.availablePermits
}

public object CallShapes {
    @JvmStatic public fun sem(impl: String, permits: Int): Sem = when (impl) {
        "ours" -> OursSem(OurSemaphore(permits))
        "kotlinx" -> KotlinxSem(KotlinxSemaphore(permits))
        else -> throw IllegalArgumentException("unknown impl '$impl' (expected ours or kotlinx)")
    }

    /** runBlocking { repeat(n) { acquire(); release() } }. */
    @JvmStatic public fun runBlockingLoop(sem: Sem, n: Int): Unit = runBlocking { repeat(n) { sem.acquire(); sem.release() } }

    /** The same loop in a coroutine launched from runBlocking. */
    @JvmStatic public fun launchLoop(sem: Sem, n: Int): Unit = runBlocking { launch { repeat(n) { sem.acquire(); sem.release() } } }

    /** The loop calling a suspend lambda that does acquire() + release(). */
    @JvmStatic public fun lambdaLoop(sem: Sem, n: Int): Unit = runBlocking {
        val section: suspend () -> Unit = { sem.acquire(); sem.release() }
        repeat(n) { section() }
    }

    /** Hand-off, no permit free at the start: a coroutine on Unconfined acquires n times; the other releases n times, yielding after each. */
    @JvmStatic public fun handoff(sem: Sem, n: Int): Unit = runBlocking {
        val taker = launch(Dispatchers.Unconfined) { repeat(n) { sem.acquire() } }
        repeat(n) {
            sem.release()
            yield()
        }
        taker.join()
    }
}

/** Our semaphore in a field of another class: tryAcquire() + release(), and the runBlocking loop. */
public class OursHolder(permits: Int) {
    private val s = OurSemaphore(permits)
    public fun cycle(): Boolean = s.tryAcquire().also { if (it) s.release() }
    public fun runBlockingLoop(n: Int): Unit = runBlocking { repeat(n) { s.acquire(); s.release() } }
}

/** kotlinx's semaphore in a field of another class, as [OursHolder]. */
public class KotlinxHolder(permits: Int) {
    private val s = KotlinxSemaphore(permits)
    public fun cycle(): Boolean = s.tryAcquire().also { if (it) s.release() }
    public fun runBlockingLoop(n: Int): Unit = runBlocking { repeat(n) { s.acquire(); s.release() } }
}

/** tryAcquire() + release(): true if the try succeeded. */
public interface TryCycle {
    public fun cycle(): Boolean
    public val available: Int
}

/** acquire() + release(), in a coroutine that must never suspend. */
public interface SuspendCycle {
    public suspend fun cycle()
    public val available: Int
}

/** The cycles by impl name: "ours", "kotlinx" or "floor". */
public object Cycles {
    @JvmStatic public fun tryCycle(impl: String): TryCycle = when (impl) {
        "ours" -> OursTryCycle(OurSemaphore(1))
        "kotlinx" -> KotlinxTryCycle(KotlinxSemaphore(1))
        "floor" -> KotlinxTryCycle(ExactCasFloor(1))
        else -> throw IllegalArgumentException("unknown cycle impl '$impl' (expected ours, kotlinx or floor)")
    }

    @JvmStatic public fun suspendCycle(impl: String): SuspendCycle = when (impl) {
        "ours" -> OursSuspendCycle(OurSemaphore(1))
        "kotlinx" -> KotlinxSuspendCycle(KotlinxSemaphore(1))
        "floor" -> KotlinxSuspendCycle(ExactCasFloor(1))
        else -> throw IllegalArgumentException("unknown cycle impl '$impl' (expected ours, kotlinx or floor)")
    }
}

private class OursTryCycle(private val s: OurSemaphore) : TryCycle {
    override fun cycle(): Boolean { if (!s.tryAcquire()) return false; s.release(); return true }
    override val available: Int get() = s.availablePermits
}

private class KotlinxTryCycle(private val s: KotlinxSemaphore) : TryCycle {
    override fun cycle(): Boolean { if (!s.tryAcquire()) return false; s.release(); return true }
    override val available: Int get() = s.availablePermits
}

private class OursSuspendCycle(private val s: OurSemaphore) : SuspendCycle {
    override suspend fun cycle() { s.acquire(); s.release() }
    override val available: Int get() = s.availablePermits
}

private class KotlinxSuspendCycle(private val s: KotlinxSemaphore) : SuspendCycle {
    override suspend fun cycle() { s.acquire(); s.release() }
    override val available: Int get() = s.availablePermits
}
