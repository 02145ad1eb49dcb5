package dev.semaphore.internal

/**
 * Implemented by the engine-backed primitives ([dev.semaphore.Semaphore], [dev.semaphore.Lock],
 * [dev.semaphore.PrioritySemaphore] made by the library's factories): the queue that every way of
 * waiting for this primitive (coroutines, futures, threads) shares.
 */
internal interface WaiterQueueOwner {
    /** The queue every front-end of this primitive shares. */
    val waiterQueue: WaiterQueue
}

/** The error for a primitive that another implementation of the interface made: it has no queue to share. */
internal fun notEngineBacked(primitive: Any): IllegalArgumentException = IllegalArgumentException(
    "$primitive (${primitive::class.qualifiedName}) is not made by the dev.semaphore factories, so it has no waiter queue to share",
)

/**
 * The `key` of a release that ends the one hold of its size (Observer.kt, H2): a ReadWriteLock's write hold
 * and upgradable read, of which there is at most one, each of a size no other hold has.
 */
internal val RELEASE_BY_SIZE: Any = Any()

/**
 * For the scoped forms' inline bodies (withPermit, withReadLock): true while [primitive] is observed, so
 * that the release names the coroutine's Job (Observer.kt, H2); false, and nothing else read, otherwise.
 */
@PublishedApi
internal fun releaseNamesCaller(primitive: Any): Boolean = (primitive as? WaiterQueueOwner)?.waiterQueue?.observer != null

/** A scoped form's release of [permits] of [pool], naming the coroutine of [context] (Observer.kt, H2). */
@PublishedApi
internal fun releaseFromScope(pool: dev.semaphore.PermitPool, permits: Int, context: kotlin.coroutines.CoroutineContext) {
    val queue = (pool as? WaiterQueueOwner)?.waiterQueue
    if (queue == null) pool.release(permits) else queue.releaseNamed(permits, context[kotlinx.coroutines.Job])
}

/** withReadLock's unlockRead, naming the coroutine of [context] (Observer.kt, H2). */
@PublishedApi
internal fun unlockReadFromScope(lock: dev.semaphore.ReadWriteLock, context: kotlin.coroutines.CoroutineContext) {
    val impl = lock as? dev.semaphore.ReadWriteLockImpl
    if (impl == null) lock.unlockRead() else impl.unlockRead(context[kotlinx.coroutines.Job])
}
