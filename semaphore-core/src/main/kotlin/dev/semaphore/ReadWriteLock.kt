/*
 * ReadWriteLock: the public contract (the interface, its factories and the with*Lock helpers). The
 * implementation, its encoding on the engine and its rules RW1-RW5, is ReadWriteLockImpl.kt.
 */
package dev.semaphore

import kotlin.coroutines.coroutineContext
import kotlin.contracts.ExperimentalContracts
import kotlin.contracts.InvocationKind
import kotlin.contracts.contract
import kotlin.jvm.JvmOverloads
import kotlin.time.Duration

/**
 * A fair, suspending read-write lock: many readers or one writer, with downgrade and one upgradable
 * reader at a time.
 *
 * - **Strict FIFO** (the default [policy], [ReadWritePolicy.FIFO]): readers, writers and upgradable
 *   readers stand in one line. The readers that are consecutive at the head of the line are granted
 *   together; a queued writer makes every request after it wait, readers included. So writers are not
 *   starved by a stream of readers, and readers are not starved by writers.
 *   [ReadWritePolicy.PHASE_FAIR], chosen at creation, admits every waiting reader together when a write
 *   ends, then the next writer; [ReadWritePolicy.WRITERS_LINE] lets writers wait in a line of their own
 *   and only one of them at a time in the lock's line, for read-mostly work. Their guarantees are listed
 *   there. The rest of this page holds for every policy, except where it says "the line" for FIFO's one
 *   line: read it there as the policy's order.
 * - **No barging**: the `try` forms succeed only if the request would be served now with nobody
 *   ahead of it in the line.
 * - **Cancellation-safe**: a waiter cancelled (or timed out) while queued leaves the line at once, and
 *   those behind it are granted if they now fit: a cancelled writer at the head lets the readers
 *   behind it join the current readers. A waiter granted but cancelled before it resumed gives its
 *   hold back. Timeouts are measured in coroutine time (virtual under `runTest`).
 * - **Downgrade** turns the write hold into a read hold without letting anyone in between.
 * - **Upgradable read**: a read hold that can later become the write hold ([upgrade]) without being
 *   released on the way, so no writer can slip in between. At most one at a time; it shares the lock
 *   with plain readers, not with writers.
 * - **Not reentrant**, and there are no owners: the lock counts holds, it does not know who holds
 *   them. A coroutine that takes a read hold while it already holds one can deadlock: if a writer
 *   queued in between, the second read waits behind that writer, which waits for the first read.
 *   The same goes for taking any hold while holding another (write, then read; read, then write).
 * - Misuse (ending a hold of a kind that is not held) throws `IllegalStateException` naming what was
 *   wrong, and changes nothing.
 *
 * ```kotlin
 * val lock = ReadWriteLock()
 * val value = lock.withReadLock { cache[key] }
 * lock.withWriteLock { cache[key] = computed }
 * ```
 *
 * Limits: at most 2^30 read holds at once (2^29 - 1 beside the upgradable read); a reader beyond that
 * waits in line until a read hold ends.
 *
 * Create one with the [ReadWriteLock] factory function.
 */
public interface ReadWriteLock : Inspectable {
    /** The order this lock serves its waiters in, chosen at creation. */
    public val policy: ReadWritePolicy

    /** The read holds right now, the upgradable read counting as one (a snapshot). */
    public val readHolds: Int

    /** True while the write hold is taken (a snapshot). */
    public val isWriteLocked: Boolean

    /** The number of waiters in line right now, of every kind, a waiting [upgrade] included (a snapshot). */
    public val queueLength: Int

    /** True once [close] was called. */
    public val isClosed: Boolean

    /**
     * Suspends until a read hold is granted: when this request is at the head of the line (at once
     * if the line is empty) and the write hold is not taken. Cancellable: cancelled while waiting, it
     * leaves the line and nothing is held.
     */
    public suspend fun lockRead()

    /**
     * Takes a read hold if it would be granted now with nobody ahead in the line: true then, false
     * (nothing held) if the write hold is taken or anyone is queued. Never suspends.
     */
    public fun tryLockRead(): Boolean

    /**
     * Waits at most [timeout] (coroutine time: virtual under `runTest`) for a read hold: true with
     * it held, false with nothing held; a grant that races the timeout is never lost. Zero or
     * negative only tries now (as [tryLockRead]); `Duration.INFINITE` waits without limit.
     */
    public suspend fun tryLockRead(timeout: Duration): Boolean

    /**
     * Ends one read hold; when the last read hold ends, the line moves on.
     * @throws IllegalStateException if no plain read hold is taken (the upgradable read is ended by
     *     [unlockUpgradableRead], the write hold by [unlockWrite]); nothing changes.
     */
    public fun unlockRead()

    /**
     * Suspends until the write hold is granted: when this request is first in line and no other hold
     * is taken. While it waits, it makes every later request wait too. Cancellable: cancelled while
     * waiting, it leaves the line, nothing is held, and the readers behind it are granted if they
     * now fit.
     */
    public suspend fun lockWrite()

    /**
     * Takes the write hold if no hold is taken and nobody is queued; false otherwise, with nothing
     * held. Never suspends.
     */
    public fun tryLockWrite(): Boolean

    /**
     * Waits at most [timeout] (coroutine time) for the write hold: true with it held, false with
     * nothing held (and those behind it granted if they now fit); never loses a grant that races
     * the timeout. Zero or negative only tries now; `Duration.INFINITE` waits without limit.
     */
    public suspend fun tryLockWrite(timeout: Duration): Boolean

    /**
     * Ends the write hold (taken by [lockWrite] or its try forms, or by [upgrade]); the line moves on.
     * @throws IllegalStateException if the write hold is not taken; nothing changes.
     */
    public fun unlockWrite()

    /**
     * Turns the write hold into a read hold, atomically: no other writer can get in between. Then the
     * readers (and an upgradable reader) now at the head of the line are granted; a writer first in
     * line keeps waiting, and so do all requests behind it (FIFO; with [ReadWritePolicy.PHASE_FAIR],
     * every waiting reader is granted, before the next writer). Never suspends. End the read hold
     * with [unlockRead].
     * @throws IllegalStateException if the write hold is not taken; nothing changes.
     */
    public fun downgrade()

    /**
     * Suspends until the upgradable read is granted: when this request is first in line, no write
     * hold is taken and no other upgradable read is held. It shares the lock with plain readers.
     * End it with [unlockUpgradableRead], or turn it into the write hold with [upgrade].
     * Cancellable: cancelled while waiting, nothing is held.
     */
    public suspend fun lockUpgradableRead()

    /**
     * Takes the upgradable read if it would be granted now with nobody ahead in the line; false
     * otherwise (a write hold or another upgradable read taken, or anyone queued), with nothing held.
     */
    public fun tryLockUpgradableRead(): Boolean

    /**
     * Waits at most [timeout] (coroutine time) for the upgradable read: true with it held, false with
     * nothing held; never loses a grant that races the timeout. Zero or negative only tries now.
     */
    public suspend fun tryLockUpgradableRead(timeout: Duration): Boolean

    /**
     * Ends the upgradable read; the line moves on.
     * @throws IllegalStateException if the upgradable read is not held (after [upgrade] the hold is
     *     the write hold: end it with [unlockWrite]), or an [upgrade] of it is in progress; nothing changes.
     */
    public fun unlockUpgradableRead()

    /**
     * Turns the upgradable read into the write hold. Suspends until every other read hold has ended;
     * it is served before everyone queued, and while it waits no new reader is let in. It never
     * releases the upgradable read on the way, so no writer can slip in between. Afterwards the hold
     * is the write hold: end it with [unlockWrite] (or [downgrade] it to a plain read hold).
     *
     * Cancellable: cancelled while waiting (or granted, but cancelled before it resumed), the caller
     * still holds the upgradable read, and the readers that the waiting upgrade held back are let in.
     * @throws IllegalStateException if the upgradable read is not held, or another upgrade of it is in
     *     progress; nothing changes.
     */
    public suspend fun upgrade()

    /**
     * [upgrade], waiting at most [timeout] (coroutine time): true with the write hold, false with
     * the upgradable read still held (and the readers it held back let in); never loses a grant
     * that races the timeout. Zero or negative only tries now: true if no other read hold is taken.
     * @throws IllegalStateException as [upgrade]; nothing changes.
     */
    public suspend fun tryUpgrade(timeout: Duration): Boolean

    /**
     * Closes this lock: every queued waiter (of every kind, a waiting [upgrade] included) fails with
     * [SemaphoreClosedException] carrying [cause], and every later acquisition, `try` forms included,
     * throws it. Holds already taken may still be ended ([unlockRead], [unlockWrite],
     * [unlockUpgradableRead], [downgrade]). Calling it again does nothing; the first cause stays.
     */
    public fun close(cause: Throwable? = null)
}

/** Creates a [ReadWriteLock] with the [ReadWritePolicy.FIFO] policy, with nothing held. */
@JvmOverloads
public fun ReadWriteLock(diagnostics: Diagnostics = Diagnostics.NONE): ReadWriteLock =
    ReadWriteLockImpl(ReadWriteLockImpl.TOTAL, diagnostics)

/**
 * Creates a [ReadWriteLock] that serves its waiters by [policy], with nothing held:
 * `ReadWriteLock(ReadWritePolicy.PHASE_FAIR)`, or `ReadWriteLock(ReadWritePolicy.WRITERS_LINE, Diagnostics(name = "cache"))`.
 */
@JvmOverloads
public fun ReadWriteLock(policy: ReadWritePolicy, diagnostics: Diagnostics = Diagnostics.NONE): ReadWriteLock =
    ReadWriteLockImpl(ReadWriteLockImpl.TOTAL, diagnostics, policy)

/**
 * Takes a read hold, runs [action] and ends the hold, however [action] ends (returns, throws or is
 * cancelled). Do not take another hold of the same lock inside [action]: the lock is not reentrant
 * (see [ReadWriteLock]).
 *
 * ```kotlin
 * val price = prices.withReadLock { table[item] }
 * ```
 */
@OptIn(ExperimentalContracts::class)
public suspend inline fun <T> ReadWriteLock.withReadLock(action: () -> T): T {
    contract { callsInPlace(action, InvocationKind.EXACTLY_ONCE) }
    lockRead()
    try {
        return action()
    } finally {
        unlockReadFromScope(this, coroutineContext)
    }
}

/**
 * Takes the write hold, runs [action] and ends the hold, however [action] ends.
 *
 * ```kotlin
 * prices.withWriteLock { table[item] = newPrice }
 * ```
 */
@OptIn(ExperimentalContracts::class)
public suspend inline fun <T> ReadWriteLock.withWriteLock(action: () -> T): T {
    contract { callsInPlace(action, InvocationKind.EXACTLY_ONCE) }
    lockWrite()
    try {
        return action()
    } finally {
        unlockWrite()
    }
}

/**
 * Takes the upgradable read, runs [action] and ends the hold, however [action] ends. [action] may
 * call [ReadWriteLock.upgrade] (or [ReadWriteLock.tryUpgrade]): the hold it has at the end, the
 * upgradable read or the write hold it became, is the one ended. [action] must not end or
 * [ReadWriteLock.downgrade] the hold itself.
 *
 * ```kotlin
 * cache.withUpgradableReadLock {
 *     if (key !in table) {
 *         cache.upgrade() // readers already inside finish first; no writer gets in between
 *         table[key] = load(key)
 *     }
 * }
 * ```
 */
@OptIn(ExperimentalContracts::class)
public suspend inline fun <T> ReadWriteLock.withUpgradableReadLock(action: () -> T): T {
    contract { callsInPlace(action, InvocationKind.EXACTLY_ONCE) }
    lockUpgradableRead()
    try {
        return action()
    } finally {
        // While the upgradable read is held no one else can hold the write hold, so a write hold
        // now is the one upgrade() turned it into.
        if (isWriteLocked) unlockWrite() else unlockUpgradableRead()
    }
}
