/*
 * Waiting for permits without a coroutine, on the JVM: as a CompletableFuture, or by parking the
 * calling thread. These are the building blocks of the Java API (module semaphore-java-api, which adds
 * Permit, java.time.Duration overloads and withPermit over CompletionStage); Kotlin code on the JVM
 * may use them too. Futures and threads stand in the same line as the coroutines of the same
 * primitive and follow the same waiter protocol (internal/WaiterQueue.kt, W1..W4).
 */
@file:JvmName("JavaBridge")

package dev.semaphore

import dev.semaphore.internal.GrantFuture
import dev.semaphore.internal.ReadWriteHold
import dev.semaphore.internal.acquireBlocking
import dev.semaphore.internal.notEngineBacked
import dev.semaphore.internal.requestFuture
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import kotlin.time.toKotlinDuration

/**
 * Requests [permits] permits as a future, waiting at most [timeout] (`Long.MAX_VALUE`: no limit; zero
 * or negative: only tries now). When they are granted, [onGrant] is called with [permits] and the
 * future completes with its result, the caller's handle on the permits (it must not throw).
 *
 * Completing the future yourself (cancel, complete, completeExceptionally, and the timeout through
 * `orTimeout`) withdraws the request, and permits granted in that same instant are released: a
 * `cancel` that returns false means the future holds the handle. The future refuses `obtrude*`. It
 * completes on the thread that frees the permits. These rules are written out for callers in the
 * package documentation of `dev.semaphore.async` (module semaphore-java-api), the API built on this one.
 * @throws IllegalArgumentException if [permits] < 1 or more than the total, or this semaphore was not
 *     made by the library's factories; nothing is queued. A closed semaphore gives a failed future.
 */
public fun <T> Semaphore.acquireAsync(permits: Int, timeout: Long, unit: TimeUnit, onGrant: (Int) -> T): CompletableFuture<T> {
    val pool = this as? QueueBackedPool ?: throw notEngineBacked(this)
    return future({ pool.waiterQueue.tryAcquirePermits(permits) }, { onGrant(permits) }) {
        pool.waitFuture(permits, 0, timeout, unit, onGrant)
    }
}

/** [Semaphore.acquireAsync] for a request of [priority]. */
public fun <T> PrioritySemaphore.acquireAsync(
    priority: Int,
    permits: Int,
    timeout: Long,
    unit: TimeUnit,
    onGrant: (Int) -> T,
): CompletableFuture<T> {
    val pool = this as? QueueBackedPool ?: throw notEngineBacked(this)
    return future({ pool.waiterQueue.tryAcquirePermits(permits, priority) }, { onGrant(permits) }) {
        pool.waitFuture(permits, priority, timeout, unit, onGrant)
    }
}

/**
 * Requests the lock for [owner] (null: none) as a future of `onGrant(hold)`, where the [LockHold] is
 * this acquisition's own identity: its `unlock` ends exactly this hold. Otherwise as
 * [Semaphore.acquireAsync].
 * @throws IllegalStateException if [owner] is not null and already holds the lock (it is not reentrant).
 */
public fun <T> Lock.lockAsync(owner: Any?, timeout: Long, unit: TimeUnit, onGrant: (LockHold) -> T): CompletableFuture<T> {
    val lock = this as? LockImpl ?: throw notEngineBacked(this)
    val hold = lock.Hold(owner)
    return future({ lock.tryTake(owner, hold) }, { onGrant(hold) }) { hold.waitFuture(timeout, unit, onGrant) }
}

/**
 * Blocks the calling thread until [permits] permits are granted (true) or [timeout] passes (false,
 * nothing held; `Long.MAX_VALUE`: no limit; zero or negative: only tries now), in the same line as
 * futures and coroutines, parked with `LockSupport` (a virtual thread frees its carrier). An interrupt
 * before or during the wait throws `InterruptedException` with nothing held, even if the permits were
 * granted in that same instant (see `dev.semaphore.async`'s package documentation).
 * @throws IllegalArgumentException if [permits] < 1 or more than the total (nothing is queued).
 * @throws SemaphoreClosedException if the semaphore is or becomes closed.
 */
@Throws(InterruptedException::class)
public fun Semaphore.acquireBlocking(permits: Int, timeout: Long, unit: TimeUnit): Boolean {
    val pool = this as? QueueBackedPool ?: throw notEngineBacked(this)
    val queue = pool.waiterQueue
    return block(timeout, unit, { queue.tryAcquirePermits(permits) }) { queue.acquireBlocking(permits, 0, pool, it) }
}

/** [Semaphore.acquireBlocking] for a request of [priority]. */
@Throws(InterruptedException::class)
public fun PrioritySemaphore.acquireBlocking(priority: Int, permits: Int, timeout: Long, unit: TimeUnit): Boolean {
    val pool = this as? QueueBackedPool ?: throw notEngineBacked(this)
    val queue = pool.waiterQueue
    return block(timeout, unit, { queue.tryAcquirePermits(permits, priority) }) { queue.acquireBlocking(permits, priority, pool, it) }
}

/**
 * Blocks until the lock is granted to [owner] (null: none) and returns its [LockHold], or null if
 * [timeout] passed. Otherwise as [Semaphore.acquireBlocking].
 * @throws IllegalStateException if [owner] is not null and already holds the lock.
 */
@Throws(InterruptedException::class)
public fun Lock.lockBlocking(owner: Any?, timeout: Long, unit: TimeUnit): LockHold? {
    val lock = this as? LockImpl ?: throw notEngineBacked(this)
    val hold = lock.Hold(owner)
    val held = block(timeout, unit, { lock.tryTake(owner, hold) }) { lock.waiterQueue.acquireBlocking(1, 0, hold, it) }
    return if (held) hold else null
}

/** The kinds of hold of a [ReadWriteLock] that [ReadWriteLock.lockAsync] and [ReadWriteLock.lockBlocking] request. */
public enum class HoldKind { READ, WRITE, UPGRADABLE_READ }

/**
 * Requests a hold of [kind] as a future of `onGrant(hold)`, in the one line of the lock's coroutines,
 * futures and threads. The [LockHold] is this acquisition's own identity: its `unlock` ends exactly one
 * hold of its kind, once (a second call throws `IllegalStateException`); once spent by
 * [ReadWriteLock.upgradeAsync] or [ReadWriteLock.downgrade], its `unlock` does nothing. (The Kotlin
 * holds are anonymous: Kotlin code that calls `unlockRead()` and so on may end a hold of the same kind
 * that a JVM caller took; do not mix the two on one hold.) Otherwise as [Semaphore.acquireAsync].
 * @throws IllegalArgumentException if this lock was not made by the library's `ReadWriteLock()`.
 */
public fun <T> ReadWriteLock.lockAsync(kind: HoldKind, timeout: Long, unit: TimeUnit, onGrant: (LockHold) -> T): CompletableFuture<T> {
    val lock = this as? ReadWriteLockImpl ?: throw notEngineBacked(this)
    val hold = ReadWriteHold(lock, kind)
    return future({ hold.tryTake() }, { onGrant(hold) }) { lock.waitFuture(hold, timeout, unit, onGrant) }
}

/**
 * Blocks until a hold of [kind] is granted and returns it (see [ReadWriteLock.lockAsync]), or null if
 * [timeout] passed. Otherwise as [Semaphore.acquireBlocking].
 */
@Throws(InterruptedException::class)
public fun ReadWriteLock.lockBlocking(kind: HoldKind, timeout: Long, unit: TimeUnit): LockHold? {
    val lock = this as? ReadWriteLockImpl ?: throw notEngineBacked(this)
    val hold = ReadWriteHold(lock, kind)
    val held = block(timeout, unit, { hold.tryTake() }) { lock.waiterQueue.acquireBlocking(hold.permits(), 0, hold.grantee(), it) }
    return if (held) hold else null
}

/**
 * Turns the [upgradable] read hold (taken through [ReadWriteLock.lockAsync] or [ReadWriteLock.lockBlocking])
 * into the write hold, as [ReadWriteLock.upgrade]: a future of `onGrant(writeHold)`. If the upgrade does
 * not happen (timeout, or the future completed by the caller first), [upgradable] still holds the
 * upgradable read, as after a failed [ReadWriteLock.upgrade]; once it happens, [upgradable] is spent (its
 * `unlock` does nothing). Unlocking [upgradable] while its upgrade is pending withdraws the upgrade and
 * ends the upgradable read (ReadWriteHold.kt, H2-H3).
 * @throws IllegalArgumentException if [upgradable] is not an upgradable read hold of this lock.
 * @throws IllegalStateException if [upgradable] was already ended, spent or is being upgraded; nothing changes.
 */
public fun <T> ReadWriteLock.upgradeAsync(upgradable: LockHold?, timeout: Long, unit: TimeUnit, onGrant: (LockHold) -> T): CompletableFuture<T> {
    val lock = this as? ReadWriteLockImpl ?: throw notEngineBacked(this)
    val from = ReadWriteHold.beginUpgrade(lock, upgradable)
    val request = lock.UpgradeRequest(from::upgradeFailed)
    val write = ReadWriteHold(lock, HoldKind.WRITE)
    val notUpgraded = { upgradeNeverGranted(lock, from) } // before the future fails (W2's withdrawal hook)
    // A delivered future spends `from` (H3: its unlock finds the future done); a grant that the future
    // refuses is handed back, and the request's afterHandBack gives `from` its upgradable read back.
    return future({ takeUpgradeNow(lock, request) }, { onGrant(write) }) {
        waitFor(timeout, unit, notUpgraded) {
            lock.waiterQueue.requestFuture(lock.upgradePermits, ReadWriteLockImpl.UPGRADE_PRIORITY, request, onGrant, write, notUpgraded)
        }
    }.also { from.upgrade = it }
}

/**
 * Blocks until the [upgradable] read hold becomes the write hold, and returns that (null if [timeout]
 * passed); as [ReadWriteLock.upgradeAsync], so [upgradable] still holds the upgradable read if the
 * upgrade does not happen (timeout, interrupt). Otherwise as [Semaphore.acquireBlocking].
 */
@Throws(InterruptedException::class)
public fun ReadWriteLock.upgradeBlocking(upgradable: LockHold?, timeout: Long, unit: TimeUnit): LockHold? {
    val lock = this as? ReadWriteLockImpl ?: throw notEngineBacked(this)
    val from = ReadWriteHold.beginUpgrade(lock, upgradable)
    val request = lock.UpgradeRequest(from::upgradeFailed)
    var upgraded = false
    try {
        upgraded = block(timeout, unit, { takeUpgradeNow(lock, request) }) {
            lock.waiterQueue.acquireBlocking(lock.upgradePermits, ReadWriteLockImpl.UPGRADE_PRIORITY, request, it)
        }
    } finally {
        if (upgraded) from.upgraded() else if (!request.wasGranted) upgradeNeverGranted(lock, from) // else handed back (H2)
    }
    return if (upgraded) ReadWriteHold(lock, HoldKind.WRITE) else null
}

/**
 * Turns the [write] hold into a read hold, as [ReadWriteLock.downgrade], and returns the read hold;
 * [write] is spent (its `unlock` does nothing from then on).
 * @throws IllegalArgumentException if [write] is not a write hold of this lock.
 * @throws IllegalStateException if [write] was already ended or spent; nothing changes.
 */
public fun ReadWriteLock.downgrade(write: LockHold?): LockHold {
    val lock = this as? ReadWriteLockImpl ?: throw notEngineBacked(this)
    val from = ReadWriteHold.spend(lock, write, HoldKind.WRITE, "downgrade")
    try {
        lock.downgrade()
    } catch (e: IllegalStateException) { // Kotlin code ended the (anonymous) write hold
        from.unspend()
        throw e
    }
    return ReadWriteHold(lock, HoldKind.READ)
}

private fun takeUpgradeNow(lock: ReadWriteLockImpl, request: ReadWriteLockImpl.UpgradeRequest): Boolean =
    lock.tryTakeUpgrade().also { if (it) request.wasGranted = true }

/** An upgrade never granted leaves (RW5); the upgradable read is its caller's handle's again (H2). */
private fun upgradeNeverGranted(lock: ReadWriteLockImpl, from: ReadWriteHold) {
    lock.endUpgradeAttempt()
    from.upgradeFailed()
}

/**
 * Creates a [PrioritySemaphore] whose waiters age by one priority step per [aging] waited (null: no
 * aging), on the monotonic clock: the Kotlin factory takes a `kotlin.time.Duration`, which Java cannot pass.
 * @throws IllegalArgumentException if [permits] < 0 or [aging] is not positive.
 */
public fun PrioritySemaphore(permits: Int, aging: java.time.Duration?): PrioritySemaphore =
    PrioritySemaphore(permits, aging?.toKotlinDuration())

/**
 * A request as a future. Its part that runs when the request is granted at once ([tryNow], then
 * [grantNow]'s handle as a done future) is inline and small, so that the JIT inlines the whole
 * uncontended acquire into its caller; [wait], the part for a request not granted at once, calls one
 * of the out-of-line functions below ([waitFuture] and [waitFor]). A closed semaphore gives a failed future.
 */
private inline fun <T> future(tryNow: () -> Boolean, grantNow: () -> T, wait: () -> CompletableFuture<T>): CompletableFuture<T> {
    val granted = try {
        tryNow()
    } catch (e: SemaphoreClosedException) {
        return failedFuture(e)
    }
    if (!granted) return wait()
    val handle = grantNow()
    return selfFuture(handle) ?: doneFuture(handle)
}

/** A request for [permits] permits of this pool that was not granted at once (see [future]). */
private fun <T> QueueBackedPool.waitFuture(permits: Int, priority: Int, timeout: Long, unit: TimeUnit, onGrant: (Int) -> T): CompletableFuture<T> =
    waitFor(timeout, unit) { waiterQueue.requestFuture(permits, priority, this, onGrant, permits) }

/** A request for this Lock hold that was not granted at once (see [future]). */
private fun <T> LockImpl.Hold.waitFuture(timeout: Long, unit: TimeUnit, onGrant: (LockHold) -> T): CompletableFuture<T> =
    waitFor(timeout, unit) { queue.requestFuture(1, 0, this, onGrant, this) }

/** A request for this ReadWriteLock hold that was not granted at once (see [future]). */
private fun <T> ReadWriteLockImpl.waitFuture(hold: ReadWriteHold, timeout: Long, unit: TimeUnit, onGrant: (LockHold) -> T): CompletableFuture<T> =
    waitFor(timeout, unit) { waiterQueue.requestFuture(hold.permits(), 0, hold.grantee(), onGrant, hold) }

/**
 * The future of a request not granted at once: [queue] offers its waiter, unless [timeout] only allowed a
 * try ([notNow] is then called before the future fails with a TimeoutException).
 */
private inline fun <T> waitFor(timeout: Long, unit: TimeUnit, notNow: () -> Unit = {}, queue: () -> GrantFuture<T>): CompletableFuture<T> {
    return try {
        val nanos = unit.toNanos(timeout)
        when {
            nanos <= 0 -> GrantFuture<T>().also { notNow(); it.fail(TimeoutException("not granted at once, and the timeout was $timeout $unit")) }
            nanos == Long.MAX_VALUE -> queue()
            else -> queue().orTimeout(nanos, TimeUnit.NANOSECONDS)
        }
    } catch (e: SemaphoreClosedException) {
        failedFuture(e)
    }
}

private fun <T> failedFuture(e: SemaphoreClosedException): CompletableFuture<T> = GrantFuture<T>().also { it.fail(e) }

private fun <T> doneFuture(handle: T): CompletableFuture<T> = GrantFuture<T>().also { it.deliver(handle) }

/**
 * A handle that is already a future completed with itself (the Java API's Permit) is its own future
 * when granted at once: no second object. Completing or cancelling it does nothing, as on any done
 * future, so the handle stays the caller's, as the withdrawal rules say of a cancel that returns false.
 */
@Suppress("UNCHECKED_CAST")
private fun <T> selfFuture(handle: T): CompletableFuture<T>? =
    if (handle is CompletableFuture<*> && handle.getNow(null) === handle) handle as CompletableFuture<T> else null

private inline fun block(timeout: Long, unit: TimeUnit, tryNow: () -> Boolean, wait: (Long) -> Boolean): Boolean {
    if (Thread.interrupted()) throw InterruptedException("interrupted before waiting for permits")
    if (tryNow()) return true
    val nanos = unit.toNanos(timeout)
    return nanos > 0 && wait(nanos)
}
