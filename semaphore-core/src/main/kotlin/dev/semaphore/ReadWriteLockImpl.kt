/*
 * ReadWriteLockImpl, the ReadWriteLock behind the factories of ReadWriteLock.kt (which holds the public
 * contract): one WaiterQueue of N = 2^30 permits, served in UpgradeFirstOrder (WaitOrder.kt), plus the
 * holds (this front-end's own state). The engine gives the exclusion and the order; this file only
 * chooses how many permits each kind of request takes, and keeps the holds. One file of about 530
 * lines: the encoding, the rules RW1-RW5 and the one class whose every operation relies on them.
 *
 * THE ENCODING (tokio's RwLock does the same on its batch semaphore):
 *     read hold            1 permit
 *     write hold           N permits: excludes every other hold
 *     upgradable read      U = N/2 + 1: two exceed N (so one at a time), one plus a write exceeds N,
 *                          one plus up to N - U = 2^29 - 1 plain reads fits
 *     upgrade              the other N - U, requested at priority 1; every other request has priority 0
 *     downgrade            gives back N - 1 of the write's N
 * So, by the engine's invariants: a request is granted whole when it is first in line and fits, the
 * readers consecutive at the head are granted together, and the first that does not fit (a writer,
 * or a second upgradable read) blocks everyone behind it (I5); nobody barges (I4); a waiter that
 * leaves the line (cancel, timeout) lets those behind it in if they now fit (I5, after cancel).
 * UpgradeFirstOrder keeps priority 0 in one FIFO line, and the upgrade (priority 1, never more than
 * one) is served before everyone queued; while it waits it is the head, so it blocks every later
 * request (I5), new readers included, and it never gives back the upgradable read's U permits on the way.
 * Limits: at most N = 2^30 read holds at once, 2^29 - 1 beside the upgradable read; a reader beyond
 * that waits in line until a read hold ends.
 * ReadWritePolicy.PHASE_FAIR: the same encoding and the same rules RW1-RW5, served in a PhaseFairOrder
 * instead (WaitOrder.kt, PF1-PF4): a readers' line, an exclusive line and the upgrade; its one check on
 * this file's state is writeHeld (PF2).
 * ReadWritePolicy.WRITERS_LINE: FIFO's queue, with a second WaiterQueue of one permit in front of it for
 * writers only (writersLine). A writer is not a hold of the writers' line: it takes the line's permit,
 * then the write hold as FIFO does, then gives the line's permit back (WL1), so the holds, RW1-RW5 and
 * everything after the lock call are FIFO's.
 * WL1  The line's permit is held only inside a lock call of a writer: from its grant (by the writers'
 *     line) until the call returns or fails, whichever way (granted, cancelled, timed out, closed).
 *     Whoever took it gives it back in a finally of that call; a grant of it to a waiter gone away is
 *     handed back by the line itself (W3, writersLineRequests). So at most one writer stands in the lock's
 *     line, and a writer's try succeeds only when the line's permit is free and nobody waits for it (the
 *     try only looks: it never takes the permit).
 * WL2 A writer that takes the line's permit without waiting joins the lock's line in the same step, to
 *     every other caller; one woken from the writers' line joins it later, when it runs (the policy's
 *     rule 2). `joining` counts the writers that took the permit without waiting and have not reached
 *     the lock's line: the lock-free take counts its writer from just before it (and counts it out if
 *     it fails), an offer granted at once counts it in the line's locked step that grants it. It
 *     stops counting when its request reaches the lock's line (granted or queued there: the write
 *     grantee's callbacks, W4; or the write hold's fast path), or gives up. That holder is marked by
 *     lineHolderJoining (one holder at a time, WL1), so that exactly one of those steps counts it out.
 *     A write try that finds the permit taken while joining > 0 waits (spinWait) and looks again, as
 *     RW3 does: so the permit it finds taken belongs to a writer in, or granted in, the lock's line,
 *     or to one woken from the writers' line.
 *
 * Why the holds are kept here and not read off the engine's count: the count cannot tell a write
 * hold (N) from an upgradable read plus 2^29 - 1 reads (also N), and a release cannot check which
 * kind of hold it ends (unlockRead during a write hold would pass the engine's over-release check).
 *
 * Rules of this front-end, on top of the engine's invariants (as Lock.kt's L1-L4 are for Lock):
 * RW1  The holds word (plain read holds, UPGRADABLE, TRYING, UPGRADING, WRITER) is the truth for every query
 *     and every misuse check, and the linearization point of every operation.
 * RW2  Taking records after the engine gave the permits: a grant from the queue records under the
 *     queue's lock, in the same step (the request's Grantee, W4); the fast path records right after
 *     its tryAcquire. Giving back clears first, by a CAS that checks that such a hold is recorded
 *     (else it throws, with nothing changed), then releases. So the engine has handed out at least
 *     the permits that the holds account for (permitsOf), exactly those whenever no thread is between
 *     its two steps.
 * RW3  (Lock.kt's L3, for more kinds) A try that the engine refuses although the holds say it fits
 *     returns false only when the engine shows, under its lock, somebody queued and a count equal to
 *     permitsOf(holds) (I10): then the line is real (I5: its head does not fit) and a newcomer may not
 *     barge past it. Otherwise another thread is between its two steps (RW2): the try waits for it
 *     (spinWait) and tries again.
 * RW4  The holds are anonymous (no owners), as the contract is: any caller may end a hold of a kind
 *     that is recorded. A hand-back (W3), and a timed acquisition cancelled at the moment of its
 *     success, end their hold only if one of its kind is still recorded, and release only if they
 *     ended one (another caller may have ended it already).
 * RW5  An upgrade's first step is TRYING, set by beginUpgrade (checking that UPGRADABLE is held and no
 *     upgrade is in progress) and always short: it ends, without waiting for anyone, in the write
 *     hold (the grant turns UPGRADABLE|TRYING into WRITER in one step), in nothing (an upgrade that
 *     only tries now clears it), or in UPGRADING (the engine queued the request: the grantee's queued
 *     callback switches TRYING to UPGRADING under the engine's lock, W4). An operation that meets
 *     TRYING waits for that step (spinWait) and looks again, so an upgrade that does not wait looks
 *     atomic to every other caller. UPGRADING marks an upgrade that waits in line; its grant turns
 *     UPGRADABLE|UPGRADING into WRITER in one step, and an upgrade that leaves without being granted
 *     clears it. While it is set, unlockUpgradableRead and a second upgrade() throw, so the U permits
 *     stay held under the queued upgrade. The hand-back of an upgrade's grant turns WRITER back into
 *     UPGRADABLE and releases N - U: a cancelled upgrade keeps the upgradable read.
 */
package dev.semaphore

import kotlin.coroutines.coroutineContext
import dev.semaphore.internal.RELEASE_BY_SIZE
import dev.semaphore.internal.AtomicStateCell
import dev.semaphore.internal.EngineCounts
import dev.semaphore.internal.FifoOrder
import dev.semaphore.internal.Grantee
import dev.semaphore.internal.PermitWaiter
import dev.semaphore.internal.PhaseFairOrder
import dev.semaphore.internal.UpgradeFirstOrder
import dev.semaphore.internal.WaiterQueue
import dev.semaphore.internal.WaiterQueueOwner
import dev.semaphore.internal.acquireSuspending
import dev.semaphore.internal.acquireWithin
import dev.semaphore.internal.spinWait
import dev.semaphore.internal.waitWithin
import dev.semaphore.internal.addListenerFor
import dev.semaphore.internal.attach
import dev.semaphore.internal.attachWritersLine
import dev.semaphore.internal.waitersWithWritersLine
import dev.semaphore.internal.dumpOf
import dev.semaphore.internal.holdersNow
import dev.semaphore.internal.waitersNow
import dev.semaphore.internal.toSnapshot
import kotlin.concurrent.Volatile
import kotlin.time.Duration

/**
 * The engine-backed [ReadWriteLock] (rules RW1-RW5 at the top of this file). [total] is N; the factory
 * uses [TOTAL], and tests may pass a small even N (at least 4) to reach the reader limit.
 */
internal class ReadWriteLockImpl(
    internal val total: Int,
    private val diagnostics: Diagnostics = Diagnostics.NONE,
    override val policy: ReadWritePolicy = ReadWritePolicy.FIFO,
) : ReadWriteLock, WaiterQueueOwner {
    init {
        require(total >= 4 && total % 2 == 0) { "the total must be even and at least 4, was $total" }
    }

    override val name: String? get() = diagnostics.name

    /** U: the upgradable read's permits; two of them exceed [total]. */
    internal val upgradablePermits = total / 2 + 1

    /** What an upgrade adds to the upgradable read's permits to make a write hold. */
    internal val upgradePermits = total - upgradablePermits

    override val waiterQueue: WaiterQueue = when (policy) {
        ReadWritePolicy.FIFO, ReadWritePolicy.WRITERS_LINE -> WaiterQueue(total, UpgradeFirstOrder())
        // PF2: under the queue's lock, no permit free and no plain read recorded is the write hold.
        ReadWritePolicy.PHASE_FAIR -> WaiterQueue(total, PhaseFairOrder(total) { it == 0 && holds.load() and READS == 0L })
    }

    private val holds = HoldsWord()

    /** WRITERS_LINE's line of writers (WL1): one permit, first come, first served; null for the other policies. */
    internal val writersLine: WaiterQueue? =
        if (policy == ReadWritePolicy.WRITERS_LINE) WaiterQueue(1, FifoOrder()) else null

    /** WL2: the writers that may take the writers' line's permit without waiting and have not reached the lock's line. */
    private val joining = JoiningCount()

    /** WL2: the holder of the writers' line's permit took it without waiting and has not reached the lock's line. */
    @Volatile
    private var lineHolderJoining = false

    override val readHolds: Int get() = readHoldsOf(holds.load())
    override val isWriteLocked: Boolean get() = holds.load() and WRITER != 0L
    override val queueLength: Int get() = waiterQueue.queueLength + (writersLine?.queueLength ?: 0)
    override val isClosed: Boolean get() = waiterQueue.isClosed

    override fun close(cause: Throwable?) {
        waiterQueue.close(cause)
        writersLine?.close(cause)
    }

    init {
        waiterQueue.attach(this, "ReadWriteLock", diagnostics)
        writersLine?.attachWritersLine(this, diagnostics, total)
    }

    override fun addListener(listener: SemaphoreListener): ListenerRegistration =
        waiterQueue.addListenerFor(this, "ReadWriteLock", diagnostics, listener)

    override fun holders(): List<HoldInfo> = waiterQueue.holdersNow()

    override fun waiters(): List<WaitInfo> = writersLine?.let { waiterQueue.waitersWithWritersLine(it) } ?: waiterQueue.waitersNow()

    override fun dump(): String = dumpOf(this)

    override fun snapshot(): SemaphoreSnapshot {
        // The writers' line first: a writer that moves on between the two reads is counted twice, never missed.
        val line = writersLine?.readCounts { it }
        return waiterQueue.readCounts { c ->
            val h = holds.load() // just after the engine's instant (see SemaphoreSnapshot)
            if (line != null) addWritersLine(c, line)
            c.toSnapshot("ReadWriteLock", name, readHoldsOf(h), h and WRITER != 0L, h and UPGRADABLE != 0L)
        }
    }

    /** The writers' line's waits, added to the lock's counts: each waiting writer asks for the write hold. */
    private fun addWritersLine(c: EngineCounts, line: EngineCounts) {
        c.queuedRequests += line.queuedRequests
        c.queuedPermits += line.queuedRequests.toLong() * total
        if (line.queuedRequests > 0) c.byPriority = c.byPriority + (0 to (c.byPriority[0] ?: 0) + line.queuedRequests)
        c.timedOut += line.timedOut
        c.cancelled += line.cancelled
        c.failedByClose += line.failedByClose
    }

    /** The holds word's bits, for the tests (one load). */
    internal val holdsSnapshot: Long get() = holds.load()

    // ---- read ----

    override suspend fun lockRead() {
        if (waiterQueue.tryAcquirePermits(1, 0, waitsIfRefused = true)) recordRead() else waiterQueue.acquireSuspending(1, 0, readRequests)
    }

    override fun tryLockRead(): Boolean = tryTake(READ) || waiterQueue.refused(1)

    /** [tryLockRead] without counting a refusal: for a caller that waits next. */
    internal fun tryTakeRead(asker: Any? = null): Boolean = tryTake(READ, asker)

    override suspend fun tryLockRead(timeout: Duration): Boolean =
        tryTake(READ, coroutineContext) || waiterQueue.acquireWithin(1, 0, readRequests, timeout) { endRead() }

    override fun unlockRead() = unlockRead(null)

    /** [unlockRead], naming the hold it ends for observation ([key]: a scoped form's Job; Observer.kt, H2). */
    internal fun unlockRead(key: Any?) {
        while (true) {
            val h = holds.load()
            check(h and READS != 0L) { "unlockRead() without a read hold: ${whyNoRead(h)}" }
            if (holds.cas(h, h - 1)) break
        }
        waiterQueue.releaseNamed(1, key)
    }

    // ---- write ----

    override suspend fun lockWrite() {
        val line = writersLine
        if (line != null) return lockWriteInLine(line)
        if (waiterQueue.tryAcquirePermits(total, 0, waitsIfRefused = true)) recordWrite() else waiterQueue.acquireSuspending(total, 0, writeRequests)
    }

    /** WRITERS_LINE's lockWrite (WL1, WL2): the writers' line, then the write hold as FIFO's, then the line's permit back. */
    private suspend fun lockWriteInLine(line: WaiterQueue) {
        if (!takeWritersLine(line)) line.acquireSuspending(1, 0, writersLineRequests)
        try {
            if (waiterQueue.tryAcquirePermits(total, 0, waitsIfRefused = true)) recordWrite() else waiterQueue.acquireSuspending(total, 0, writeRequests)
        } finally {
            joined() // the fast path's count ends here; the grantee's callbacks ended a queued offer's
            line.release(1)
        }
    }

    /**
     * WL2: takes the writers' line's permit if it is free with nobody waiting, counted in [joining] from
     * before the take; true: the caller holds it and stays counted until [joined]. (The offer that
     * follows a false is counted by the line's grantee, under the line's lock, if it is granted at once.)
     */
    internal fun takeWritersLine(line: WaiterQueue): Boolean {
        joining.add(1)
        if (line.tryAcquirePermits(1, 0, waitsIfRefused = true)) {
            lineHolderJoining = true
            return true
        }
        joining.add(-1)
        return false
    }

    /** WL2: the holder's request reached the lock's line, or gave up; counts it out once. */
    internal fun joined() {
        if (lineHolderJoining) {
            lineHolderJoining = false
            joining.add(-1)
        }
    }

    override fun tryLockWrite(): Boolean = tryTakeWrite() || waiterQueue.refused(total)

    /**
     * [tryLockWrite] without counting a refusal: for a caller that waits next. With a writers' line (WL1,
     * WL2) it never takes the line's permit (a try holding it, however briefly, would refuse another try
     * that no sequential order refuses): it looks, under the line's lock, whether the permit is free with
     * nobody waiting, and then tries the write hold as FIFO's try does. A writer that takes the permit
     * meanwhile joins the lock's line after this try, which is an order some sequential run gives.
     */
    internal fun tryTakeWrite(asker: Any? = null): Boolean {
        val line = writersLine ?: return tryTake(WRITE, asker)
        var step = 0
        while (!line.readLocked(lineIsFree)) {
            if (joining.load() == 0L) { // a writer waits, or is on its way (WL1)
                waiterQueue.checkOpen() // a closed lock refuses every acquisition
                return false
            }
            spinWait(step++) // WL2: a writer between the writers' line and the lock's line
        }
        return tryTake(WRITE, asker)
    }

    /** Under the writers' line's lock: its permit free, nobody waiting for it. */
    private val lineIsFree: (Int, Int) -> Boolean = { available, queued -> available == 1 && queued == 0 }

    /** The write hold's try for a writer that holds the writers' line's permit (WL1), or for any writer of another policy. */
    internal fun tryTakeWriteInLine(asker: Any? = null): Boolean = tryTake(WRITE, asker)

    override suspend fun tryLockWrite(timeout: Duration): Boolean {
        val line = writersLine ?: return tryTake(WRITE, coroutineContext) || waiterQueue.acquireWithin(total, 0, writeRequests, timeout) { endWrite() }
        if (tryTakeWrite(coroutineContext)) return true
        if (!timeout.isPositive()) return waiterQueue.refused(total)
        if (timeout.isInfinite()) {
            lockWriteInLine(line)
            return true
        }
        return waiterQueue.waitWithin(timeout, { endWrite() }) { lockWriteInLine(line) } // one deadline over both lines
    }

    override fun unlockWrite() {
        while (true) {
            val h = holds.load()
            check(h and WRITER != 0L) {
                "unlockWrite() without the write hold: the lock is not write-locked (${describe(h)})"
            }
            if (holds.cas(h, h and WRITER.inv())) break
        }
        waiterQueue.releaseNamed(total, RELEASE_BY_SIZE)
    }

    override fun downgrade() {
        while (true) {
            val h = holds.load()
            check(h and WRITER != 0L) {
                "downgrade() without the write hold: the lock is not write-locked (${describe(h)})"
            }
            if (holds.cas(h, (h and WRITER.inv()) + 1)) break // the write hold becomes one read hold
        }
        waiterQueue.release(total - 1)
    }

    // ---- upgradable read ----

    override suspend fun lockUpgradableRead() {
        if (waiterQueue.tryAcquirePermits(upgradablePermits, 0, waitsIfRefused = true)) {
            recordUpgradable()
        } else {
            waiterQueue.acquireSuspending(upgradablePermits, 0, upgradableRequests)
        }
    }

    override fun tryLockUpgradableRead(): Boolean = tryTake(UPGRADABLE_READ) || waiterQueue.refused(upgradablePermits)

    /** [tryLockUpgradableRead] without counting a refusal: for a caller that waits next. */
    internal fun tryTakeUpgradableRead(asker: Any? = null): Boolean = tryTake(UPGRADABLE_READ, asker)

    override suspend fun tryLockUpgradableRead(timeout: Duration): Boolean =
        tryTake(UPGRADABLE_READ, coroutineContext) ||
            waiterQueue.acquireWithin(upgradablePermits, 0, upgradableRequests, timeout) { endUpgradable() }

    override fun unlockUpgradableRead() {
        var step = 0
        while (true) {
            val h = holds.load()
            if (h and TRYING != 0L) { // RW5: an upgrade's first step, short
                spinWait(step++)
                continue
            }
            check(h and UPGRADABLE != 0L) {
                "unlockUpgradableRead() without the upgradable read: ${whyNoUpgradable(h)}"
            }
            check(h and UPGRADING == 0L) {
                "unlockUpgradableRead() while an upgrade() of the upgradable read is in progress (${describe(h)})"
            }
            if (holds.cas(h, h and UPGRADABLE.inv())) break
        }
        waiterQueue.releaseNamed(upgradablePermits, RELEASE_BY_SIZE)
    }

    override suspend fun upgrade() {
        beginUpgrade("upgrade()")
        val request = UpgradeRequest()
        var upgraded = false
        try {
            // Offered to the engine at once: granted, or queued (RW5: TRYING becomes UPGRADING under its lock).
            waiterQueue.acquireSuspending(upgradePermits, UPGRADE_PRIORITY, request)
            upgraded = true
        } finally {
            if (!upgraded && !request.wasGranted) endUpgradeAttempt()
        }
    }

    override suspend fun tryUpgrade(timeout: Duration): Boolean {
        beginUpgrade("tryUpgrade()")
        val request = UpgradeRequest()
        var upgraded = false
        try {
            upgraded = if (timeout.isPositive()) {
                waiterQueue.acquireWithin(upgradePermits, UPGRADE_PRIORITY, request, timeout) { undoUpgrade() }
            } else {
                tryTakeUpgrade(coroutineContext)
            }
            return upgraded
        } finally {
            if (!upgraded && !request.wasGranted) endUpgradeAttempt()
        }
    }

    override fun toString(): String =
        "ReadWriteLock(${describe(holds.load())}, queueLength=$queueLength" +
            (if (policy == ReadWritePolicy.FIFO) ")" else ", policy=$policy)")

    // ---- the try forms (RW3) ----

    /** Takes a hold of [kind] now if it fits the holds and nobody is ahead in the line (RW3). */
    private fun tryTake(kind: Int, asker: Any? = null): Boolean {
        val permits = permitsFor(kind)
        var step = 0
        while (true) {
            if (!fits(kind, holds.load())) {
                waiterQueue.checkOpen() // a closed lock refuses every acquisition
                return false
            }
            if (waiterQueue.tryAcquirePermits(permits, 0, false, null, asker)) {
                record(kind)
                return true
            }
            // Refused although the holds fit: a real line ahead (no barging), or another thread
            // between its two steps (RW2), which we wait out.
            if (waiterQueue.queueLength > 0 && waiterQueue.readLocked(lineIsReal)) return false
            spinWait(step++)
        }
    }

    /** RW3 under the engine's lock (I10): somebody queued, and no thread between its two steps. */
    private val lineIsReal: (Int, Int) -> Boolean = { available, queued ->
        queued > 0 && total.toLong() - available == permitsOf(holds.load())
    }

    /**
     * The upgrade's try: it is served before everyone queued, so only other read holds stop it. The
     * engine refusing while none is recorded means another thread is between its two steps (RW2, RW3).
     */
    internal fun tryTakeUpgrade(asker: Any? = null): Boolean {
        var step = 0
        while (true) {
            if (holds.load() and READS != 0L) {
                waiterQueue.checkOpen()
                return false
            }
            if (waiterQueue.tryAcquirePermits(upgradePermits, UPGRADE_PRIORITY, false, null, asker)) {
                recordUpgrade()
                return true
            }
            spinWait(step++)
        }
    }

    private fun fits(kind: Int, h: Long): Boolean = when (kind) {
        READ -> h and WRITER == 0L && permitsOf(h) + 1 <= total
        WRITE -> h == 0L
        else -> h and (WRITER or UPGRADABLE) == 0L && permitsOf(h) + upgradablePermits <= total
    }

    private fun permitsFor(kind: Int): Int = when (kind) {
        READ -> 1
        WRITE -> total
        else -> upgradablePermits
    }

    private fun record(kind: Int) = when (kind) {
        READ -> recordRead()
        WRITE -> recordWrite()
        else -> recordUpgradable()
    }

    /** The permits the holds [h] account for (RW2). */
    private fun permitsOf(h: Long): Long =
        (h and READS) +
            (if (h and UPGRADABLE != 0L) upgradablePermits.toLong() else 0L) +
            (if (h and WRITER != 0L) total.toLong() else 0L)

    // ---- recording and ending holds (RW2, RW4) ----

    private fun recordRead() {
        // One add, no CAS loop: READS cannot carry into the flags, since the engine gave at most N <= 2^30
        // read permits and the holds account for no more than it gave (RW2). Two threads recording reads at
        // once then never retry (0.98 of the loop's time on a read-mostly row, within error: docs/profiles.md).
        holds.getAndAdd(1)
    }

    private fun recordWrite() {
        while (true) {
            val h = holds.load()
            if (holds.cas(h, h or WRITER)) return
        }
    }

    private fun recordUpgradable() {
        while (true) {
            val h = holds.load()
            if (holds.cas(h, h or UPGRADABLE)) return
        }
    }

    /** RW5: UPGRADABLE|TRYING or UPGRADABLE|UPGRADING become WRITER, in one step. */
    private fun recordUpgrade() {
        while (true) {
            val h = holds.load()
            if (holds.cas(h, (h and (UPGRADABLE or UPGRADING or TRYING).inv()) or WRITER)) return
        }
    }

    /** RW5: the engine queued the upgrade (under its lock): TRYING becomes UPGRADING. */
    private fun markUpgrading() {
        while (true) {
            val h = holds.load()
            if (holds.cas(h, (h and TRYING.inv()) or UPGRADING)) return
        }
    }

    /** RW4: ends one read hold if one is recorded. */
    private fun endRead() {
        while (true) {
            val h = holds.load()
            if (h and READS == 0L) return
            if (holds.cas(h, h - 1)) break
        }
        waiterQueue.release(1)
    }

    /** RW4: ends the write hold if it is recorded. */
    internal fun endWrite() {
        while (true) {
            val h = holds.load()
            if (h and WRITER == 0L) return
            if (holds.cas(h, h and WRITER.inv())) break
        }
        waiterQueue.releaseNamed(total, RELEASE_BY_SIZE)
    }

    /** RW4: ends the upgradable read if it is recorded and nobody is upgrading it. */
    internal fun endUpgradable() {
        while (true) {
            val h = holds.load()
            if (h and (UPGRADABLE or UPGRADING) != UPGRADABLE) return
            if (holds.cas(h, h and UPGRADABLE.inv())) break
        }
        waiterQueue.releaseNamed(upgradablePermits, RELEASE_BY_SIZE)
    }

    /** RW4, RW5: an upgrade granted but not taken turns the write hold back into the upgradable read. */
    private fun undoUpgrade() {
        while (true) {
            val h = holds.load()
            if (h and WRITER == 0L) return
            if (holds.cas(h, (h and WRITER.inv()) or UPGRADABLE)) break
        }
        waiterQueue.release(upgradePermits)
    }

    /** RW5: starts an upgrade (TRYING), or throws (nothing changed) if [operation] is misuse. */
    internal fun beginUpgrade(operation: String) {
        var step = 0
        while (true) {
            val h = holds.load()
            if (h and TRYING != 0L) { // another caller's first step, short
                spinWait(step++)
                continue
            }
            check(h and UPGRADABLE != 0L) { "$operation without the upgradable read: ${whyNoUpgradable(h)}" }
            check(h and UPGRADING == 0L) {
                "$operation while another upgrade of the upgradable read is in progress (${describe(h)})"
            }
            if (holds.cas(h, h or TRYING)) return
        }
    }

    /** RW5: an upgrade that was never granted leaves; the upgradable read stays. */
    internal fun endUpgradeAttempt() {
        while (true) {
            val h = holds.load()
            if (holds.cas(h, h and (UPGRADING or TRYING).inv())) return
        }
    }

    // ---- grantees (W4) ----

    /**
     * The writers' line's requests (WL1, WL2): a grant at the offer (status NEW) took the permit without
     * waiting, so its writer is counted in joining, in the line's locked step that took the permit. A
     * grant to a writer gone away goes back to the line.
     */
    internal val writersLineRequests: Grantee = object : Grantee {
        override val queue: WaiterQueue get() = writersLine!!
        override fun granted(w: PermitWaiter) {
            if (w.status == PermitWaiter.NEW) {
                joining.add(1)
                lineHolderJoining = true
            }
        }
        override fun handBack(w: PermitWaiter) = writersLine!!.release(1)
        override val reusesWaiters: Boolean get() = true // counts only (Suspending.kt, C4)
    }

    internal val readRequests: Grantee = object : Grantee {
        override val queue: WaiterQueue get() = waiterQueue
        override fun granted(w: PermitWaiter) = recordRead()
        override fun handBack(w: PermitWaiter) = endRead()
        override val reusesWaiters: Boolean get() = true
    }

    internal val writeRequests: Grantee = object : Grantee {
        override val queue: WaiterQueue get() = waiterQueue
        override fun granted(w: PermitWaiter) {
            recordWrite()
            joined() // WL2
        }
        override fun queued(w: PermitWaiter) = joined() // WL2
        override fun handBack(w: PermitWaiter) = endWrite()
        override val reusesWaiters: Boolean get() = true
    }

    internal val upgradableRequests: Grantee = object : Grantee {
        override val queue: WaiterQueue get() = waiterQueue
        override fun granted(w: PermitWaiter) = recordUpgradable()
        override fun handBack(w: PermitWaiter) = endUpgradable()
        override val reusesWaiters: Boolean get() = true
    }

    /**
     * One upgrade() call's request. It remembers whether it was granted, so that the call knows
     * whether the UPGRADING bit is still its own to clear (RW5). A hand-back turns the write hold back
     * into the upgradable read (RW5), then runs [afterHandBack] (the JVM bridge gives the upgradable
     * read back to its caller's handle there).
     */
    internal inner class UpgradeRequest(private val afterHandBack: (() -> Unit)? = null) : Grantee {
        override val queue: WaiterQueue get() = waiterQueue

        @Volatile
        var wasGranted = false

        override fun granted(w: PermitWaiter) {
            wasGranted = true
            recordUpgrade()
        }

        override fun handBack(w: PermitWaiter) {
            undoUpgrade()
            afterHandBack?.invoke()
        }

        override fun queued(w: PermitWaiter) = markUpgrading()
    }

    // ---- messages ----

    private fun describe(h: Long): String =
        "readHolds=${readHoldsOf(h)}, isWriteLocked=${h and WRITER != 0L}, " +
            "upgradable read held=${h and UPGRADABLE != 0L}, upgrading=${h and (UPGRADING or TRYING) != 0L}"

    private fun whyNoRead(h: Long): String = when {
        h and WRITER != 0L -> "the lock is write-locked (end the write hold with unlockWrite()); ${describe(h)}"
        h and UPGRADABLE != 0L ->
            "only the upgradable read is held (end it with unlockUpgradableRead()); ${describe(h)}"
        else -> "no read hold is taken (${describe(h)})"
    }

    private fun whyNoUpgradable(h: Long): String = when {
        h and WRITER != 0L ->
            "the lock is write-locked (after upgrade() the hold is the write hold: end it with " +
                "unlockWrite()); ${describe(h)}"
        else -> "the upgradable read is not held (${describe(h)})"
    }

    private class HoldsWord : AtomicStateCell(0L)

    private class JoiningCount : AtomicStateCell(0L) {
        fun add(delta: Long) {
            getAndAdd(delta)
        }
    }

    internal companion object {
        /** N of the factory's locks: 2^30 permits. */
        const val TOTAL: Int = 1 shl 30

        /** The upgrade's priority: above the 0 of every other request, so it is served first. */
        const val UPGRADE_PRIORITY: Int = 1

        // The holds word: plain read holds in bits 0..31 (at most N <= 2^30), then four flags.
        const val READS: Long = 0xFFFF_FFFFL
        const val UPGRADABLE: Long = 1L shl 32
        const val UPGRADING: Long = 1L shl 33
        const val WRITER: Long = 1L shl 34
        const val TRYING: Long = 1L shl 35

        // The kinds of hold that tryTake takes.
        private const val READ = 0
        private const val WRITE = 1
        private const val UPGRADABLE_READ = 2

        fun readHoldsOf(h: Long): Int = (h and READS).toInt() + (if (h and UPGRADABLE != 0L) 1 else 0)
    }
}
