/*
 * The coroutine primitives under test, behind one adapter each. Every adapter forwards each operation to exactly one
 * public call of its primitive, with no extra synchronization, so ours and the peers pay the same adapter cost.
 * Impl names are the ones the report divides: "ours" against "kotlinx", "plain", "none" or "floor".
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
    /** Suspends until one permit is held; [caller] is the calling coroutine's index (its priority's source). */
    public suspend fun acquire(caller: Int)
    public fun release()
    /** Waiters queued now, or -1 if the primitive does not say. */
    public val queued: Int
}

public object Primitives {
    /**
     * A semaphore of [permits] permits: "ours", "kotlinx", "floor" ([QueueFloor]) or "none" (acquire suspends
     * forever: the memory baseline of a bare suspended coroutine). [permits] = 0 means one permit already held.
     */
    @JvmStatic public fun semaphore(impl: String, permits: Int): SuspendPermits = when (impl) {
        "ours" -> OursSemaphorePermits(if (permits == 0) OurSemaphore(1).also { check(it.tryAcquire(1)) } else OurSemaphore(permits))
        "kotlinx" -> KotlinxSemaphorePermits(if (permits == 0) KotlinxSemaphore(1, 1) else KotlinxSemaphore(permits))
        "floor" -> QueueFloor(permits)
        "none" -> NoPermits
        else -> throw IllegalArgumentException("unknown semaphore impl '$impl' (expected ours, kotlinx, floor or none)")
    }

    /** [s] itself (made by the caller, with diagnostics say) behind the adapter of [semaphore]'s "ours". */
    @JvmStatic public fun of(s: OurSemaphore): SuspendPermits = OursSemaphorePermits(s)

    /** A lock, free or already [locked]: "ours" (dev.semaphore.Lock) or "kotlinx" (Mutex). */
    @JvmStatic public fun lock(impl: String, locked: Boolean): SuspendPermits = when (impl) {
        "ours" -> OursLockPermits(OurLock(locked))
        "kotlinx" -> KotlinxMutexPermits(KotlinxMutex(locked))
        else -> throw IllegalArgumentException("unknown lock impl '$impl' (expected ours or kotlinx)")
    }

    /** "plain": our FIFO Semaphore; "priority-L": our PrioritySemaphore, coroutine i at priority i % L. */
    @JvmStatic public fun prioritized(impl: String, permits: Int): SuspendPermits {
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

/** No primitive: acquire suspends (one continuation frame, as any slow path) and only cancellation ends it. */
private object NoPermits : SuspendPermits {
    override suspend fun acquire(caller: Int): Unit = suspendCancellableCoroutine { }
    override fun release() = throw IllegalStateException("nothing to release: NoPermits never grants")
    override val queued: Int get() = -1
}
