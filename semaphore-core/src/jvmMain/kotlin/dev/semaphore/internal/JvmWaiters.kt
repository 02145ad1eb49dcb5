/*
 * The two JVM kinds of waiter: a pending CompletableFuture and a parked thread. They follow the one
 * waiter protocol stated at the top of WaiterQueue.kt (W1..W4); what is specific to each:
 *
 * FutureWaiter (W1) claims by checking that nobody completed its future yet. (W2) Whoever completes
 * the future first (the caller's cancel/complete/completeExceptionally, orTimeout's timer) withdraws
 * the waiter: GrantFuture's completion methods call cancel(w) before they complete it. (W3) A caller that
 * completes the future after the claim but before onGranted does makes onGranted's completion fail:
 * the permits are handed back. GrantFuture refuses obtrudeValue/obtrudeException, which could
 * overwrite a delivered grant and lose its permits.
 *
 * BlockingWaiter's state: WAITING -> CLAIMED (the engine, W1) -> DELIVERED (onGranted unparks) or
 * TAKEN (the thread saw the claim first and waited through cancel() for the grant to finish, W1);
 * WAITING -> GAVE_UP (the thread, on interrupt or deadline: the claim then fails, W1);
 * WAITING -> FAILED (onFailed). Every transition is a CAS, so the thread and the engine agree on who
 * won. (W3) A thread interrupted after the claim hands
 * the permits back: InterruptedException always means nothing is held. It parks with LockSupport only,
 * so a virtual thread unmounts from its carrier while it waits.
 */
@file:OptIn(InternalSemaphoreApi::class)

package dev.semaphore.internal

import dev.semaphore.bridge.InternalSemaphoreApi
import dev.semaphore.bridge.LockHold
import java.util.concurrent.CompletableFuture
import java.util.concurrent.Executor
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater
import java.util.concurrent.locks.LockSupport
import java.util.function.Supplier

/**
 * The future handed out for a request; completing it yourself withdraws the request (W2). Its only
 * field beyond CompletableFuture's is [waiter], so a pending request costs this future and its
 * [FutureWaiter]; a request with a withdrawal hook (an upgrade's) uses [HookedGrantFuture].
 */
internal open class GrantFuture<T> : CompletableFuture<T>() {
    /** The waiter to withdraw; null when the request was settled without queueing. */
    @JvmField
    var waiter: PermitWaiter? = null

    /** Completes with the grant's value, bypassing the withdrawal; false if someone completed it first. */
    fun deliver(value: T): Boolean = super.complete(value)

    /** Fails the request (the engine's onFailed: closed; nothing is held), bypassing the withdrawal. */
    open fun fail(cause: Throwable): Boolean = super.completeExceptionally(cause)

    /**
     * W2, before the completion: whoever then sees the future done also sees the request out of the
     * line. If the request was already granted, the completion below may still win the future, and
     * onGranted then hands the permits back (W3).
     */
    protected open fun withdraw(timedOut: Boolean = false) {
        val w = waiter ?: return
        w.queue.cancel(w, timedOut)
    }

    override fun complete(value: T): Boolean {
        withdraw()
        return super.complete(value)
    }

    override fun completeExceptionally(ex: Throwable): Boolean {
        withdraw(timedOut = ex is TimeoutException) // orTimeout's timer, or a caller's own timeout
        return super.completeExceptionally(ex)
    }

    override fun cancel(mayInterruptIfRunning: Boolean): Boolean {
        withdraw()
        return super.cancel(mayInterruptIfRunning)
    }

    // The JDK's completeAsync completes through a private path; route it through complete().
    override fun completeAsync(supplier: Supplier<out T>, executor: Executor): CompletableFuture<T> {
        executor.execute {
            try {
                complete(supplier.get())
            } catch (e: Throwable) {
                completeExceptionally(e)
            }
        }
        return this
    }

    override fun completeAsync(supplier: Supplier<out T>): CompletableFuture<T> = completeAsync(supplier, defaultExecutor())

    override fun obtrudeValue(value: T): Unit =
        throw UnsupportedOperationException("obtrudeValue could lose a granted permit; use cancel or complete")

    override fun obtrudeException(ex: Throwable): Unit =
        throw UnsupportedOperationException("obtrudeException could lose a granted permit; use cancel or completeExceptionally")
}

/**
 * A [GrantFuture] that runs [onWithdrawn] once if the request left the line without a grant: withdrawn
 * (by the first withdrawer that sees it so) or failed by the engine (closed). Every withdrawer waits for
 * it to finish before it completes the future, and a failure runs it before failing the future, so
 * whoever sees the future done also sees its effects.
 */
internal class HookedGrantFuture<T>(private val onWithdrawn: () -> Unit) : GrantFuture<T>() {
    /** 0: [onWithdrawn] not run; 1: running; 2: done. */
    @Volatile
    private var withdrawnHook = 0

    /** The thread running [onWithdrawn] (its release may run callbacks that withdraw again: no waiting for itself). */
    @Volatile
    private var hookRunner: Thread? = null

    override fun withdraw(timedOut: Boolean) {
        super.withdraw(timedOut)
        val w = waiter ?: return
        // Out of the line without a grant: withdrawn, or failed by the engine, whose onFailed (fail) may
        // not have run yet. A grant (W2) is the requester's: no hook.
        val st = w.status
        if (st == PermitWaiter.CANCELLED || st == PermitWaiter.FAILED) runHook()
    }

    /** The engine failed the request (closed): it never held anything, so the hook runs, before the failure. */
    override fun fail(cause: Throwable): Boolean {
        runHook()
        return super.fail(cause)
    }

    /** Runs [onWithdrawn] once; a second caller waits until it has run (unless it is the runner, re-entered). */
    private fun runHook() {
        if (HOOK.compareAndSet(this, 0, 1)) {
            hookRunner = Thread.currentThread()
            try {
                onWithdrawn()
            } finally {
                withdrawnHook = 2
                hookRunner = null
            }
        } else {
            var step = 0
            // Another withdrawer runs it (short: it gives permits back); unless it is this thread, re-entered.
            while (withdrawnHook != 2 && hookRunner !== Thread.currentThread()) spinWait(step++)
        }
    }

    private companion object {
        val HOOK: AtomicIntegerFieldUpdater<HookedGrantFuture<*>> =
            AtomicIntegerFieldUpdater.newUpdater(HookedGrantFuture::class.java, "withdrawnHook")
    }
}

/**
 * A waiter whose grant completes a [GrantFuture] with the handle of [hold] (JavaHolds.kt, J1): made by
 * `onGrant(hold)`, watched for a leak only once the future took it (J4; W3: a handle never delivered is not).
 * A request made while nobody observed carries no Requester (J2), and its waiter has no field for one: a pending
 * future is a queued waiter for as long as it waits, so every field is paid per waiter (docs/benchmarks.md,
 * "Memory per waiter"). [ObservedFutureWaiter] carries it.
 */
internal open class FutureWaiter<T>(
    permits: Int,
    grantee: Grantee,
    private val hold: LockHold,
    private val onGrant: (LockHold) -> T,
    val future: GrantFuture<T>,
) : PermitWaiter(permits, grantee) {
    /** Who asked, if the primitive was observed then (J2). */
    protected open val who: Requester? get() = null

    override fun tryClaim(): Boolean = !future.isDone

    override fun requester(): Requester = who ?: Requester.ofThread(grantee.owner, Requester.FUTURE)

    override fun onGranted() {
        val handle = onGrant(hold)
        if (!future.deliver(handle)) return handBack() // W3: completed by someone else since the claim
        val who = who ?: return
        Leaks.watch(queue, handle, hold, permits, who)
    }

    override fun onFailed(cause: Throwable) {
        future.fail(cause)
    }
}

/** A [FutureWaiter] for a request made while the primitive was observed: with its Requester (J2). */
internal class ObservedFutureWaiter<T>(
    permits: Int,
    grantee: Grantee,
    hold: LockHold,
    override val who: Requester,
    onGrant: (LockHold) -> T,
    future: GrantFuture<T>,
) : FutureWaiter<T>(permits, grantee, hold, onGrant, future)

/**
 * Requests [permits] as a future of the handle of [hold] (JavaHolds.kt, J1), for the request of [who] (J2;
 * the caller already failed a fast try). Throws what enqueue throws, before anything is queued. [onWithdrawn]
 * runs once if the request leaves the line by a withdrawal (W2), before the future completes.
 */
internal fun <T> WaiterQueue.requestFuture(
    permits: Int,
    priority: Int,
    grantee: Grantee,
    hold: LockHold,
    who: Requester?,
    onGrant: (LockHold) -> T,
    onWithdrawn: (() -> Unit)? = null,
): GrantFuture<T> {
    val future = if (onWithdrawn == null) GrantFuture() else HookedGrantFuture<T>(onWithdrawn)
    val w = if (who == null) FutureWaiter(permits, grantee, hold, onGrant, future) else ObservedFutureWaiter(permits, grantee, hold, who, onGrant, future)
    if (enqueue(w, priority)) {
        future.deliver(handOut(this, hold, who, permits, onGrant)) // not yet handed to anyone: always delivered
    } else {
        future.waiter = w // published before the future is: a completion by the caller finds it
    }
    return future
}

/** A waiter that unparks a thread; see the file comment for its states. */
internal class BlockingWaiter(
    permits: Int,
    grantee: Grantee,
    private val thread: Thread,
    /** The blocked thread as a Requester, if the primitive was observed when it asked (JavaHolds.kt, J2). */
    private val who: Requester?,
) : PermitWaiter(permits, grantee) {
    @Volatile
    private var state = WAITING

    override fun requester(): Requester = who ?: super.requester()

    override fun tryClaim(): Boolean = STATE.compareAndSet(this, WAITING, CLAIMED)

    override fun onGranted() {
        if (STATE.compareAndSet(this, CLAIMED, DELIVERED)) LockSupport.unpark(thread)
    }

    override fun onFailed(cause: Throwable) {
        if (STATE.compareAndSet(this, WAITING, FAILED)) LockSupport.unpark(thread)
    }

    /** I7: an unpark runs no caller code. */
    override val wakesWithoutCallbacks: Boolean get() = true

    /**
     * Parks until granted (true), [nanos] pass (false; [nanos] == Long.MAX_VALUE waits without limit) or
     * the thread is interrupted (InterruptedException, nothing held); rethrows a failure (close).
     */
    fun await(nanos: Long): Boolean {
        val timed = nanos != Long.MAX_VALUE
        val deadline = if (timed) System.nanoTime() + nanos else 0L
        var interrupted = false
        while (true) {
            var outcome = settle(interrupted, expired = false) // a grant seen first keeps a later interrupt set
            var remaining = 1L
            if (outcome == PENDING) {
                if (Thread.interrupted()) interrupted = true
                if (timed) remaining = deadline - System.nanoTime()
                outcome = settle(interrupted, expired = remaining <= 0)
            }
            when (outcome) {
                HELD -> return true
                GAVE_UP_EXPIRED -> return false
                GAVE_UP_INTERRUPTED -> throw InterruptedException("interrupted while waiting for permits; none are held")
                FAILED_BY_ENGINE -> {
                    if (interrupted) Thread.currentThread().interrupt() // keep the interrupt we consumed
                    throw failure!!
                }
                else -> if (timed) LockSupport.parkNanos(this, remaining) else LockSupport.park(this)
            }
        }
    }

    /**
     * One step of the waiting thread, without parking: [HELD] if the permits are the caller's now;
     * [PENDING] to park again; otherwise how the wait ended. An [interrupted] or [expired] caller gives
     * up (W2) unless the engine claimed it first (W1); an interrupted caller whose permits were claimed
     * hands them back (W3) and ends [GAVE_UP_INTERRUPTED]: InterruptedException means nothing is held.
     * Separate from [await] so that the verification module can model-check every interleaving of it.
     */
    fun settle(interrupted: Boolean, expired: Boolean): Int {
        while (true) {
            when (state) {
                DELIVERED, TAKEN -> return if (interrupted) { handBack(); GAVE_UP_INTERRUPTED } else HELD
                FAILED -> return FAILED_BY_ENGINE
            }
            if (!interrupted && !expired) return PENDING
            if (STATE.compareAndSet(this, WAITING, GAVE_UP)) { // W2
                queue.cancel(this, timedOut = !interrupted)
                return if (interrupted) GAVE_UP_INTERRUPTED else GAVE_UP_EXPIRED
            }
            if (state == CLAIMED) {
                // Claimed under the lock (W1): ours, but the grant may still be in progress there
                // (the grantee not yet told); cancel's false return orders us after it (W1).
                queue.cancel(this)
                STATE.compareAndSet(this, CLAIMED, TAKEN) // no unpark needed
            }
        }
    }

    companion object {
        // What settle returns.
        const val PENDING = 0
        const val HELD = 1
        const val GAVE_UP_EXPIRED = 2
        const val GAVE_UP_INTERRUPTED = 3
        const val FAILED_BY_ENGINE = 4

        const val WAITING = 0
        const val CLAIMED = 1
        const val DELIVERED = 2
        const val TAKEN = 3
        const val GAVE_UP = 4
        const val FAILED = 5

        val STATE: AtomicIntegerFieldUpdater<BlockingWaiter> =
            AtomicIntegerFieldUpdater.newUpdater(BlockingWaiter::class.java, "state")
    }
}

/**
 * Blocks the calling thread until [permits] are granted (the caller already failed a fast tryAcquire
 * and checked for an interrupt); see [BlockingWaiter.await].
 */
internal fun WaiterQueue.acquireBlocking(permits: Int, priority: Int, grantee: Grantee, who: Requester?, nanos: Long): Boolean {
    val w = BlockingWaiter(permits, grantee, Thread.currentThread(), who)
    return enqueue(w, priority) || w.await(nanos)
}
