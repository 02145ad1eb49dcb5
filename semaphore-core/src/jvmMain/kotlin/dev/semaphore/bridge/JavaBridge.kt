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
import dev.semaphore.internal.PermitHold
import dev.semaphore.internal.ReadWriteHold
import dev.semaphore.internal.Requester
import dev.semaphore.internal.WaiterQueue
import dev.semaphore.internal.WritersLineFuture
import dev.semaphore.internal.acquireBlocking
import dev.semaphore.internal.announceDeadline
import dev.semaphore.internal.clearDeadline
import dev.semaphore.internal.notEngineBacked
import dev.semaphore.internal.requestFuture
import dev.semaphore.internal.requestWatchedFuture
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
        return future({ queue.tryAcquirePermits(permits, priority, false, null, Requester.FUTURE_ASKER) }, { onGrant(permits) }) {
            waitFor(queue, permits, timeoutNanos) { queue.requestFuture(permits, priority, queue, onGrant, permits) }
        }
    }

    /**
     * [acquireAsync] for a handle that can leak (the Java `Permit`): `onGrant(permits)` makes it while
     * [pool] is not observed, as above; while it is, `onWatched(permits, hold)` makes it, its close must
     * call `hold.unlock()` (which gives the permits back, once), and it is watched for a leak
     * (internal/Leaks.kt, K1-K3). The lock-free path is the same as [acquireAsync]'s.
     */
    @JvmStatic
    public fun <T : Any> acquireAsync(
        pool: PermitPool,
        permits: Int,
        priority: Int,
        timeoutNanos: Long,
        onGrant: (Int) -> T,
        onWatched: (Int, LockHold) -> T,
    ): CompletableFuture<T> {
        val queue = pool as? QueueBackedPool ?: throw notEngineBacked(pool)
        // Observed, a request that may wait is refused here and made by its waiter (K1).
        // A try granted at once names the future (Observer.kt, H1); one that may wait is named by its waiter.
        val asker = if (timeoutNanos > 0) null else Requester.FUTURE_ASKER
        return future({ queue.tryAcquirePermits(permits, priority, timeoutNanos > 0, null, asker) }, { grantedNow(queue, permits, timeoutNanos, onGrant, onWatched) }) {
            waitForPermits(queue, permits, priority, timeoutNanos, onGrant, onWatched)
        }
    }

    /** The part of [acquireAsync] for a request not granted at once, out of line (see [future]). */
    private fun <T : Any> waitForPermits(
        queue: QueueBackedPool,
        permits: Int,
        priority: Int,
        timeoutNanos: Long,
        onGrant: (Int) -> T,
        onWatched: (Int, LockHold) -> T,
    ): CompletableFuture<T> = waitFor(queue, permits, timeoutNanos) {
        if (queue.observer == null) {
            queue.requestFuture(permits, priority, queue, onGrant, permits)
        } else {
            queue.requestWatchedFuture(permits, priority, queue, { onWatched(permits, it) }, PermitHold(queue, permits))
        }
    }

    /**
     * Blocks as [acquireBlocking], and makes the handle of the permits as [acquireAsync] with `onWatched`
     * does: null if [timeoutNanos] passed, nothing held.
     */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun <T : Any> acquireBlocking(
        pool: PermitPool,
        permits: Int,
        priority: Int,
        timeoutNanos: Long,
        onGrant: (Int) -> T,
        onWatched: (Int, LockHold) -> T,
    ): T? {
        val queue = pool as? QueueBackedPool ?: throw notEngineBacked(pool)
        return when (blockFor(queue, permits, timeoutNanos, { queue.tryAcquirePermits(permits, priority, timeoutNanos > 0) }) { queue.acquireBlocking(permits, priority, queue, it) }) {
            AT_ONCE -> grantedNow(queue, permits, timeoutNanos, onGrant, onWatched)
            AFTER_WAIT -> if (queue.observer == null) onGrant(permits) else watchedPermits(queue, permits, onWatched)
            else -> null
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
        val queue = impl.waiterQueue
        return future({ impl.tryTake(null, hold, asker = Requester.FUTURE_ASKER) }, { Leaks.watchIfObserved(queue, onGrant(hold), hold) { 1 } }) {
            waitFor(queue, 1, timeoutNanos) { requestHold(queue, 1, 0, hold, hold, onGrant) }
        }
    }

    /** Blocks until [lock] is granted and returns its [LockHold], or null if [timeoutNanos] passed; as [acquireBlocking]. */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun lockBlocking(lock: Lock, timeoutNanos: Long): LockHold? = lockBlocking(lock, timeoutNanos) { it }

    /**
     * [lockBlocking] that returns `onGrant(hold)`, a handle that can leak: while [lock] is observed it is
     * watched (internal/Leaks.kt); its close must end `hold`.
     */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun <T : Any> lockBlocking(lock: Lock, timeoutNanos: Long, onGrant: (LockHold) -> T): T? {
        val impl = lock as? LockImpl ?: throw notEngineBacked(lock)
        val hold = impl.Hold(null)
        val held = block(impl.waiterQueue, 1, timeoutNanos, { impl.tryTake(null, hold) }) { impl.waiterQueue.acquireBlocking(1, 0, hold, it) }
        return if (held) Leaks.watchIfObserved(impl.waiterQueue, onGrant(hold), hold) { 1 } else null
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
        val queue = impl.waiterQueue
        val writersLine = if (kind == HoldKind.WRITE) impl.writersLine else null
        return future({ hold.tryTake(Requester.FUTURE_ASKER) }, { Leaks.watchIfObserved(queue, onGrant(hold), hold) { hold.permits() } }) {
            @Suppress("UNCHECKED_CAST") // T is the handle, never null (onGrant must not return null)
            if (writersLine != null) {
                waitFor(queue, impl.total, timeoutNanos) { WritersLineFuture(impl, writersLine, hold, onGrant as (LockHold) -> Any).start() as GrantFuture<T> }
            } else {
                waitFor(queue, hold.permits(), timeoutNanos) { requestHold(queue, hold.permits(), 0, hold.grantee(), hold, onGrant) }
            }
        }
    }

    /** Blocks until a hold of [kind] of [lock] is granted and returns it, or null if [timeoutNanos] passed; as [acquireBlocking]. */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun lockBlocking(lock: ReadWriteLock, kind: HoldKind, timeoutNanos: Long): LockHold? = lockBlocking(lock, kind, timeoutNanos) { it }

    /** [lockBlocking] that returns `onGrant(hold)`, a handle watched for a leak while [lock] is observed (as for a Lock). */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun <T : Any> lockBlocking(lock: ReadWriteLock, kind: HoldKind, timeoutNanos: Long, onGrant: (LockHold) -> T): T? {
        val impl = lock.impl()
        val hold = ReadWriteHold(impl, kind)
        val writersLine = if (kind == HoldKind.WRITE) impl.writersLine else null
        val held = if (writersLine != null) {
            blockInWritersLine(impl, writersLine, timeoutNanos)
        } else {
            block(impl.waiterQueue, hold.permits(), timeoutNanos, { hold.tryTake() }) { impl.waiterQueue.acquireBlocking(hold.permits(), 0, hold.grantee(), it) }
        }
        return if (held) Leaks.watchIfObserved(impl.waiterQueue, onGrant(hold), hold) { hold.permits() } else null
    }

    /**
     * A blocked writer of a lock with ReadWritePolicy.WRITERS_LINE (ReadWriteLockImpl.kt, WL1): the
     * writers' line, then the lock's line with what is left of [timeoutNanos]; the writers' line's
     * permit is given back however the second wait ends.
     */
    private fun blockInWritersLine(impl: ReadWriteLockImpl, writersLine: WaiterQueue, timeoutNanos: Long): Boolean {
        val start = System.nanoTime()
        val first = blockFor(impl.waiterQueue, impl.total, timeoutNanos, { impl.tryTakeWrite() }) {
            impl.takeWritersLine(writersLine) || writersLine.acquireBlocking(1, 0, impl.writersLineRequests, it)
        }
        if (first != AFTER_WAIT) return first == AT_ONCE // AT_ONCE: the write hold itself (its try passes the line)
        try {
            val left = if (timeoutNanos == NO_TIMEOUT) NO_TIMEOUT else timeoutNanos - (System.nanoTime() - start)
            return block(impl.waiterQueue, impl.total, left, { impl.tryTakeWriteInLine() }) {
                impl.waiterQueue.acquireBlocking(impl.total, 0, impl.writeRequests, it)
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
            CompletableFuture.completedFuture(Leaks.watchIfObserved(impl.waiterQueue, onGrant(write), write) { impl.upgradePermits })
        } else {
            waitFor(impl.waiterQueue, impl.upgradePermits, timeoutNanos, notUpgraded) {
                requestHold(impl.waiterQueue, impl.upgradePermits, ReadWriteLockImpl.UPGRADE_PRIORITY, request, write, onGrant, notUpgraded)
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
    public fun upgradeBlocking(lock: ReadWriteLock, upgradable: LockHold?, timeoutNanos: Long): LockHold? =
        upgradeBlocking(lock, upgradable, timeoutNanos) { it }

    /** [upgradeBlocking] that returns `onGrant(writeHold)`, a handle watched for a leak while [lock] is observed. */
    @JvmStatic
    @Throws(InterruptedException::class)
    public fun <T : Any> upgradeBlocking(lock: ReadWriteLock, upgradable: LockHold?, timeoutNanos: Long, onGrant: (LockHold) -> T): T? {
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
        if (!upgraded) return null
        val write = ReadWriteHold(impl, HoldKind.WRITE)
        return Leaks.watchIfObserved(impl.waiterQueue, onGrant(write), write) { impl.upgradePermits }
    }

    /**
     * Turns the [write] hold into a read hold, as `ReadWriteLock.downgrade()`, and returns the read hold;
     * [write] is spent (its `unlock` does nothing from then on).
     * @throws IllegalArgumentException if [write] is not a write hold of [lock].
     * @throws IllegalStateException if [write] was already ended or spent; nothing changes.
     */
    @JvmStatic
    public fun downgrade(lock: ReadWriteLock, write: LockHold?): LockHold = downgrade(lock, write) { it }

    /** [downgrade] that returns `onGrant(readHold)`, a handle watched for a leak while [lock] is observed. */
    @JvmStatic
    public fun <T : Any> downgrade(lock: ReadWriteLock, write: LockHold?, onGrant: (LockHold) -> T): T {
        val impl = lock.impl()
        val from = ReadWriteHold.spend(impl, write, HoldKind.WRITE, "downgrade")
        try {
            impl.downgrade()
        } catch (e: IllegalStateException) { // Kotlin code ended the (anonymous) write hold
            from.unspend()
            throw e
        }
        val read = ReadWriteHold(impl, HoldKind.READ)
        return Leaks.watchIfObserved(impl.waiterQueue, onGrant(read), read) { 1 }
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
     * How many handles were ever watched for a leak in this process (internal/Leaks.kt, K1): for the tests
     * that an unobserved primitive watches none.
     */
    @JvmStatic
    public fun watchedHandles(): Long = Leaks.watchedCount()

    private fun ReadWriteLock.impl(): ReadWriteLockImpl = this as? ReadWriteLockImpl ?: throw notEngineBacked(this)

    /** A pool's grant made at once: a watched handle only if the request was a try and the pool is observed (K1). */
    private inline fun <T : Any> grantedNow(queue: WaiterQueue, permits: Int, timeoutNanos: Long, onGrant: (Int) -> T, noinline onWatched: (Int, LockHold) -> T): T =
        if (timeoutNanos <= 0 && queue.observer != null) watchedPermits(queue, permits, onWatched) else onGrant(permits)

    private fun <T : Any> watchedPermits(queue: WaiterQueue, permits: Int, onWatched: (Int, LockHold) -> T): T {
        val hold = PermitHold(queue, permits)
        return Leaks.watchIfObserved(queue, onWatched(permits, hold), hold) { permits }
    }

    /** A lock hold's request that waits: by a watched waiter while [queue] is observed (K1). */
    private fun <T> requestHold(
        queue: WaiterQueue,
        permits: Int,
        priority: Int,
        grantee: dev.semaphore.internal.Grantee,
        hold: LockHold,
        onGrant: (LockHold) -> T,
        onWithdrawn: (() -> Unit)? = null,
    ): GrantFuture<T> {
        @Suppress("UNCHECKED_CAST") // T is the handle, never null (onGrant must not return null)
        if (queue.observer != null) return queue.requestWatchedFuture(permits, priority, grantee, onGrant as (LockHold) -> Any, hold, onWithdrawn) as GrantFuture<T>
        return queue.requestFuture(permits, priority, grantee, onGrant, hold, onWithdrawn)
    }

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
