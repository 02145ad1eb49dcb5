/*
 * The uncontended cycles behind a one-method interface, the shape of the independent harness of issue 11
 * (UncontendedInterfaceBenchmark): the benchmark calls TryCycle.cycle() or SuspendCycle.cycle(), and the
 * implementation behind it (ours, kotlinx, floor) is chosen per fork by a JMH @Param.
 *
 * Invariants:
 * - Every implementation does the same operations as the direct-call rows of UncontendedBenchmark (tryAcquire +
 *   release, or the suspending acquire + release), on a semaphore of one permit, and nothing else.
 * - TryCycle.cycle() returns whether the try succeeded (the harness hands it to JMH's Blackhole); the benchmark
 *   checks at the end of every iteration that a cycle still succeeds and the permit is back.
 * - "floor" is UncontendedBenchmark's floor (ExactCasFloor: one exact CAS of a 64-bit word on each side), called by kotlinx's
 *   cycle classes, so its calls are exactly kotlinx's.
 */
package dev.semaphore.benchmarks

import dev.semaphore.Semaphore as OurSemaphore
import kotlinx.coroutines.sync.Semaphore as KotlinxSemaphore

/** One uncontended cycle, tryAcquire() + release(): true if the try succeeded (and the permit was given back). */
public interface TryCycle {
    public fun cycle(): Boolean

    /** Permits free now (for the end-of-iteration check). */
    public val available: Int
}

/** One uncontended suspending cycle, acquire() + release(), called in a coroutine that must never suspend. */
public interface SuspendCycle {
    public suspend fun cycle()

    /** Permits free now (for the end-of-iteration check). */
    public val available: Int
}

/** The cycles by impl name: "ours", "kotlinx" or "floor" (see the file comment). */
public object Cycles {
    /** @throws IllegalArgumentException for an unknown [impl]. */
    @JvmStatic
    public fun tryCycle(impl: String): TryCycle = when (impl) {
        "ours" -> OursTryCycle(OurSemaphore(1))
        "kotlinx" -> KotlinxTryCycle(KotlinxSemaphore(1))
        "floor" -> KotlinxTryCycle(ExactCasFloor(1))
        else -> throw IllegalArgumentException("unknown cycle impl '$impl' (expected ours, kotlinx or floor)")
    }

    /** @throws IllegalArgumentException for an unknown [impl]. */
    @JvmStatic
    public fun suspendCycle(impl: String): SuspendCycle = when (impl) {
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
