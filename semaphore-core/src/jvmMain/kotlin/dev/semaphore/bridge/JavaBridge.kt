/*
 * Waiting for permits without a coroutine, on the JVM: as a CompletableFuture, or by parking the
 * calling thread. These are the building blocks of the Java API (module semaphore-java-api, which adds
 * Permit, java.time.Duration overloads and withPermit over CompletionStage), and nothing else: the
 * package is exported to that module only, and Kotlin code must opt in to InternalSemaphoreApi to call
 * it (InternalSemaphoreApi.kt). Futures and threads stand in the same line as the coroutines of the
 * same primitive and follow the same waiter protocol (internal/WaiterQueue.kt, W1..W5).
 *
 * Timeouts are in nanoseconds: NO_TIMEOUT (Long.MAX_VALUE) waits without limit, zero or negative only
 * tries now.
 */
@file:OptIn(InternalSemaphoreApi::class)

package dev.semaphore.bridge

import dev.semaphore.Diagnostics
import dev.semaphore.Lock
import dev.semaphore.LockImpl
import dev.semaphore.PermitPool
import dev.semaphore.PrioritySemaphore
import dev.semaphore.QueueBackedPool
import dev.semaphore.ReadWriteLock
import dev.semaphore.ReadWriteLockImpl
import dev.semaphore.SemaphoreClosedException
import dev.semaphore.internal.GrantFuture
import dev.semaphore.internal.ReadWriteHold
import dev.semaphore.internal.WaiterQueue
import dev.semaphore.internal.acquireBlocking
import dev.semaphore.internal.announceDeadline
import dev.semaphore.internal.clearDeadline
import dev.semaphore.internal.notEngineBacked
import dev.semaphore.internal.requestFuture
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import kotlin.time.toKotlinDuration

/** The kinds of hold of a [ReadWriteLock] that [JavaBridge.lockAsync] and [JavaBridge.lockBlocking] request. */
@InternalSemaphoreApi
public enum class HoldKind { READ, WRITE, UPGRADABLE_READ }

/**
 * Futures and blocking calls on the library's primitives, for its Java front-end. The rules for
 * callers (withdrawing a future, timeouts, interrupts, threads, closing) are written once, in the
 * package documentation of `dev.semaphore.async`.
 */
@InternalSemaphoreApi
public object JavaBridge {
    /** The timeout of a request that waits without limit. */
    public const val NO_TIMEOUT: Long = Long.MAX_VALUE

    /**
     * Requests [permits] permits of [pool] at [priority] (ignored by a `Semaphore`, which is FIFO) as a
     * future, waiting at most [timeoutNanos]. When they are granted, [onGrant] is called with [permits]
     * and the future completes with its result, the caller's handle on the permits (it must not throw).
     * A request granted at once gets the JDK's completed future.
     *
     * Completing a pending future yourself (cancel, complete, completeExceptionally, and the timeout
     * through `orTimeout`) withdraws the request, and permits granted in that same instant are
     * released: a `cancel` that returns false means the future holds the handle. It completes on the
     * thread that frees the permits. A closed pool gives a failed future.
     * @throws IllegalArgumentException if [permits] < 1 or more than the total, or [pool] was not made by
     *     the library's factories; nothing is queued.
     */
    @JvmStatic
    public fun <T> acquireAsync(pool: PermitPool, permits: Int, priority: Int, timeoutNanos: Long, onGrant: (Int) -> T): CompletableFuture<T> {
        val queue = pool as? QueueBackedPool ?: throw notEngineBacked(pool)
        return future({ queue.tryAcquirePermits(permits, priority) }, { onGrant(permits) }) {
            waitFor(queue, permits, timeoutNanos) { queue.requestFuture(permits, priority, queue, onGrant, permits) }
        }
    }

    /**
     * Takes [permits] permits of [pool] at [priority] now if they are free and no queued waiter should be
     * served first (no barging); false otherwise, with nothing held. Never waits.
     * @throws IllegalArgumentException if [permits] < 1 or more than the total.
     * @throws SemaphoreClosedException if the pool is closed.
     */
    @JvmStatic
    public fun tryAcquire(pool: PermitPool, permits: Int, priority: Int): Boolean =
        (pool as? QueueBackedPool ?: throw notEngineBacked(pool)).let { it.tryAcquirePermits(permits, priority) || it.refused(permits) }

    /**
     * Blocks the calling thread until [permits] permits of [pool] at [priority] are granted (true) or
     * [timeoutNanos] passes (false, nothing held), in the same line as futures and coroutines, parked
     * with `LockSupport` (a virtual thread frees its carrier). An interrupt before or during the wait
     * throws `InterruptedException` with nothing held, even if the permits were granted in that same
     * instant.
     * @throws IllegalArgumentException if [permits] < 1 or more than the total (nothing is queued).
     * @throws SemaphoreClosedException if the pool is or becomes closed.
     */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun acquireBlocking(pool: PermitPool, permits: Int, priority: Int, timeoutNanos: Long): Boolean {
        val queue = pool as? QueueBackedPool ?: throw notEngineBacked(pool)
        return block(queue, permits, timeoutNanos, { queue.tryAcquirePermits(permits, priority) }) { queue.acquireBlocking(permits, priority, queue, it) }
    }

    /**
     * Requests [lock] (without owner) as a future of `onGrant(hold)`, where the [LockHold] is this
     * acquisition's own identity: its `unlock` ends exactly this hold. Otherwise as [acquireAsync].
     */
    @JvmStatic
    public fun <T> lockAsync(lock: Lock, timeoutNanos: Long, onGrant: (LockHold) -> T): CompletableFuture<T> {
        val impl = lock as? LockImpl ?: throw notEngineBacked(lock)
        val hold = impl.Hold(null)
        return future({ impl.tryTake(null, hold) }, { onGrant(hold) }) {
            waitFor(impl.waiterQueue, 1, timeoutNanos) { impl.waiterQueue.requestFuture(1, 0, hold, onGrant, hold) }
        }
    }

    /** Blocks until [lock] is granted and returns its [LockHold], or null if [timeoutNanos] passed; as [acquireBlocking]. */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun lockBlocking(lock: Lock, timeoutNanos: Long): LockHold? {
        val impl = lock as? LockImpl ?: throw notEngineBacked(lock)
        val hold = impl.Hold(null)
        val held = block(impl.waiterQueue, 1, timeoutNanos, { impl.tryTake(null, hold) }) { impl.waiterQueue.acquireBlocking(1, 0, hold, it) }
        return if (held) hold else null
    }

    /**
     * Requests a hold of [kind] of [lock] as a future of `onGrant(hold)`, in the one line of the lock's
     * coroutines, futures and threads. The [LockHold] is this acquisition's own identity: its `unlock`
     * ends exactly one hold of its kind, once (a second call throws `IllegalStateException`); once spent
     * by [upgradeAsync], [upgradeBlocking] or [downgrade], its `unlock` does nothing. (The Kotlin holds
     * are anonymous: Kotlin code that calls `unlockRead()` and so on may end a hold of the same kind that
     * a JVM caller took.) Otherwise as [acquireAsync].
     */
    @JvmStatic
    public fun <T> lockAsync(lock: ReadWriteLock, kind: HoldKind, timeoutNanos: Long, onGrant: (LockHold) -> T): CompletableFuture<T> {
        val impl = lock.impl()
        val hold = ReadWriteHold(impl, kind)
        return future({ hold.tryTake() }, { onGrant(hold) }) {
            waitFor(impl.waiterQueue, hold.permits(), timeoutNanos) { impl.waiterQueue.requestFuture(hold.permits(), 0, hold.grantee(), onGrant, hold) }
        }
    }

    /** Blocks until a hold of [kind] of [lock] is granted and returns it, or null if [timeoutNanos] passed; as [acquireBlocking]. */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun lockBlocking(lock: ReadWriteLock, kind: HoldKind, timeoutNanos: Long): LockHold? {
        val impl = lock.impl()
        val hold = ReadWriteHold(impl, kind)
        val held = block(impl.waiterQueue, hold.permits(), timeoutNanos, { hold.tryTake() }) { impl.waiterQueue.acquireBlocking(hold.permits(), 0, hold.grantee(), it) }
        return if (held) hold else null
    }

    /**
     * Turns the [upgradable] read hold (taken through [lockAsync] or [lockBlocking]) into the write hold,
     * as `ReadWriteLock.upgrade()`: a future of `onGrant(writeHold)`. If the upgrade does not happen
     * (timeout, the lock closed, or the future completed by the caller first), [upgradable] still holds
     * the upgradable read, as after a failed `upgrade()`; once it happens, [upgradable] is spent (its
     * `unlock` does nothing). Unlocking [upgradable] while its upgrade is pending withdraws the upgrade
     * and ends the upgradable read (ReadWriteHold.kt, H2-H3).
     * @throws IllegalArgumentException if [upgradable] is not an upgradable read hold of [lock].
     * @throws IllegalStateException if [upgradable] was already ended, spent or is being upgraded; nothing changes.
     */
    @JvmStatic
    public fun <T> upgradeAsync(lock: ReadWriteLock, upgradable: LockHold?, timeoutNanos: Long, onGrant: (LockHold) -> T): CompletableFuture<T> {
        val impl = lock.impl()
        val from = ReadWriteHold.beginUpgrade(impl, upgradable)
        val request = impl.UpgradeRequest(from::upgradeFailed)
        val write = ReadWriteHold(impl, HoldKind.WRITE)
        val notUpgraded = { upgradeNeverGranted(impl, from) } // before the future fails (W2's withdrawal hook)
        val granted = try {
            takeUpgradeNow(impl, request)
        } catch (e: Throwable) { // closed: the upgradable read is the caller's again
            notUpgraded()
            if (e is SemaphoreClosedException) return CompletableFuture.failedFuture(e)
            throw e
        }
        // A delivered future spends `from` (H3: its unlock finds the future done); a grant that the future
        // refuses is handed back, and the request's afterHandBack gives `from` its upgradable read back.
        val upgrade = if (granted) {
            CompletableFuture.completedFuture(onGrant(write))
        } else {
            waitFor(impl.waiterQueue, impl.upgradePermits, timeoutNanos, notUpgraded) {
                impl.waiterQueue.requestFuture(impl.upgradePermits, ReadWriteLockImpl.UPGRADE_PRIORITY, request, onGrant, write, notUpgraded)
            }
        }
        from.upgrade = upgrade
        return upgrade
    }

    /**
     * Blocks until the [upgradable] read hold becomes the write hold, and returns that (null if
     * [timeoutNanos] passed); as [upgradeAsync], so [upgradable] still holds the upgradable read if the
     * upgrade does not happen (timeout, interrupt, the lock closed). Otherwise as [acquireBlocking].
     */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun upgradeBlocking(lock: ReadWriteLock, upgradable: LockHold?, timeoutNanos: Long): LockHold? {
        val impl = lock.impl()
        val from = ReadWriteHold.beginUpgrade(impl, upgradable)
        val request = impl.UpgradeRequest(from::upgradeFailed)
        var upgraded = false
        try {
            upgraded = block(impl.waiterQueue, impl.upgradePermits, timeoutNanos, { takeUpgradeNow(impl, request) }) {
                impl.waiterQueue.acquireBlocking(impl.upgradePermits, ReadWriteLockImpl.UPGRADE_PRIORITY, request, it)
            }
        } finally {
            if (upgraded) from.upgraded() else if (!request.wasGranted) upgradeNeverGranted(impl, from) // else handed back (H2)
        }
        return if (upgraded) ReadWriteHold(impl, HoldKind.WRITE) else null
    }

    /**
     * Turns the [write] hold into a read hold, as `ReadWriteLock.downgrade()`, and returns the read hold;
     * [write] is spent (its `unlock` does nothing from then on).
     * @throws IllegalArgumentException if [write] is not a write hold of [lock].
     * @throws IllegalStateException if [write] was already ended or spent; nothing changes.
     */
    @JvmStatic
    public fun downgrade(lock: ReadWriteLock, write: LockHold?): LockHold {
        val impl = lock.impl()
        val from = ReadWriteHold.spend(impl, write, HoldKind.WRITE, "downgrade")
        try {
            impl.downgrade()
        } catch (e: IllegalStateException) { // Kotlin code ended the (anonymous) write hold
            from.unspend()
            throw e
        }
        return ReadWriteHold(impl, HoldKind.READ)
    }

    /**
     * Creates a [PrioritySemaphore] whose waiters age by one priority step per [aging] waited (null: no
     * aging), on the monotonic clock: the Kotlin factory takes a `kotlin.time.Duration`, which Java cannot pass.
     * @throws IllegalArgumentException if [permits] < 0 or [aging] is not positive.
     */
    @JvmStatic
    public fun prioritySemaphore(permits: Int, aging: java.time.Duration?, diagnostics: Diagnostics): PrioritySemaphore =
        PrioritySemaphore(permits, aging?.toKotlinDuration(), diagnostics = diagnostics)

    private fun ReadWriteLock.impl(): ReadWriteLockImpl = this as? ReadWriteLockImpl ?: throw notEngineBacked(this)

    private fun takeUpgradeNow(lock: ReadWriteLockImpl, request: ReadWriteLockImpl.UpgradeRequest): Boolean =
        lock.tryTakeUpgrade().also { if (it) request.wasGranted = true }

    /** An upgrade never granted leaves (RW5); the upgradable read is its caller's handle's again (H2). */
    private fun upgradeNeverGranted(lock: ReadWriteLockImpl, from: ReadWriteHold) {
        lock.endUpgradeAttempt()
        from.upgradeFailed()
    }

    /**
     * A request as a future. Its part that runs when the request is granted at once ([tryNow], then
     * [grantNow]'s handle in the JDK's completed future) is inline and small, so that the JIT inlines the
     * whole uncontended acquire into its caller; [wait], the part for a request not granted at once,
     * calls the out-of-line [waitFor]. A closed primitive gives a failed future.
     */
    private inline fun <T> future(tryNow: () -> Boolean, grantNow: () -> T, wait: () -> CompletableFuture<T>): CompletableFuture<T> {
        val granted = try {
            tryNow()
        } catch (e: SemaphoreClosedException) {
            return CompletableFuture.failedFuture(e)
        }
        return if (granted) CompletableFuture.completedFuture(grantNow()) else wait()
    }

    /**
     * The future of a request not granted at once: [queue] offers its waiter, unless [timeoutNanos] only
     * allowed a try. [notNow] is called before the future fails without queueing (a timeout that allowed
     * no wait, or the primitive closed).
     */
    private fun <T> waitFor(
        line: WaiterQueue,
        permits: Int,
        timeoutNanos: Long,
        notNow: () -> Unit = {},
        queue: () -> GrantFuture<T>,
    ): CompletableFuture<T> = try {
        when {
            timeoutNanos <= 0 -> {
                line.refused(permits) // a try without waiting
                notNow()
                CompletableFuture.failedFuture(
                    TimeoutException("not granted at once, and the timeout (${java.time.Duration.ofNanos(timeoutNanos)}) allowed no wait"),
                )
            }
            timeoutNanos == NO_TIMEOUT -> queue()
            else -> {
                val announcer = line.announceDeadline(timeoutNanos) // for observation: the request's deadline
                try {
                    queue().orTimeout(timeoutNanos, TimeUnit.NANOSECONDS)
                } finally {
                    if (announcer != null) clearDeadline(announcer)
                }
            }
        }
    } catch (e: SemaphoreClosedException) {
        notNow()
        CompletableFuture.failedFuture(e)
    }

    private inline fun block(line: WaiterQueue, permits: Int, timeoutNanos: Long, tryNow: () -> Boolean, wait: (Long) -> Boolean): Boolean {
        if (Thread.interrupted()) throw InterruptedException("interrupted before waiting for permits")
        if (tryNow()) return true
        if (timeoutNanos <= 0) return line.refused(permits) // a try without waiting
        if (timeoutNanos == NO_TIMEOUT) return wait(timeoutNanos)
        val announcer = line.announceDeadline(timeoutNanos) // for observation: the request's deadline
        try {
            return wait(timeoutNanos)
        } finally {
            if (announcer != null) clearDeadline(announcer)
        }
    }
}
