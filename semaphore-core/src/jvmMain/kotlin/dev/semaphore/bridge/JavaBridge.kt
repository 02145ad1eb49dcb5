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
import dev.semaphore.internal.Leaks
import dev.semaphore.internal.ReadWriteHold
import dev.semaphore.internal.Requester
import dev.semaphore.internal.WaiterQueue
import dev.semaphore.internal.WritersLineFuture
import dev.semaphore.internal.acquireBlocking
import dev.semaphore.internal.announceDeadline
import dev.semaphore.internal.clearDeadline
import dev.semaphore.internal.handOut
import dev.semaphore.internal.notEngineBacked
import dev.semaphore.internal.permitHold
import dev.semaphore.internal.requestFuture
import dev.semaphore.internal.whoAsks
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
     * future of `onGrant(hold)`, waiting at most [timeoutNanos]: [LockHold.unlock] gives these permits back,
     * once, and `onGrant` makes the caller's handle on them (it must not throw or return null). A request
     * granted at once gets the JDK's completed future. Holds and handles follow internal/JavaHolds.kt, J1-J4.
     *
     * Completing a pending future yourself (cancel, complete, completeExceptionally, and the timeout
     * through `orTimeout`) withdraws the request, and permits granted in that same instant are
     * released: a `cancel` that returns false means the future holds the handle. It completes on the
     * thread that frees the permits. A closed pool gives a failed future.
     * @throws IllegalArgumentException if [permits] < 1 or more than the total, or [pool] was not made by
     *     the library's factories; nothing is queued.
     */
    @JvmStatic
    public fun <T> acquireAsync(pool: PermitPool, permits: Int, priority: Int, timeoutNanos: Long, onGrant: (LockHold) -> T): CompletableFuture<T> {
        val queue = pool.queue()
        val who = whoAsks(queue, Requester.FUTURE)
        val hold = permitHold(queue, permits, who)
        // The try names its Requester (J2), so an observed request that fits is granted here, as an unobserved one is.
        return future({ queue.tryAcquirePermits(permits, priority, timeoutNanos > 0, null, who ?: Requester.FUTURE_ASKER) }, { handOut(queue, hold, who, permits, onGrant) }) {
            waitFor(queue, permits, timeoutNanos) { queue.requestFuture(permits, priority, queue, hold, who, onGrant) }
        }
    }

    /**
     * Blocks as [acquireBlocking] (the form without a handle) and returns `onGrant(hold)`, the handle on the
     * permits, as [acquireAsync]; null if [timeoutNanos] passed, nothing held.
     */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun <T> acquireBlocking(pool: PermitPool, permits: Int, priority: Int, timeoutNanos: Long, onGrant: (LockHold) -> T): T? {
        val queue = pool.queue()
        val who = whoAsks(queue, Requester.THREAD)
        val hold = permitHold(queue, permits, who)
        val held = block(queue, permits, timeoutNanos, { queue.tryAcquirePermits(permits, priority, timeoutNanos > 0, null, who) }) {
            queue.acquireBlocking(permits, priority, queue, who, it)
        }
        return if (held) handOut(queue, hold, who, permits, onGrant) else null
    }

    /**
     * Takes [permits] permits of [pool] at [priority] now if they are free and no queued waiter should be
     * served first (no barging); false otherwise, with nothing held. Never waits. No handle: they are
     * given back by `release`.
     * @throws IllegalArgumentException if [permits] < 1 or more than the total.
     * @throws SemaphoreClosedException if the pool is closed.
     */
    @JvmStatic
    public fun tryAcquire(pool: PermitPool, permits: Int, priority: Int): Boolean =
        pool.queue().let { it.tryAcquirePermits(permits, priority) || it.refused(permits) }

    /**
     * Blocks the calling thread until [permits] permits of [pool] at [priority] are granted (true) or
     * [timeoutNanos] passes (false, nothing held), in the same line as futures and coroutines, parked
     * with `LockSupport` (a virtual thread frees its carrier). No handle: they are given back by `release`.
     * An interrupt before or during the wait throws `InterruptedException` with nothing held, even if the
     * permits were granted in that same instant.
     * @throws IllegalArgumentException if [permits] < 1 or more than the total (nothing is queued).
     * @throws SemaphoreClosedException if the pool is or becomes closed.
     */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun acquireBlocking(pool: PermitPool, permits: Int, priority: Int, timeoutNanos: Long): Boolean {
        val queue = pool.queue()
        return block(queue, permits, timeoutNanos, { queue.tryAcquirePermits(permits, priority) }) { queue.acquireBlocking(permits, priority, queue, null, it) }
    }

    /**
     * Requests [lock] (without owner) as a future of `onGrant(hold)`, where the [LockHold] is this
     * acquisition's own identity: its `unlock` ends exactly this hold. Otherwise as [acquireAsync].
     */
    @JvmStatic
    public fun <T> lockAsync(lock: Lock, timeoutNanos: Long, onGrant: (LockHold) -> T): CompletableFuture<T> {
        val impl = lock as? LockImpl ?: throw notEngineBacked(lock)
        val queue = impl.waiterQueue
        val who = whoAsks(queue, Requester.FUTURE)
        val hold = impl.Hold(null)
        return future({ impl.tryTake(null, hold, asker = who ?: Requester.FUTURE_ASKER) }, { handOut(queue, hold, who, 1, onGrant) }) {
            waitFor(queue, 1, timeoutNanos) { queue.requestFuture(1, 0, hold, hold, who, onGrant) }
        }
    }

    /** Blocks until [lock] is granted and returns `onGrant(hold)`, or null if [timeoutNanos] passed; as [lockAsync] and [acquireBlocking]. */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun <T> lockBlocking(lock: Lock, timeoutNanos: Long, onGrant: (LockHold) -> T): T? {
        val impl = lock as? LockImpl ?: throw notEngineBacked(lock)
        val queue = impl.waiterQueue
        val who = whoAsks(queue, Requester.THREAD)
        val hold = impl.Hold(null)
        val held = block(queue, 1, timeoutNanos, { impl.tryTake(null, hold, asker = who) }) { queue.acquireBlocking(1, 0, hold, who, it) }
        return if (held) handOut(queue, hold, who, 1, onGrant) else null
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
        val queue = impl.waiterQueue
        val who = whoAsks(queue, Requester.FUTURE)
        val hold = ReadWriteHold(impl, kind, who)
        val permits = hold.queuePermits()
        val writersLine = if (kind == HoldKind.WRITE) impl.writersLine else null
        return future({ hold.tryTake(who ?: Requester.FUTURE_ASKER) }, { handOut(queue, hold, who, permits, onGrant) }) {
            if (writersLine != null) {
                waitFor(queue, permits, timeoutNanos) { WritersLineFuture(impl, writersLine, hold, who, onGrant).start() }
            } else {
                waitFor(queue, permits, timeoutNanos) { queue.requestFuture(permits, 0, hold.grantee(), hold, who, onGrant) }
            }
        }
    }

    /** Blocks until a hold of [kind] of [lock] is granted and returns `onGrant(hold)`, or null if [timeoutNanos] passed; as [lockAsync] and [acquireBlocking]. */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun <T> lockBlocking(lock: ReadWriteLock, kind: HoldKind, timeoutNanos: Long, onGrant: (LockHold) -> T): T? {
        val impl = lock.impl()
        val queue = impl.waiterQueue
        val who = whoAsks(queue, Requester.THREAD)
        val hold = ReadWriteHold(impl, kind, who)
        val permits = hold.queuePermits()
        val writersLine = if (kind == HoldKind.WRITE) impl.writersLine else null
        val held = if (writersLine != null) {
            blockInWritersLine(impl, writersLine, who, timeoutNanos)
        } else {
            block(queue, permits, timeoutNanos, { hold.tryTake(who) }) { queue.acquireBlocking(permits, 0, hold.grantee(), who, it) }
        }
        return if (held) handOut(queue, hold, who, permits, onGrant) else null
    }

    /**
     * A blocked writer of a lock with ReadWritePolicy.WRITERS_LINE (ReadWriteLockImpl.kt, WL1): the
     * writers' line, then the lock's line with what is left of [timeoutNanos]; the writers' line's
     * permit is given back however the second wait ends.
     */
    private fun blockInWritersLine(impl: ReadWriteLockImpl, writersLine: WaiterQueue, who: Requester?, timeoutNanos: Long): Boolean {
        val start = System.nanoTime()
        val first = blockFor(impl.waiterQueue, impl.total, timeoutNanos, { impl.tryTakeWrite(who) }) {
            impl.takeWritersLine(writersLine) || writersLine.acquireBlocking(1, 0, impl.writersLineRequests, who, it)
        }
        if (first != AFTER_WAIT) return first == AT_ONCE // AT_ONCE: the write hold itself (its try passes the line)
        try {
            val left = if (timeoutNanos == NO_TIMEOUT) NO_TIMEOUT else timeoutNanos - (System.nanoTime() - start)
            return block(impl.waiterQueue, impl.total, left, { impl.tryTakeWriteInLine(who) }) {
                impl.waiterQueue.acquireBlocking(impl.total, 0, impl.writeRequests, who, it)
            }
        } finally {
            impl.joined() // WL2, before the next holder can take the permit
            writersLine.release(1)
        }
    }

    /**
     * Turns the [upgradable] read hold (taken through [lockAsync] or [lockBlocking]) into the write hold,
     * as `ReadWriteLock.upgrade()`: a future of `onGrant(writeHold)`. If the upgrade does not happen
     * (timeout, the lock closed, or the future completed by the caller first), [upgradable] still holds
     * the upgradable read, as after a failed `upgrade()`; once it happens, [upgradable] is spent (its
     * `unlock` does nothing). Unlocking [upgradable] while its upgrade is pending withdraws the upgrade
     * and ends the upgradable read (ReadWriteHold.kt, H2-H3). The upgrade is a request of its own, by a future
     * (JavaHolds.kt, J2).
     * @throws IllegalArgumentException if [upgradable] is not an upgradable read hold of [lock].
     * @throws IllegalStateException if [upgradable] was already ended, spent or is being upgraded; nothing changes.
     */
    @JvmStatic
    public fun <T> upgradeAsync(lock: ReadWriteLock, upgradable: LockHold?, timeoutNanos: Long, onGrant: (LockHold) -> T): CompletableFuture<T> {
        val impl = lock.impl()
        val from = ReadWriteHold.beginUpgrade(impl, upgradable)
        val request = impl.UpgradeRequest(from::upgradeFailed)
        val queue = impl.waiterQueue
        val who = whoAsks(queue, Requester.FUTURE) // the upgrade is a request of its own (J2)
        val write = ReadWriteHold(impl, HoldKind.WRITE, who)
        val notUpgraded = { upgradeNeverGranted(impl, from) } // before the future fails (W2's withdrawal hook)
        val granted = try {
            takeUpgradeNow(impl, request, who ?: Requester.FUTURE_ASKER)
        } catch (e: Throwable) { // closed: the upgradable read is the caller's again
            notUpgraded()
            if (e is SemaphoreClosedException) return CompletableFuture.failedFuture(e)
            throw e
        }
        // A delivered future spends `from` (H3: its unlock finds the future done); a grant that the future
        // refuses is handed back, and the request's afterHandBack gives `from` its upgradable read back.
        val upgrade = if (granted) {
            CompletableFuture.completedFuture(handOut(queue, write, who, impl.upgradePermits, onGrant))
        } else {
            waitFor(queue, impl.upgradePermits, timeoutNanos, notUpgraded) {
                queue.requestFuture(impl.upgradePermits, ReadWriteLockImpl.UPGRADE_PRIORITY, request, write, who, onGrant, notUpgraded)
            }
        }
        from.upgrade = upgrade
        return upgrade
    }

    /**
     * Blocks until the [upgradable] read hold becomes the write hold, and returns `onGrant(writeHold)` (null
     * if [timeoutNanos] passed); as [upgradeAsync], so [upgradable] still holds the upgradable read if the
     * upgrade does not happen (timeout, interrupt, the lock closed). Otherwise as [acquireBlocking].
     */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun <T> upgradeBlocking(lock: ReadWriteLock, upgradable: LockHold?, timeoutNanos: Long, onGrant: (LockHold) -> T): T? {
        val impl = lock.impl()
        val from = ReadWriteHold.beginUpgrade(impl, upgradable)
        val request = impl.UpgradeRequest(from::upgradeFailed)
        val queue = impl.waiterQueue
        val who = whoAsks(queue, Requester.THREAD) // the upgrade is a request of its own (J2)
        var upgraded = false
        try {
            upgraded = block(queue, impl.upgradePermits, timeoutNanos, { takeUpgradeNow(impl, request, who) }) {
                queue.acquireBlocking(impl.upgradePermits, ReadWriteLockImpl.UPGRADE_PRIORITY, request, who, it)
            }
        } finally {
            if (upgraded) from.upgraded() else if (!request.wasGranted) upgradeNeverGranted(impl, from) // else handed back (H2)
        }
        if (!upgraded) return null
        return handOut(queue, ReadWriteHold(impl, HoldKind.WRITE, who), who, impl.upgradePermits, onGrant)
    }

    /**
     * Turns the [write] hold into a read hold, as `ReadWriteLock.downgrade()`, and returns `onGrant(readHold)`,
     * the same caller's (JavaHolds.kt, J2); [write] is spent (its `unlock` does nothing from then on).
     * @throws IllegalArgumentException if [write] is not a write hold of [lock].
     * @throws IllegalStateException if [write] was already ended or spent; nothing changes.
     */
    @JvmStatic
    public fun <T> downgrade(lock: ReadWriteLock, write: LockHold?, onGrant: (LockHold) -> T): T {
        val impl = lock.impl()
        val from = ReadWriteHold.spend(impl, write, HoldKind.WRITE, "downgrade")
        try {
            impl.downgrade()
        } catch (e: IllegalStateException) { // Kotlin code ended the (anonymous) write hold
            from.unspend()
            throw e
        }
        return handOut(impl.waiterQueue, ReadWriteHold(impl, HoldKind.READ, from.who), from.who, 1, onGrant)
    }

    /**
     * Creates a [PrioritySemaphore] whose waiters age by one priority step per [aging] waited (null: no
     * aging), on the monotonic clock: the Kotlin factory takes a `kotlin.time.Duration`, which Java cannot pass.
     * @throws IllegalArgumentException if [permits] < 0 or [aging] is not positive.
     */
    @JvmStatic
    public fun prioritySemaphore(permits: Int, aging: java.time.Duration?, diagnostics: Diagnostics): PrioritySemaphore =
        PrioritySemaphore(permits, aging?.toKotlinDuration(), diagnostics = diagnostics)

    /**
     * How many handles were ever watched for a leak in this process (internal/JavaHolds.kt, J4): for the tests
     * that an unobserved primitive watches none.
     */
    @JvmStatic
    public fun watchedHandles(): Long = Leaks.watchedCount()

    private fun ReadWriteLock.impl(): ReadWriteLockImpl = this as? ReadWriteLockImpl ?: throw notEngineBacked(this)

    private fun PermitPool.queue(): QueueBackedPool = this as? QueueBackedPool ?: throw notEngineBacked(this)

    private fun takeUpgradeNow(lock: ReadWriteLockImpl, request: ReadWriteLockImpl.UpgradeRequest, asker: Any?): Boolean =
        lock.tryTakeUpgrade(asker).also { if (it) request.wasGranted = true }

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

    private inline fun block(line: WaiterQueue, permits: Int, timeoutNanos: Long, tryNow: () -> Boolean, wait: (Long) -> Boolean): Boolean =
        blockFor(line, permits, timeoutNanos, tryNow, wait) != NOT_HELD

    /** [block], saying how: [NOT_HELD], [AT_ONCE] (by [tryNow]) or [AFTER_WAIT] (by [wait], which may also grant at once). */
    private inline fun blockFor(line: WaiterQueue, permits: Int, timeoutNanos: Long, tryNow: () -> Boolean, wait: (Long) -> Boolean): Int {
        if (Thread.interrupted()) throw InterruptedException("interrupted before waiting for permits")
        if (tryNow()) return AT_ONCE
        if (timeoutNanos <= 0) {
            line.refused(permits) // a try without waiting
            return NOT_HELD
        }
        if (timeoutNanos == NO_TIMEOUT) return if (wait(timeoutNanos)) AFTER_WAIT else NOT_HELD
        val announcer = line.announceDeadline(timeoutNanos) // for observation: the request's deadline
        try {
            return if (wait(timeoutNanos)) AFTER_WAIT else NOT_HELD
        } finally {
            if (announcer != null) clearDeadline(announcer)
        }
    }

    private const val NOT_HELD = 0
    private const val AT_ONCE = 1
    private const val AFTER_WAIT = 2
}
