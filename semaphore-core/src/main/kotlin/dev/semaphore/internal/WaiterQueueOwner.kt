package dev.semaphore.internal

/**
 * Implemented by the engine-backed primitives ([dev.semaphore.Semaphore], [dev.semaphore.Lock],
 * [dev.semaphore.PrioritySemaphore] made by the library's factories) so that the library's other
 * front-ends (the Java API) can queue on the same [WaiterQueue]. Part of the internal SPI.
 */
@InternalSemaphoreApi
public interface WaiterQueueOwner {
    /** The queue every front-end of this primitive shares. */
    public val waiterQueue: WaiterQueue
}
