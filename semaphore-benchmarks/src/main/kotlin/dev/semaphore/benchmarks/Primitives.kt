/*
 * The primitives under test, seen through the two operations the contended workloads need.
 *
 * Invariants:
 * - Every adapter forwards to exactly one public call of its primitive (acquire/lock, release/unlock),
 *   with no extra synchronization, so ours and the peers pay the same adapter cost (one interface call).
 * - Impl names are the ones the report divides (the `ratios` of each section of report/report.md): "ours*" are ours;
 *   "kotlinx", "plain", "none", "floor" are the references.
 * - "floor" is a public-API floor (PublicApiFloor.kt): of a hand-off (one permit, at most one waiter) in
 *   [Primitives.semaphore] and [Primitives.lock], of a queue of waiters in the contended* factories.
 */
package dev.semaphore.benchmarks

import kotlinx.coroutines.suspendCancellableCoroutine
import dev.semaphore.Lock as OurLock
import dev.semaphore.PrioritySemaphore as OurPrioritySemaphore
import dev.semaphore.Semaphore as OurSemaphore
import kotlinx.coroutines.sync.Mutex as KotlinxMutex
import kotlinx.coroutines.sync.Semaphore as KotlinxSemaphore

/** A permit source a workload acquires from and releases to. */
public interface SuspendPermits {
    /** Suspends until one permit is held; [caller] is the index of the calling coroutine (used for priorities). */
    public suspend fun acquire(caller: Int)

    /** Gives the permit back. */
    public fun release()

    /** Waiters queued now, or -1 if the primitive does not say. */
    public val queued: Int
}

/** Factories for the [SuspendPermits] of every implementation that the benchmarks compare. */
public object Primitives {
    /**
     * A semaphore of [permits] permits: "ours" (dev.semaphore.Semaphore) or "kotlinx"
     * (kotlinx.coroutines.sync.Semaphore), or "none" (no semaphore: acquire suspends forever, used as the
     * memory baseline of a bare suspended coroutine), or "floor" (the public-API floor of a hand-off, one
     * permit and one waiter at most: [HandoffFloor]). [permits] = 0 means one permit that is already held,
     * so every acquirer queues (a semaphore with a total of 0 would reject the request as never grantable).
     * @throws IllegalArgumentException for an unknown [impl], or "floor" with more than one permit.
     */
    @JvmStatic
    public fun semaphore(impl: String, permits: Int): SuspendPermits = when (impl) {
        "ours" -> OursSemaphorePermits(
            if (permits == 0) OurSemaphore(1).also { check(it.tryAcquire(1)) } else OurSemaphore(permits),
        )
        "kotlinx" -> KotlinxSemaphorePermits(if (permits == 0) KotlinxSemaphore(1, 1) else KotlinxSemaphore(permits))
        "none" -> NoPermits
        "floor" -> {
            require(permits in 0..1) { "the hand-off floor has one permit, asked for $permits" }
            HandoffFloor(held = permits == 0)
        }
        else -> throw IllegalArgumentException("unknown semaphore impl '$impl' (expected ours, kotlinx, none or floor)")
    }

    /** [s] itself, made by the caller (with diagnostics, say), behind the same adapter as [semaphore]'s "ours". */
    @JvmStatic
    public fun of(s: OurSemaphore): SuspendPermits = OursSemaphorePermits(s)

    /**
     * A semaphore of [permits] permits for the contended workloads: as [semaphore], except that "floor" is the
     * public-API floor of a queue of waiters ([QueueFloor]), not of a single hand-off.
     */
    @JvmStatic
    public fun contendedSemaphore(impl: String, permits: Int): SuspendPermits =
        if (impl == "floor") QueueFloor(held = false, permits = permits) else semaphore(impl, permits)

    /**
     * A mutual-exclusion lock, free or (with [locked]) already held: "ours" (dev.semaphore.Lock) or
     * "kotlinx" (kotlinx.coroutines.sync.Mutex), or "floor" (the public-API floor of a hand-off, [HandoffFloor]:
     * a lock is a one-permit semaphore as far as a hand-off goes).
     * @throws IllegalArgumentException for an unknown [impl].
     */
    @JvmStatic
    public fun lock(impl: String, locked: Boolean): SuspendPermits = when (impl) {
        "ours" -> OursLockPermits(OurLock(locked))
        "kotlinx" -> KotlinxMutexPermits(KotlinxMutex(locked))
        "floor" -> HandoffFloor(held = locked)
        else -> throw IllegalArgumentException("unknown lock impl '$impl' (expected ours, kotlinx or floor)")
    }

    /** A lock for the contended workloads: as [lock] (free), except that "floor" is [QueueFloor] with one permit. */
    @JvmStatic
    public fun contendedLock(impl: String): SuspendPermits =
        if (impl == "floor") QueueFloor(held = false, permits = 1) else lock(impl, false)

    /**
     * For the priority benchmark: "plain" is our FIFO Semaphore; "priority-L" is our PrioritySemaphore where
     * coroutine i acquires at priority i % L, so L priority levels are in use.
     * @throws IllegalArgumentException for an unknown [impl] or L < 1.
     */
    @JvmStatic
    public fun prioritized(impl: String, permits: Int): SuspendPermits {
        if (impl == "plain") return OursSemaphorePermits(OurSemaphore(permits))
        val levels = impl.removePrefix("priority-").toIntOrNull()
        require(impl.startsWith("priority-") && levels != null && levels >= 1) {
            "unknown priority impl '$impl' (expected plain or priority-L with L >= 1)"
        }
        return OursPriorityPermits(OurPrioritySemaphore(permits), levels)
    }
}

private class OursSemaphorePermits(val s: OurSemaphore) : SuspendPermits {
    override suspend fun acquire(caller: Int) = s.acquire(1)
    override fun release() = s.release(1)
    override val queued: Int get() = s.queueLength
}

private class KotlinxSemaphorePermits(val s: KotlinxSemaphore) : SuspendPermits {
    override suspend fun acquire(caller: Int) = s.acquire()
    override fun release() = s.release()
    override val queued: Int get() = -1
}

private class OursLockPermits(val l: OurLock) : SuspendPermits {
    override suspend fun acquire(caller: Int) = l.lock(null)
    override fun release() = l.unlock(null)
    override val queued: Int get() = l.queueLength
}

private class KotlinxMutexPermits(val m: KotlinxMutex) : SuspendPermits {
    override suspend fun acquire(caller: Int) = m.lock(null)
    override fun release() = m.unlock(null)
    override val queued: Int get() = -1
}

private class OursPriorityPermits(val s: OurPrioritySemaphore, val levels: Int) : SuspendPermits {
    override suspend fun acquire(caller: Int) = s.acquire(1, priority = caller % levels)
    override fun release() = s.release(1)
    override val queued: Int get() = s.queueLength
}

/** No primitive at all: acquire suspends and is never resumed (only cancellation ends it). */
private object NoPermits : SuspendPermits {
    // Like every primitive's slow path, the inlined suspendCancellableCoroutine gets one continuation frame.
    override suspend fun acquire(caller: Int): Unit = suspendCancellableCoroutine { }

    override fun release() = throw IllegalStateException("nothing to release: NoPermits never grants")
    override val queued: Int get() = -1
}
