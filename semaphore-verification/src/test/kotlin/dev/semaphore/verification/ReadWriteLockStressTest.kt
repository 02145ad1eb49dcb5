/*
 * Cancellation storm on ReadWriteLock, on 4 real threads, once per policy (FIFO, PHASE_FAIR, WRITERS_LINE). Workers take read holds (60%), the write
 * hold (20%) and the upgradable read (20%), by the suspending call, the try form and the timed form
 * with a real 0..2 ms timeout; an upgradable reader upgrades half of the time (waiting or timed), a
 * writer downgrades a quarter of the time. A third of the workers do it all as a Java caller would,
 * through the futures of the JVM bridge (lockAsync, upgradeAsync, downgrade with LockHolds; the
 * timed form through orTimeout), so coroutines and futures stand in one line. A canceller cancels
 * random in-flight attempts, holders and waiting upgrades included; a watchdog samples progress.
 *
 * Invariants checked:
 * RS1 exclusion, counted by the workers inside their sections (entered after the grant, left before
 *     the release): a writer is alone, readers never meet a writer, at most one upgradable reader;
 *     and each holder sees its own hold (a writer sees isWriteLocked, a reader does not).
 * RS2 no persistent state "nothing held, yet waiters queued" (everything fits an empty lock: I5). With a
 *     writers' line, its waiters count as queued and its permit does not count as held, so a permit of
 *     that line lost shows here (writers queued there, nothing held: how WritersLineFuture's F3 bug was
 *     found); a writer woken from it holds the permit until it runs (WL2): the longest seen was 14 ms
 *     (sampled every 3 ms, 43 runs on 2 cores kept busy by two other processes), under the 24 ms this
 *     check allows. The writers' line's own I5 too: its permit free while writers wait there.
 * RS3 at quiescence: nothing held, nobody queued, the engine has every permit back (and the writers'
 *     line its permit), every worker finished.
 * RS4 every path was exercised: grants of each kind, upgrades, downgrades, failed tries, timeouts,
 *     cancellations.
 */
@file:OptIn(InternalSemaphoreApi::class)

package dev.semaphore.verification

import dev.semaphore.ReadWriteLockImpl
import dev.semaphore.ReadWritePolicy
import dev.semaphore.bridge.HoldKind
import dev.semaphore.bridge.InternalSemaphoreApi
import dev.semaphore.bridge.JavaBridge
import dev.semaphore.bridge.LockHold
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.yield
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlin.time.Duration.Companion.milliseconds

class ReadWriteLockStressTest {
    /** The holds inside their sections, by kind (RS1). */
    private class Occupancy {
        val readers = AtomicInteger()
        val writers = AtomicInteger()
        val upgradables = AtomicInteger()
        val violations = AtomicInteger()

        @Volatile
        var first: String? = null

        private fun violated(what: String) {
            violations.incrementAndGet()
            if (first == null) first = what
        }

        fun enter(kind: HoldKind) {
            when (kind) {
                HoldKind.READ -> {
                    readers.incrementAndGet()
                    if (writers.get() != 0) violated("a reader beside a writer")
                }
                HoldKind.WRITE -> {
                    if (writers.incrementAndGet() != 1) violated("two writers")
                    if (readers.get() != 0 || upgradables.get() != 0) violated("a writer beside readers")
                }
                HoldKind.UPGRADABLE_READ -> {
                    if (upgradables.incrementAndGet() != 1) violated("two upgradable readers")
                    if (writers.get() != 0) violated("an upgradable reader beside a writer")
                }
            }
        }

        fun exit(kind: HoldKind) {
            when (kind) {
                HoldKind.READ -> readers.decrementAndGet()
                HoldKind.WRITE -> writers.decrementAndGet()
                HoldKind.UPGRADABLE_READ -> upgradables.decrementAndGet()
            }
        }
    }

    private class Counts {
        val granted = Array(3) { AtomicLong() }
        val upgrades = AtomicLong()
        val downgrades = AtomicLong()
        val tried = AtomicLong()
        val timedOut = AtomicLong()
        val cancelled = AtomicLong()
        val selfCheck = AtomicInteger()

        override fun toString() = "reads=${granted[0]} writes=${granted[1]} upgradable=${granted[2]} upgrades=$upgrades " +
            "downgrades=$downgrades triedFalse=$tried timedOut=$timedOut cancelled=$cancelled"
    }

    @Test
    fun cancellationStorm() = storm(ReadWritePolicy.FIFO)

    /** The same storm on a phase-fair lock (PhaseFairOrder: the readers' and the exclusive line, batches). */
    @Test
    fun phaseFairCancellationStorm() = storm(ReadWritePolicy.PHASE_FAIR)

    /** The same storm with a writers' line (ReadWriteLockImpl.kt, WL1-WL2: a second queue before the lock's line). */
    @Test
    fun writersLineCancellationStorm() = storm(ReadWritePolicy.WRITERS_LINE)

    /** Each line's waiters and free permits, for RS2's message (a writers' line's permit held, or lost, shows as 0 free there). */
    private fun queues(lock: ReadWriteLockImpl): String {
        val line = lock.writersLine?.let { ", writers' line: ${it.queueLength} queued, ${it.availablePermits} free" } ?: ""
        return "lock's line: ${lock.waiterQueue.queueLength} queued, ${lock.waiterQueue.availablePermits} free$line"
    }

    private fun storm(policy: ReadWritePolicy) = runBlocking {
        val workers = 24
        val rounds = 2000 * STRESS_SCALE
        val lock = ReadWriteLockImpl(ReadWriteLockImpl.TOTAL, policy = policy)
        val inside = Occupancy()
        val counts = Counts()
        val board = CancelBoard(workers)
        val dog = Watchdog()

        fun kindOf(): HoldKind = when (rnd(0, 10)) {
            in 0..5 -> HoldKind.READ
            in 6..7 -> HoldKind.WRITE
            else -> HoldKind.UPGRADABLE_READ
        }

        fun selfCheck(kind: HoldKind) {
            val ok = when (kind) {
                HoldKind.WRITE -> lock.isWriteLocked && lock.readHolds == 0
                else -> !lock.isWriteLocked && lock.readHolds >= 1
            }
            if (!ok) counts.selfCheck.incrementAndGet()
        }

        /** One attempt as a coroutine caller: the suspending, try and timed forms of the contract. */
        suspend fun coroutineAttempt() {
            var kind = kindOf()
            val mode = rnd(0, 3)
            val timeout = rnd(0, 3).milliseconds
            val got = try {
                when (kind) {
                    HoldKind.READ -> when (mode) { 0 -> { lock.lockRead(); true }; 1 -> lock.tryLockRead(); else -> lock.tryLockRead(timeout) }
                    HoldKind.WRITE -> when (mode) { 0 -> { lock.lockWrite(); true }; 1 -> lock.tryLockWrite(); else -> lock.tryLockWrite(timeout) }
                    HoldKind.UPGRADABLE_READ -> when (mode) {
                        0 -> { lock.lockUpgradableRead(); true }
                        1 -> lock.tryLockUpgradableRead()
                        else -> lock.tryLockUpgradableRead(timeout)
                    }
                }
            } catch (e: CancellationException) {
                counts.cancelled.incrementAndGet()
                throw e
            }
            if (!got) {
                (if (mode == 1) counts.tried else counts.timedOut).incrementAndGet()
                return
            }
            counts.granted[kind.ordinal].incrementAndGet()
            inside.enter(kind)
            try {
                selfCheck(kind)
                if (kind == HoldKind.UPGRADABLE_READ && rnd(0, 2) == 0) {
                    // Cancelled or timed out, the upgrade keeps the upgradable read (ends in finally).
                    val upgraded = if (rnd(0, 2) == 0) { lock.upgrade(); true } else lock.tryUpgrade(rnd(0, 3).milliseconds)
                    if (upgraded) {
                        inside.exit(kind)
                        kind = HoldKind.WRITE
                        inside.enter(kind)
                        counts.upgrades.incrementAndGet()
                        selfCheck(kind)
                    }
                }
                if (kind == HoldKind.WRITE && rnd(0, 4) == 0) {
                    inside.exit(kind)
                    kind = HoldKind.READ
                    inside.enter(kind)
                    lock.downgrade()
                    counts.downgrades.incrementAndGet()
                    selfCheck(kind)
                }
                if (rnd(0, 2) == 0) yield()
            } finally {
                inside.exit(kind)
                when (kind) {
                    HoldKind.READ -> lock.unlockRead()
                    HoldKind.WRITE -> lock.unlockWrite()
                    HoldKind.UPGRADABLE_READ -> lock.unlockUpgradableRead()
                }
            }
        }

        /** One attempt as a Java caller: futures and LockHolds of the JVM bridge. */
        suspend fun futureAttempt() {
            val first = kindOf()
            var kind: HoldKind? = first
            val mode = rnd(0, 3)
            val timeoutMs = when (mode) { 0 -> Long.MAX_VALUE; 1 -> 0L; else -> rnd(0, 3).toLong() }
            var hold: LockHold = try {
                JavaBridge.lockAsync(lock, first, TimeUnit.MILLISECONDS.toNanos(timeoutMs)) { it }.awaitHold()
            } catch (e: CancellationException) {
                counts.cancelled.incrementAndGet()
                throw e
            } ?: run {
                (if (mode == 1) counts.tried else counts.timedOut).incrementAndGet()
                return
            }
            counts.granted[first.ordinal].incrementAndGet()
            inside.enter(first)
            try {
                selfCheck(first)
                if (kind == HoldKind.UPGRADABLE_READ && rnd(0, 2) == 0) {
                    // Counted out while the upgrade runs: if it fails (timeout, cancel), the upgradable
                    // hold is still ours (H2) and is closed in finally, at once even if its hand-back
                    // is still running on the granting thread (H3).
                    inside.exit(kind)
                    kind = null
                    val upgradeMs = if (rnd(0, 2) == 0) Long.MAX_VALUE else rnd(0, 3).toLong()
                    val write = JavaBridge.upgradeAsync(lock, hold, TimeUnit.MILLISECONDS.toNanos(upgradeMs)) { it }.awaitHold()
                    if (write == null) {
                        kind = HoldKind.UPGRADABLE_READ
                        inside.enter(kind)
                    } else {
                        hold = write
                        kind = HoldKind.WRITE
                        inside.enter(kind)
                        counts.upgrades.incrementAndGet()
                        selfCheck(kind)
                    }
                }
                if (kind == HoldKind.WRITE && rnd(0, 4) == 0) {
                    inside.exit(kind)
                    kind = HoldKind.READ
                    inside.enter(kind)
                    hold = JavaBridge.downgrade(lock, hold) { it }
                    counts.downgrades.incrementAndGet()
                    selfCheck(kind)
                }
                if (rnd(0, 2) == 0) yield()
            } finally {
                kind?.let { inside.exit(it) }
                hold.unlock()
            }
        }

        runStorm(workers, rounds, board, dog, stuck = {
            val q = lock.queueLength
            val line = lock.writersLine
            when {
                q > 0 && lock.readHolds == 0 && !lock.isWriteLocked -> "nothing held with queueLength=$q ($lock; ${queues(lock)})"
                line != null && line.queueLength > 0 && line.availablePermits == 1 -> "the writers' line's permit free with writers queued there ($lock; ${queues(lock)})"
                else -> null
            }
        }, state = { "ReadWriteLock (RS3): $counts, $lock" }) { i ->
            if (i % 3 == 0) futureAttempt() else coroutineAttempt()
        }

        assertEquals(0, inside.violations.get(), "RS1: ${inside.first}; $counts")
        assertEquals(0, counts.selfCheck.get(), "RS1: a holder did not see its own hold; $counts")
        assertNull(dog.failure, "RS2")
        assertTrue(dog.checks.get() > 0)
        assertEquals(0, lock.readHolds, "RS3: $lock")
        assertEquals(false, lock.isWriteLocked, "RS3: $lock")
        assertEquals(0, lock.queueLength, "RS3: $lock")
        assertEquals(ReadWriteLockImpl.TOTAL, lock.waiterQueue.availablePermits, "RS3: the engine's permits: $lock")
        lock.writersLine?.let { assertEquals(1, it.availablePermits, "RS3: the writers' line's permit: $it, $lock") }
        assertTrue(
            counts.granted.all { it.get() > 0 } && counts.upgrades.get() > 0 && counts.downgrades.get() > 0 &&
                counts.tried.get() > 0 && counts.timedOut.get() > 0 && counts.cancelled.get() > 0,
            "RS4: a path was never exercised: $counts",
        )
        println("ReadWriteLock $policy storm (workers=$workers, rounds=$rounds): $counts, watchdog samples ${dog.checks.get()}")
    }
}

/**
 * Waits for a bridge future as a coroutine would: its hold, or null if it timed out. Cancelled, it
 * cancels the future; a hold delivered anyway (the cancel lost the race) is ended, so none leaks.
 */
private suspend fun CompletableFuture<LockHold>.awaitHold(): LockHold? =
    suspendCancellableCoroutine { cont ->
        whenComplete { hold, error ->
            when {
                error == null -> cont.resume(hold) { _, h, _ -> h?.unlock() }
                error is TimeoutException || error.cause is TimeoutException -> cont.resume(null)
                else -> cont.resumeWithException(if (error is CompletionException) error.cause ?: error else error)
            }
        }
        cont.invokeOnCancellation { cancel(false) }
    }
