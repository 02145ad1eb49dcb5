/*
 * What the scoped forms' inline bodies (withPermit, withReadLock) call at their release, so that it names the
 * coroutine whose hold it ends (internal/Observer.kt, H2). Published ABI of those inline functions, not API: the
 * names say they are the library's own.
 */
package dev.semaphore

import dev.semaphore.internal.WaiterQueue
import dev.semaphore.internal.WaiterQueueOwner
import kotlin.jvm.JvmSynthetic

/**
 * For the scoped forms' inline bodies (withPermit, withReadLock): true while [primitive] is observed, so
 * that the release names the coroutine's Job (Observer.kt, H2); false, and nothing else read, otherwise.
 */
@PublishedApi
@JvmSynthetic
internal fun releaseNamesCaller(primitive: Any): Boolean = when (primitive) {
    // A semaphore is its engine (QueueBackedPool): a class test, which the JIT makes one compare of the object's
    // class words, before the interface test a ReadWriteLock needs (a search of the class's interfaces).
    is WaiterQueue -> primitive.observer != null
    is WaiterQueueOwner -> primitive.waiterQueue.observer != null
    else -> false
}

/** A scoped form's release of [permits] of [pool], naming the coroutine of [context] (Observer.kt, H2). */
@PublishedApi
@JvmSynthetic
internal fun releaseFromScope(pool: PermitPool, permits: Int, context: kotlin.coroutines.CoroutineContext) {
    val queue = (pool as? WaiterQueueOwner)?.waiterQueue
    if (queue == null) pool.release(permits) else queue.releaseNamed(permits, context[kotlinx.coroutines.Job])
}

/** withReadLock's unlockRead, naming the coroutine of [context] (Observer.kt, H2). */
@PublishedApi
@JvmSynthetic
internal fun unlockReadFromScope(lock: ReadWriteLock, context: kotlin.coroutines.CoroutineContext) {
    val impl = lock as? ReadWriteLockImpl
    if (impl == null) lock.unlockRead() else impl.unlockRead(context[kotlinx.coroutines.Job])
}
