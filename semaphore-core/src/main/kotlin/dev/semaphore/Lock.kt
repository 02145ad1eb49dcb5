/*
 * Lock: a one-permit WaiterQueue plus the holder's identity. The engine knows nothing of owners: the
 * holder lives here, and the Lock is the grantee (WaiterQueue.kt, W4) of every request that queues.
 *
 * Invariants (on top of WaiterQueue's):
 * L1  The queue's one permit is taken while the lock is held. `holder` is the truth for every query
 *     and the linearization point of every operation: FREE, NO_OWNER (taken on the fast path without
 *     owner), an owner object (taken on the fast path by that owner), a Hold (taken through the
 *     queue, or by a JVM caller): one acquisition with its own identity and its owner, or the
 *     PermitWaiter of an owner-less lock() that queued (the waiter is already one acquisition with
 *     its own identity, so no Hold is allocated for it). isLocked is `holder != FREE`; holdsLock(o)
 *     is `ownerOf(holder) === o`. A coroutine's next owner-less lock() that queues may use the same
 *     waiter again (Suspending.kt, C4), only once the wait that recorded it has ended; the one thing
 *     that compares it is that wait's own hand-back (L4), so each wait's identity still holds.
 * L2  Taking: a grant from the queue records its Hold under the queue's lock (Hold.granted), in the
 *     same step as the grant; the fast path records right after its CAS on the permit. Giving back:
 *     every unlock clears the holder by CAS first, then releases the permit, so of two racing unlocks
 *     only one releases and the other throws; a released permit never frees someone else's lock.
 * L3  So "permit taken but holder FREE" only lasts the few instructions between those two steps of
 *     another thread. A tryLock that meets it waits (spinWait) until the other thread finishes,
 *     instead of answering false, which could not be ordered after an unlock or before a lock that
 *     is not visible yet. With that, lock, tryLock, unlock, isLocked and holdsLock are linearizable
 *     (checked by Lincheck in semaphore-verification).
 * L4  A Hold ends exactly once: Hold.unlock clears the holder only if it is still that Hold, so a
 *     stale handle (a Java Permit whose hold someone else ended) throws and changes nothing, however
 *     the lock was re-acquired since. A hand-back (W3) clears its Hold the same way, and releases
 *     only if it did (someone may have unlocked it already with unlock(null)).
 * L5  A relock by the owner that holds the lock throws wherever it is decided: in tryTake (the fast
 *     path), and again at the offer of a lock() that must queue (Hold.readyToQueue, W5), where the
 *     holder may have changed since tryTake looked. Without the second check, lock(A) could queue
 *     behind a hold of A taken in between, waiting for itself (found by LockLincheckTest's stress).
 */
@file:OptIn(InternalSemaphoreApi::class)

package dev.semaphore

import kotlin.coroutines.coroutineContext
import dev.semaphore.bridge.InternalSemaphoreApi
import dev.semaphore.bridge.LockHold
import dev.semaphore.internal.AtomicRef
import dev.semaphore.internal.Grantee
import dev.semaphore.internal.JavaTimeDuration
import dev.semaphore.internal.PermitWaiter
import dev.semaphore.internal.Requester
import dev.semaphore.internal.WaiterQueue
import dev.semaphore.internal.WaiterQueueOwner
import dev.semaphore.internal.acquireSuspending
import dev.semaphore.internal.acquireWithin
import dev.semaphore.internal.spinWait
import dev.semaphore.internal.addListenerFor
import dev.semaphore.internal.attach
import dev.semaphore.internal.dumpOf
import dev.semaphore.internal.holdersNow
import dev.semaphore.internal.waitersNow
import dev.semaphore.internal.toSnapshot
import kotlin.contracts.ExperimentalContracts
import kotlin.contracts.InvocationKind
import kotlin.contracts.contract
import kotlin.time.Duration
import kotlin.jvm.JvmOverloads
import kotlin.jvm.JvmSynthetic

/**
 * A fair, non-reentrant, suspending mutual-exclusion lock with optional owner checks.
 *
 * Waiters are served first come, first served; while anyone waits, [tryLock] fails. An `owner`
 * (any object, compared by identity) makes misuse loud: locking again with the owner that holds
 * the lock throws instead of deadlocking, and unlocking with another owner throws. `owner = null`
 * means "no owner": no checks are possible then.
 *
 * Owners are compared by identity, so a number (a boxed `Int` or `Long` has no stable identity) or a
 * `Duration` (which reads as a timeout) does not compile as an owner: `lock(5)`, `lock(5.seconds)`,
 * `tryLock(5000)` and `withLock(5.seconds) { }` are compile errors that say what to write instead,
 * and `tryLock(5.seconds)` waits up to 5 seconds.
 *
 * ```kotlin
 * val lock = Lock()
 * lock.withLock { counter++ }
 * if (lock.tryLock(5.seconds, owner = this)) try { transfer() } finally { lock.unlock(owner = this) }
 * ```
 */
public interface Lock : Inspectable {
    /** True while the lock is held (a snapshot). */
    public val isLocked: Boolean

    /** The number of coroutines and other callers waiting for the lock (a snapshot). */
    public val queueLength: Int

    /** True once [close] was called. */
    public val isClosed: Boolean

    /**
     * Suspends until the lock is acquired for [owner]. Cancellable: cancelled while waiting, nothing is
     * held; a call that need not wait does not check for cancellation (see [Semaphore.acquire]).
     * @throws IllegalStateException if [owner] is not null and already holds this lock (it is not reentrant).
     * @throws SemaphoreClosedException if the lock is or becomes closed while waiting.
     */
    public suspend fun lock(owner: Any? = null)

    /**
     * Acquires the lock for [owner] if it is free and nobody waits; false otherwise.
     * @throws IllegalStateException if [owner] is not null and already holds this lock.
     * @throws SemaphoreClosedException if the lock is closed.
     */
    public fun tryLock(owner: Any? = null): Boolean

    /**
     * Waits at most [timeout] (coroutine time) for the lock: true with it held by [owner], false with
     * nothing held; never loses the lock to a race with the timeout. Zero or negative only tries now;
     * `Duration.INFINITE` waits without limit. The timeout comes first, as in every timed call of the
     * library: `tryLock(5.seconds)`, `tryLock(5.seconds, owner = this)`.
     * @throws IllegalStateException if [owner] is not null and already holds this lock.
     * @throws SemaphoreClosedException if the lock is or becomes closed while waiting.
     */
    public suspend fun tryLock(timeout: Duration, owner: Any? = null): Boolean

    /**
     * Releases the lock; the next waiter in line gets it. Works after [close] too.
     * @throws IllegalStateException if the lock is not held, or [owner] is not null and is not the holder.
     */
    public fun unlock(owner: Any? = null)

    /** True if the lock is held by [owner] (compared by identity). */
    public fun holdsLock(owner: Any): Boolean

    /**
     * Closes this lock: every queued waiter fails with [SemaphoreClosedException] carrying [cause], and
     * every later [lock] or [tryLock] throws it. The holder may still [unlock]. Calling it again does
     * nothing; the first cause stays. (The same as [PermitPool.close]: a Lock is a semaphore of one permit.)
     */
    public fun close(cause: Throwable? = null)

    /** Not an owner: `lock(5.seconds)` would wait without limit with the Duration as its owner. */
    @Deprecated(DURATION_IS_NOT_AN_OWNER, level = DeprecationLevel.ERROR)
    @JvmSynthetic
    public suspend fun lock(timeout: Duration): Nothing = throw IllegalArgumentException(DURATION_IS_NOT_AN_OWNER)

    /** Not an owner: owners are compared by identity, and a boxed number has none. */
    @Deprecated(NUMBER_IS_NOT_AN_OWNER, level = DeprecationLevel.ERROR)
    @JvmSynthetic
    public suspend fun lock(owner: Number): Nothing = throw IllegalArgumentException(NUMBER_IS_NOT_AN_OWNER)

    /** Not an owner: `lock(Duration.ofMillis(50))` would wait without limit with the `java.time.Duration` as its owner. */
    @Deprecated(JAVA_DURATION_IS_NOT_AN_OWNER, level = DeprecationLevel.ERROR)
    @JvmSynthetic
    public suspend fun lock(timeout: JavaTimeDuration): Nothing = throw IllegalArgumentException(JAVA_DURATION_IS_NOT_AN_OWNER)

    /** Not an owner: `tryLock(Duration.ofSeconds(5))` would not wait; it would try once with the `java.time.Duration` as its owner. */
    @Deprecated(JAVA_DURATION_IS_NOT_AN_OWNER, level = DeprecationLevel.ERROR)
    @JvmSynthetic
    public fun tryLock(owner: JavaTimeDuration): Nothing = throw IllegalArgumentException(JAVA_DURATION_IS_NOT_AN_OWNER)

    /** Not an owner: `tryLock(5000)` would not wait; it would take the lock with 5000 as its owner. */
    @Deprecated(NUMBER_IS_NOT_AN_OWNER, level = DeprecationLevel.ERROR)
    @JvmSynthetic
    public fun tryLock(owner: Number): Nothing = throw IllegalArgumentException(NUMBER_IS_NOT_AN_OWNER)
}

/** Creates a [Lock], already held (with no owner) if [locked] is true. */
@JvmOverloads
public fun Lock(locked: Boolean = false, diagnostics: Diagnostics = Diagnostics.NONE): Lock = LockImpl(locked, diagnostics)

/**
 * Locks for [owner], runs [action] and unlocks, however [action] ends.
 *
 * ```kotlin
 * lock.withLock(owner = this) { balance -= amount }
 * ```
 */
@OptIn(ExperimentalContracts::class)
public suspend inline fun <T> Lock.withLock(owner: Any? = null, action: () -> T): T {
    contract { callsInPlace(action, InvocationKind.EXACTLY_ONCE) }
    lock(owner)
    try {
        return action()
    } finally {
        unlock(owner)
    }
}

/** Not an owner: `withLock(5.seconds) { }` would wait without limit with the Duration as its owner. */
@Deprecated(WITH_LOCK_HAS_NO_TIMEOUT, level = DeprecationLevel.ERROR)
@JvmSynthetic
public fun <T> Lock.withLock(timeout: Duration, action: () -> T): T = throw IllegalArgumentException(WITH_LOCK_HAS_NO_TIMEOUT)

/** Not an owner: owners are compared by identity, and a boxed number has none. */
@Deprecated(NUMBER_IS_NOT_AN_OWNER, level = DeprecationLevel.ERROR)
@JvmSynthetic
public fun <T> Lock.withLock(owner: Number, action: () -> T): T = throw IllegalArgumentException(NUMBER_IS_NOT_AN_OWNER)

private const val DURATION_IS_NOT_AN_OWNER =
    "lock() has no timeout, and a Duration would be taken for its owner: use tryLock(timeout), which returns false when the time runs out"

/** Not an owner: `withLock(Duration.ofSeconds(5)) { }` would wait without limit with the `java.time.Duration` as its owner. */
@Deprecated(JAVA_DURATION_IS_NOT_AN_OWNER, level = DeprecationLevel.ERROR)
@JvmSynthetic
public fun <T> Lock.withLock(timeout: JavaTimeDuration, action: () -> T): T = throw IllegalArgumentException(JAVA_DURATION_IS_NOT_AN_OWNER)

private const val JAVA_DURATION_IS_NOT_AN_OWNER =
    "a java.time.Duration is not an owner, and lock() has no timeout: for a timeout, pass a kotlin.time.Duration, " +
        "tryLock(timeout.toKotlinDuration()), which returns false when the time runs out"

private const val NUMBER_IS_NOT_AN_OWNER =
    "a number is not an owner: owners are compared by identity, and a boxed number has none. " +
        "For a timeout, pass a Duration: tryLock(5.seconds)"

private const val WITH_LOCK_HAS_NO_TIMEOUT =
    "withLock has no timeout, and a Duration would be taken for its owner: " +
        "if (lock.tryLock(timeout)) try { ... } finally { lock.unlock() }"

internal class LockImpl(locked: Boolean, private val diagnostics: Diagnostics = Diagnostics.NONE) : Lock, WaiterQueueOwner {
    override val waiterQueue: WaiterQueue = WaiterQueue.fifo(1)
    private val holder = AtomicRef<Any>(FREE)
    override val name: String? get() = diagnostics.name

    init {
        waiterQueue.attach(this, "Lock", diagnostics) // first, so that a lock created locked has its holder recorded
        if (locked) {
            waiterQueue.tryAcquirePermits(1, 0, false, null, Requester.CREATED_LOCKED)
            holder.store(NO_OWNER)
        }
    }

    override fun snapshot(): SemaphoreSnapshot = waiterQueue.readCounts { it.toSnapshot("Lock", name) }

    override fun addListener(listener: SemaphoreListener): ListenerRegistration =
        waiterQueue.addListenerFor(this, "Lock", diagnostics, listener)

    override fun holders(): List<HoldInfo> = waiterQueue.holdersNow()

    override fun waiters(): List<WaitInfo> = waiterQueue.waitersNow()

    override fun dump(): String = dumpOf(this)

    override val isLocked: Boolean get() = holder.load() !== FREE
    override val queueLength: Int get() = waiterQueue.queueLength
    override val isClosed: Boolean get() = waiterQueue.isClosed

    override suspend fun lock(owner: Any?) {
        if (!tryTake(owner, owner ?: NO_OWNER, mayWait = true)) waiterQueue.acquireSuspending(1, 0, if (owner == null) ownerless else Hold(owner))
    }

    /** The grantee of every owner-less lock() that queues: the waiter is the hold (L1, L2, L4). */
    private val ownerless = object : Grantee {
        override val queue: WaiterQueue get() = waiterQueue

        override fun granted(w: PermitWaiter) = holder.store(w)

        override fun handBack(w: PermitWaiter) {
            if (holder.cas(w, FREE)) waiterQueue.release(1)
        }

        /** L1: the waiter is compared only by its own wait's hand-back. */
        override val reusesWaiters: Boolean get() = true
    }

    override fun tryLock(owner: Any?): Boolean = tryTake(owner, owner ?: NO_OWNER) || waiterQueue.refused(1)

    /**
     * The fast path: takes the lock for [owner] if it is free and nobody waits, recording [record] (L2, L3).
     * A caller that queues a waiter when this fails ([mayWait]) gets false at once while others wait, or
     * while the lock is observed (the waiter then says who takes the lock: Observer.kt, O1).
     */
    fun tryTake(owner: Any?, record: Any, mayWait: Boolean = false, asker: Any? = null): Boolean {
        var step = 0
        while (true) {
            val h = holder.load()
            check(owner == null || ownerOf(h) !== owner) { "the lock is already held by $owner; Lock is not reentrant" }
            if (h !== FREE) {
                waiterQueue.checkOpen() // a closed lock refuses every acquisition, held or not
                return false
            }
            if (waiterQueue.tryAcquirePermits(1, 0, mayWait, owner, asker)) {
                holder.store(record)
                return true
            }
            if (mayWait && (waiterQueue.observer != null || waiterQueue.queueLength > 0)) return false // the offer decides (W5)
            // The permit is taken but no holder is recorded: another thread is between its two steps (L3).
            spinWait(step++)
        }
    }

    override suspend fun tryLock(timeout: Duration, owner: Any?): Boolean {
        // Zero or negative: the same try as tryLock(owner), naming the coroutine (Observer.kt, H1). (A try that may
        // wait answers false at once while observed, leaving the grant to the waiter, which names it.)
        if (!timeout.isPositive()) return tryTake(owner, owner ?: NO_OWNER, asker = coroutineContext) || waiterQueue.refused(1)
        if (tryTake(owner, owner ?: NO_OWNER, mayWait = true)) return true
        val hold = Hold(owner)
        return waiterQueue.acquireWithin(1, 0, hold, timeout) { hold.end() }
    }

    override fun unlock(owner: Any?) {
        while (true) {
            val h = holder.load()
            check(h !== FREE) { "unlock of a lock that is not locked (owner=$owner)" }
            check(owner == null || ownerOf(h) === owner) { "the lock is held by ${describe(h)}, not by $owner" }
            if (holder.cas(h, FREE)) break
        }
        waiterQueue.release(1)
    }

    override fun holdsLock(owner: Any): Boolean = ownerOf(holder.load()) === owner

    override fun close(cause: Throwable?) = waiterQueue.close(cause)

    override fun toString(): String = "Lock(holder=${describe(holder.load())}, queued=$queueLength)"

    /** One acquisition through the queue or by a JVM caller, with an identity of its own (L1, L4). */
    inner class Hold(override val owner: Any?) : LockHold, Grantee {
        override val queue: WaiterQueue get() = waiterQueue

        override fun granted(w: PermitWaiter) = holder.store(this)

        override fun handBack(w: PermitWaiter) = end()

        /**
         * W5 (L5): the owner check at the offer, in one step with the queueing. The permit is taken (the
         * request does not fit), so a FREE holder is another thread between its two steps: a fast-path
         * take not yet recorded (L3), or an unlock not yet released; the offer tries again.
         */
        override fun readyToQueue(w: PermitWaiter): Boolean {
            if (owner == null) return true
            val h = holder.load()
            check(ownerOf(h) !== owner) { "the lock is already held by $owner; Lock is not reentrant" }
            return h !== FREE
        }

        /** Ends this hold if it is still current (L4); if someone already unlocked it, there is nothing to give back. */
        fun end() {
            if (holder.cas(this, FREE)) waiterQueue.release(1)
        }

        override fun unlock() {
            check(holder.cas(this, FREE)) { "this hold of the lock has already ended: the lock is held by ${describe(holder.load())}" }
            waiterQueue.release(1)
        }

        override val isHeld: Boolean get() = holder.load() === this

        override val permits: Int get() = 1

        override fun toString(): String = "LockHold(owner=$owner)"
    }

    private companion object {
        val FREE = Any()
        val NO_OWNER = Any()

        fun ownerOf(h: Any): Any? = when {
            h is Hold -> h.owner
            h === FREE || h === NO_OWNER || h is PermitWaiter -> null
            else -> h
        }

        fun describe(h: Any): String = when {
            h === FREE -> "nobody"
            ownerOf(h) == null -> "a caller without owner"
            else -> ownerOf(h).toString()
        }
    }
}
