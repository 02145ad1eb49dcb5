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
