/*
 * Lock: a one-permit WaiterQueue plus the holder's identity.
 *
 * Invariants (on top of WaiterQueue's):
 * L1  The queue's one permit is taken while the lock is held. `holder` is the truth for every
 *     query and the linearization point of every operation: isLocked is `holder != FREE`,
 *     holdsLock(o) is `holder === o`.
 * L2  Taking: a grant from the queue records the holder under the queue's lock (GrantTracker.onGrant),
 *     in the same step as the grant; the fast path records it right after its CAS on the permit.
 *     Giving back: unlock (and the hand-back of a cancelled grant) clears the holder by CAS first,
 *     then releases the permit.
 * L3  So "permit taken but holder FREE" only lasts the few instructions between those two steps of
 *     another thread. A tryLock that meets it waits (spinWait) until the other thread finishes,
 *     instead of answering false, which could not be ordered after an unlock or before a lock that
 *     is not visible yet. With that, lock, tryLock, unlock, isLocked and holdsLock are linearizable
 *     (checked by Lincheck in semaphore-verification).
 * L4  The CAS in unlock makes two racing unlocks safe: only one can clear the holder and release; the
 *     other throws IllegalStateException. A released permit can never free someone else's lock.
 * L5  A waiter granted but cancelled before it resumed clears the holder and releases (onHandBack).
 */
package dev.semaphore

import dev.semaphore.internal.AtomicRef
import dev.semaphore.internal.GrantTracker
import dev.semaphore.internal.InternalSemaphoreApi
import dev.semaphore.internal.PermitWaiter
import dev.semaphore.internal.WaiterQueue
import dev.semaphore.internal.WaiterQueueOwner
import dev.semaphore.internal.acquireSuspending
import dev.semaphore.internal.acquireWithin
import dev.semaphore.internal.spinWait
import kotlin.contracts.ExperimentalContracts
import kotlin.contracts.InvocationKind
import kotlin.contracts.contract
import kotlin.time.Duration

/**
 * A fair, non-reentrant, suspending mutual-exclusion lock with optional owner checks.
 *
 * Waiters are served first come, first served; while anyone waits, [tryLock] fails. An `owner`
 * (any object, compared by identity) makes misuse loud: locking again with the owner that holds
 * the lock throws instead of deadlocking, and unlocking with another owner throws. `owner = null`
 * means "no owner": no checks are possible then.
 *
 * ```kotlin
 * val lock = Lock()
 * lock.withLock { counter++ }
 * ```
 */
public interface Lock {
    /** True while the lock is held (a snapshot). */
    public val isLocked: Boolean

    /** The number of coroutines and other callers waiting for the lock (a snapshot). */
    public val queueLength: Int

    /**
     * Suspends until the lock is acquired for [owner]. Cancellable: cancelled while waiting, nothing is held.
     * @throws IllegalStateException if [owner] is not null and already holds this lock (it is not reentrant).
     */
    public suspend fun lock(owner: Any? = null)

    /**
     * Acquires the lock for [owner] if it is free and nobody waits; false otherwise.
     * @throws IllegalStateException if [owner] is not null and already holds this lock.
     */
    public fun tryLock(owner: Any? = null): Boolean

    /**
     * Waits at most [timeout] (coroutine time) for the lock: true with it held by [owner], false with
     * nothing held; never loses the lock to a race with the timeout. Zero or negative only tries now.
     * @throws IllegalStateException if [owner] is not null and already holds this lock.
     */
    public suspend fun tryLock(owner: Any? = null, timeout: Duration): Boolean

    /**
     * Releases the lock; the next waiter in line gets it.
     * @throws IllegalStateException if the lock is not held, or [owner] is not null and is not the holder.
     */
    public fun unlock(owner: Any? = null)

    /** True if the lock is held by [owner] (compared by identity). */
    public fun holdsLock(owner: Any): Boolean
}

/** Creates a [Lock], already held (with no owner) if [locked] is true. */
public fun Lock(locked: Boolean = false): Lock = LockImpl(locked)

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

@OptIn(InternalSemaphoreApi::class)
internal class LockImpl(locked: Boolean) : Lock, WaiterQueueOwner, GrantTracker {
    override val waiterQueue: WaiterQueue = WaiterQueue.fifo(1)
    private val holder = AtomicRef<Any>(FREE)

    init {
        waiterQueue.tracker = this
        if (locked) {
            waiterQueue.tryAcquire(1)
            holder.store(NO_OWNER)
        }
    }

    override val isLocked: Boolean get() = holder.load() !== FREE
    override val queueLength: Int get() = waiterQueue.queueLength

    override suspend fun lock(owner: Any?) {
        if (!tryLock(owner)) waiterQueue.acquireSuspending(1, 0, owner)
    }

    override fun tryLock(owner: Any?): Boolean {
        var step = 0
        while (true) {
            val h = holder.load()
            check(owner == null || h !== owner) { "the lock is already held by $owner; Lock is not reentrant" }
            if (h !== FREE) return false
            if (waiterQueue.tryAcquire(1)) {
                holder.store(owner ?: NO_OWNER)
                return true
            }
            // The permit is taken but no holder is recorded: another thread is between its two steps (L3).
            spinWait(step++)
        }
    }

    override suspend fun tryLock(owner: Any?, timeout: Duration): Boolean =
        tryLock(owner) || waiterQueue.acquireWithin(1, 0, owner, timeout) { unlock(owner) }

    override fun unlock(owner: Any?) {
        while (true) {
            val h = holder.load()
            check(h !== FREE) { "unlock of a lock that is not locked (owner=$owner)" }
            check(owner == null || h === owner) { "the lock is held by ${describe(h)}, not by $owner" }
            if (holder.cas(h, FREE)) break
        }
        waiterQueue.release(1)
    }

    override fun holdsLock(owner: Any): Boolean = holder.load() === owner

    override fun onGrant(w: PermitWaiter) = holder.store(w.owner ?: NO_OWNER)

    override fun onHandBack(w: PermitWaiter) {
        holder.cas(w.owner ?: NO_OWNER, FREE)
    }

    override fun toString(): String = "Lock(holder=${describe(holder.load())}, queued=$queueLength)"

    private companion object {
        val FREE = Any()
        val NO_OWNER = Any()

        fun describe(h: Any): String = when {
            h === FREE -> "nobody"
            h === NO_OWNER -> "a caller without owner"
            else -> h.toString()
        }
    }
}
