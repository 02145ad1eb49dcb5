/*
 * Cancellation storm on Lock, on 4 real threads. Workers lock with their own owner (a quarter of the
 * attempts without owner) by lock, tryLock and tryLock with a real 0..2 ms timeout; a canceller
 * cancels random in-flight attempts, including holders; a watchdog samples progress.
 *
 * Invariants checked:
 * K1  at most one holder at any instant (HolderGauge with bound 1), and inside the critical section
 *     the lock reports isLocked and, once lock() returned, holdsLock(owner) for the holder (L2: the
 *     holder itself always sees its own hold).
 * K2  no persistent state "not locked but waiters queued" (the head would fit: I5).
 * K3  at quiescence: not locked, nobody queued, no owner holds it, every worker finished.
 * K4  every path was exercised: grants, failed tries, timeouts, cancellations.
 * K5  an owner whose earlier attempts have all ended never gets "already held by <owner>".
 */
package dev.semaphore.verification

import dev.semaphore.Lock
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds

class LockStressTest {
    @Test
    fun cancellationStorm() = runBlocking {
        val workers = 24
        val rounds = 3000 * STRESS_SCALE
        val lock = Lock()
        val owners = List(workers) { i -> "worker-$i" }
        val gauge = HolderGauge()
        val tally = Tally()
        val board = CancelBoard(workers)
        val dog = Watchdog()
        val selfCheckFailures = AtomicInteger()
        val spuriousAlreadyHeld = AtomicInteger()
        val firstSpurious = java.util.concurrent.atomic.AtomicReference<String?>(null)

        suspend fun attempt(i: Int) {
            val owner: Any? = if (rnd(0, 4) == 0) null else owners[i]
            val mode = rnd(0, 3)
            val got = try {
                when (mode) {
                    0 -> { lock.lock(owner); true }
                    1 -> lock.tryLock(owner)
                    else -> lock.tryLock(rnd(0, 3).milliseconds, owner)
                }
            } catch (e: CancellationException) {
                tally.cancelled.incrementAndGet()
                throw e
            } catch (e: IllegalStateException) {
                // This worker holds nothing here (its earlier attempts all ended), so "already held by"
                // is wrong: a cancelled lock() left its grant recorded (see LockRegressionTest, R4).
                spuriousAlreadyHeld.incrementAndGet()
                if (firstSpurious.get() == null) firstSpurious.set(e.message)
                return
            }
            if (!got) {
                if (mode == 2) tally.timedOut.incrementAndGet() else tally.tried.incrementAndGet()
                return
            }
            tally.acquired.incrementAndGet()
            gauge.enter(1, 1)
            if (!lock.isLocked || (owner != null && !lock.holdsLock(owner))) selfCheckFailures.incrementAndGet()
            try {
                if (rnd(0, 2) == 0) yield()
            } finally {
                gauge.exit(1)
                lock.unlock(owner)
            }
        }

        runStorm(workers, rounds, board, dog, stuck = {
            val locked = lock.isLocked
            val q = lock.queueLength
            if (!locked && q > 0) "not locked with queueLength=$q ($lock)" else null
        }, state = { "Lock (K3): $tally, $lock" }) { i -> attempt(i) }

        assertEquals(0, gauge.violationCount, "K1: ${gauge.firstViolation}")
        assertEquals(0, spuriousAlreadyHeld.get(),
            "K5: an owner that holds nothing was told the lock is already held by it (${firstSpurious.get()}); $tally")
        assertEquals(0, selfCheckFailures.get(), "K1: a holder did not see its own hold")
        assertNull(dog.failure, "K2")
        assertTrue(dog.checks.get() > 0)
        assertFalse(lock.isLocked, "K3: $lock")
        assertEquals(0, lock.queueLength, "K3: $lock")
        assertTrue(owners.none { lock.holdsLock(it) }, "K3: an owner still holds it")
        assertTrue(tally.acquired.get() > 0 && tally.tried.get() > 0 && tally.timedOut.get() > 0 && tally.cancelled.get() > 0,
            "K4: a path was never exercised: $tally")
        println("Lock storm (workers=$workers, rounds=$rounds): $tally, watchdog samples ${dog.checks.get()}")
    }
}
