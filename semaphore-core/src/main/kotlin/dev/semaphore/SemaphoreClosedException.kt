package dev.semaphore

import kotlinx.coroutines.CopyableThrowable
import kotlinx.coroutines.ExperimentalCoroutinesApi

/**
 * Thrown to every waiter queued on a [Semaphore], [PrioritySemaphore], [Lock] or [ReadWriteLock] when it
 * is closed, and by every acquisition attempted after that (one type for every primitive, so one
 * `catch` covers them all; a Lock is a semaphore of one permit). [cause] is the cause passed to `close`,
 * if any.
 *
 * ```kotlin
 * try { semaphore.acquire() } catch (e: SemaphoreClosedException) { log("shutting down", e.cause) }
 * ```
 *
 * When kotlinx.coroutines recovers stack traces (debug mode), its copy keeps the same [cause], so
 * `e.cause` is always the cause given to `close`.
 */
@OptIn(ExperimentalCoroutinesApi::class)
public class SemaphoreClosedException(message: String, cause: Throwable?) :
    IllegalStateException(message, cause), CopyableThrowable<SemaphoreClosedException> {

    /** Creates the exception for a semaphore closed with [cause] (null when closed without one). */
    public constructor(cause: Throwable?) : this(
        if (cause == null) "the semaphore is closed" else "the semaphore is closed: $cause",
        cause,
    )

    /** A copy with the same message and cause, for kotlinx.coroutines' stack-trace recovery. */
    override fun createCopy(): SemaphoreClosedException = SemaphoreClosedException(message!!, cause)
}
