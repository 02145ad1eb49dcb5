/*
 * A write request of a ReadWriteLock with ReadWritePolicy.WRITERS_LINE as a future (for the JVM bridge):
 * the writers' line, then the lock's line (ReadWriteLockImpl.kt, WL1), delivered into one future. Each
 * line has its own waiter and follows the one waiter protocol (WaiterQueue.kt, W1-W4); the future ties
 * them together by three rules of its own:
 * F1  `stage` is the waiter of the line the request stands in now. The second waiter is written there
 *     before its offer, and refuses to queue (mayQueue) once the future is done.
 * F2  Completing the future yourself (cancel, complete, completeExceptionally, orTimeout's timer)
 *     withdraws the stage before the completion, as every GrantFuture does, and again after it: the
 *     offer of the second waiter either sees the future done (F1) or is in `stage` by then. So a
 *     withdrawn request never stays in the lock's line.
 * F3  The writers' line's permit, once granted, is given back exactly once (`line` 1 -> 2; WL2's count
 *     of a writer that took it without waiting ends there too, if nothing ended it before), by the
 *     first of: the write granted (before the future is delivered), the second waiter failed (closed),
 *     withdrawn, dropped by the lock's line because the future was done when its turn came (W1: the
 *     claim refused, no callback; the withdrawal that follows every completion sees it CANCELLED), or
 *     never queued because the future was done, and the writers' line's grant finding the future
 *     already done. So at most one writer is on its way (WL1), and nothing is held by a future
 *     that is not delivered: a write granted to a future completed meanwhile is handed back (W3).
 */
@file:OptIn(InternalSemaphoreApi::class)

package dev.semaphore.internal

import dev.semaphore.ReadWriteLockImpl
import dev.semaphore.bridge.InternalSemaphoreApi
import dev.semaphore.bridge.LockHold
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater

internal class WritersLineFuture<T>(
    private val lock: ReadWriteLockImpl,
    private val writersLine: WaiterQueue,
    private val hold: LockHold,
    /** Who asked, if the lock was observed then (JavaHolds.kt, J2). */
    private val who: Requester?,
    private val onGrant: (LockHold) -> T,
) : GrantFuture<T>() {
    /** F1. */
    @Volatile
    private var stage: PermitWaiter? = null

    /** F3: 0 before the writers' line granted its permit, 1 while held, 2 once given back. */
    @Volatile
    private var line = 0

    /** Who asked, made on the caller's thread (the second offer may run on another): [who], else made now. */
    private val requester = who ?: Requester.ofThread(null, Requester.FUTURE)

    /** Offers the request to the writers' line; throws what that offer throws (closed), nothing queued. */
    fun start(): WritersLineFuture<T> {
        if (lock.takeWritersLine(writersLine)) { // WL2: counted until it reaches the lock's line
            lineGranted()
            return this
        }
        val w = LineWaiter()
        stage = w
        if (writersLine.enqueue(w)) lineGranted()
        return this
    }

    /** The writers' line granted its permit: on to the lock's line (F1, F3). */
    private fun lineGranted() {
        line = 1
        if (isDone) return releaseLine()
        val w = WriteWaiter()
        stage = w
        val granted = try {
            lock.waiterQueue.enqueue(w)
        } catch (e: Throwable) { // closed meanwhile: nothing queued
            releaseLine()
            fail(e)
            return
        }
        if (granted) writeGranted(w) else if (w.status == PermitWaiter.CANCELLED) releaseLine()
    }

    private fun writeGranted(w: PermitWaiter) {
        releaseLine()
        val handle = onGrant(hold)
        if (!deliver(handle)) return w.handBack() // W3: completed by someone else meanwhile
        if (who != null) Leaks.watch(lock.waiterQueue, handle, hold, lock.total, who) // JavaHolds.kt, J4
    }

    /** F3: once. */
    private fun releaseLine() {
        if (LINE.compareAndSet(this, 1, 2)) {
            lock.joined() // WL2, before the next holder can take the permit
            writersLine.release(1)
        }
    }

    /**
     * F2: the stage leaves its line. A second waiter out of the lock's line without a grant gives the
     * writers' line back (F3): withdrawn here, or dropped by the lock's line because this future was
     * done when its turn came (W1: its claim refused, no callback), in which case cancel returns false.
     */
    override fun withdraw(timedOut: Boolean) {
        val w = stage ?: return
        w.queue.cancel(w, timedOut)
        if (w.queue === lock.waiterQueue && w.status == PermitWaiter.CANCELLED) releaseLine()
    }

    override fun complete(value: T): Boolean = super.complete(value).also { withdraw(false) }

    override fun completeExceptionally(ex: Throwable): Boolean =
        super.completeExceptionally(ex).also { withdraw(timedOut = ex is TimeoutException) }

    override fun cancel(mayInterruptIfRunning: Boolean): Boolean = super.cancel(mayInterruptIfRunning).also { withdraw(false) }

    /** The request in the writers' line. */
    private inner class LineWaiter : PermitWaiter(1, lock.writersLineRequests) {
        override fun tryClaim(): Boolean = !isDone

        override fun requester(): Requester = this@WritersLineFuture.requester

        override fun onGranted() = lineGranted()

        override fun onFailed(cause: Throwable) {
            fail(cause)
        }
    }

    /** The request in the lock's line, made by the writers' line's grant (F1). */
    private inner class WriteWaiter : PermitWaiter(lock.total, lock.writeRequests) {
        override fun tryClaim(): Boolean = !isDone

        override fun mayQueue(): Boolean = !isDone

        override fun requester(): Requester = this@WritersLineFuture.requester

        override fun onGranted() = writeGranted(this)

        override fun onFailed(cause: Throwable) {
            releaseLine()
            fail(cause)
        }
    }

    private companion object {
        val LINE: AtomicIntegerFieldUpdater<WritersLineFuture<*>> =
            AtomicIntegerFieldUpdater.newUpdater(WritersLineFuture::class.java, "line")
    }
}
