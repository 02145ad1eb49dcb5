/*
 * UncontendedInterfaceBenchmark's cycles: the same operations as UncontendedBenchmark's direct rows, on a semaphore of
 * one permit, called through a one-method interface (the shape of an independent harness). "floor" is ExactCasFloor
 * behind kotlinx's cycle classes, so its calls are exactly kotlinx's.
 */
package dev.semaphore.benchmarks

import dev.semaphore.Semaphore as OurSemaphore
import kotlinx.coroutines.sync.Semaphore as KotlinxSemaphore

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
    override fun cycle(): Boolean {
        if (!s.tryAcquire()) return false
        s.release()
        return true
    }
    override val available: Int get() = s.availablePermits
}

private class KotlinxTryCycle(private val s: KotlinxSemaphore) : TryCycle {
    override fun cycle(): Boolean {
        if (!s.tryAcquire()) return false
        s.release()
        return true
    }
    override val available: Int get() = s.availablePermits
}

private class OursSuspendCycle(private val s: OurSemaphore) : SuspendCycle {
    override suspend fun cycle() {
        s.acquire()
        s.release()
    }
    override val available: Int get() = s.availablePermits
}

private class KotlinxSuspendCycle(private val s: KotlinxSemaphore) : SuspendCycle {
    override suspend fun cycle() {
        s.acquire()
        s.release()
    }
    override val available: Int get() = s.availablePermits
}
