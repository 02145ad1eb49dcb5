package dev.semaphore

/**
 * Thrown to every waiter queued on a [Semaphore] or [PrioritySemaphore] when it is closed, and by
 * every acquisition attempted after that. [cause] is the cause passed to `close`, if any.
 *
 * ```kotlin
 * try { semaphore.acquire() } catch (e: SemaphoreClosedException) { log("shutting down", e.cause) }
 * ```
 */
public class SemaphoreClosedException(message: String, cause: Throwable?) : IllegalStateException(message, cause) {
    /** Creates the exception for a semaphore closed with [cause] (null when closed without one). */
    public constructor(cause: Throwable?) : this(
        if (cause == null) "the semaphore is closed" else "the semaphore is closed: $cause",
        cause,
    )
}
