/*
 * Cancellation storms over a permit pool (Semaphore or PrioritySemaphore), run on 4 real threads.
 * Many coroutines acquire random permit counts (at random priorities) in three ways: suspending
 * acquire, tryAcquire, and tryAcquire with a real short timeout (0..2 ms); a canceller cancels
 * random in-flight attempts, including ones that already hold permits; a watchdog samples progress.
 *
 * Invariants checked:
 * P1  (H1) the permits held by returned acquisitions never exceed the bound (the total, or the
 *     largest total ever set when the storm resizes).
 * P2  (H2) no persistent state with availablePermits >= the largest request and a non-empty queue:
 *     then the head of the line fits and must have been granted (engine invariant I5).
 * P3  at quiescence: availablePermits == initial + net resizing, the engine's totalPermits equals
 *     the same, queueLength == 0, nobody holds anything; every worker finished (none stranded).
 * P4  the storm exercised every path: grants, failed tries, timeouts and cancellations all happened.
 */
package dev.semaphore.verification

import dev.semaphore.PermitPool
import dev.semaphore.PrioritySemaphore
import dev.semaphore.Semaphore
import dev.semaphore.SemaphoreClosedException
import dev.semaphore.internal.WaiterQueueOwner
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.yield
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** The acquisition calls of one kind of pool, so one storm serves Semaphore and PrioritySemaphore. */
class PoolUnderTest(
    val name: String,
    val pool: PermitPool,
    val priorities: IntArray,
    val acquire: suspend (permits: Int, priority: Int) -> Unit,
    val tryAcquire: (permits: Int, priority: Int) -> Boolean,
    val tryAcquireWithin: suspend (permits: Int, priority: Int, timeout: Duration) -> Boolean,
) {
    override fun toString() = name

    companion object {
        fun semaphore(permits: Int): PoolUnderTest {
            val s = Semaphore(permits)
            return PoolUnderTest("Semaphore($permits)", s, intArrayOf(0), { n, _ -> s.acquire(n) }, { n, _ -> s.tryAcquire(n) },
                { n, _, t -> s.tryAcquire(t, n) })
        }

        fun priority(permits: Int, aging: Duration?): PoolUnderTest {
            val s = PrioritySemaphore(permits, aging)
            return PoolUnderTest("PrioritySemaphore($permits, aging=$aging)", s,
                intArrayOf(Int.MIN_VALUE, -1, 0, 1, 5, Int.MAX_VALUE),
                { n, p -> s.acquire(n, priority = p) }, { n, p -> s.tryAcquire(n, priority = p) },
                { n, p, t -> s.tryAcquire(t, n, priority = p) })
        }
    }
}

/** Sizes of one storm; scaled by [STRESS_SCALE]. */
data class StormSize(val workers: Int = 24, val rounds: Int = 3000 * STRESS_SCALE)

/** Runs one storm; with [resize], a resizer adds and removes permits and closes the pool midway. */
fun runStorm(put: PoolUnderTest, initial: Int, maxRequest: Int, resize: Boolean, size: StormSize = StormSize()) = runBlocking {
    val gauge = HolderGauge()
    val tally = Tally()
    val board = CancelBoard(size.workers)
    val dog = Watchdog()
    val done = AtomicBoolean(false)
    val net = AtomicInteger(0) // net permits added by the resizer (only it changes the total)
    val maxTotalEver = AtomicInteger(initial)
    val finishedRounds = AtomicInteger(0)
    val totalRounds = size.workers * size.rounds
    val pool = put.pool

    suspend fun attempt() {
        val n = rnd(1, maxRequest + 1)
        val p = put.priorities[rnd(0, put.priorities.size)]
        val mode = rnd(0, 3)
        val got = try {
            when (mode) {
                0 -> { put.acquire(n, p); true }
                1 -> put.tryAcquire(n, p)
                else -> put.tryAcquireWithin(n, p, rnd(0, 3).milliseconds)
            }
        } catch (e: CancellationException) {
            tally.cancelled.incrementAndGet()
            throw e
        } catch (e: SemaphoreClosedException) {
            tally.failed.incrementAndGet(); false
        } catch (e: IllegalArgumentException) { // the total shrank below n before the call (resizing storms only)
            check(resize) { "unexpected $e" }
            tally.failed.incrementAndGet(); false
        } catch (e: IllegalStateException) { // queued, then the total shrank below n (resizing storms only)
            check(resize && e.message!!.contains("can never be granted")) { "unexpected $e" }
            tally.failed.incrementAndGet(); false
        }
        if (!got) {
            if (mode == 2) tally.timedOut.incrementAndGet() else tally.tried.incrementAndGet()
            return
        }
        tally.acquired.incrementAndGet()
        gauge.enter(n, if (resize) maxTotalEver.get() else initial)
        try {
            if (rnd(0, 2) == 0) yield() // a cancellation point while holding
        } finally {
            gauge.exit(n)
            pool.release(n)
        }
    }

    fourThreads().use { threads ->
        withContext(threads) {
            coroutineScope {
                val canceller = with(board) { launchCanceller(perMilli = 2) { done.get() } }
                val watchdog = with(dog) {
                    launchWatchdog({ done.get() }) {
                        val a = pool.availablePermits
                        val q = pool.queueLength
                        if (q > 0 && a >= maxRequest) "availablePermits=$a queueLength=$q ($pool)" else null
                    }
                }
                val resizer = if (!resize) null else launch {
                    var closed = false
                    while (!done.get()) {
                        val k = rnd(1, 3)
                        val total = initial + net.get()
                        if (rnd(0, 2) == 0 && total + k <= 8) {
                            maxTotalEver.accumulateAndGet(total + k) { a, b -> maxOf(a, b) }
                            pool.addPermits(k)
                            net.addAndGet(k)
                        } else if (total - k >= 1) {
                            pool.reducePermits(k)
                            net.addAndGet(-k)
                        }
                        if (!closed && finishedRounds.get() > totalRounds / 2) {
                            pool.close(IllegalStateException("closed by the storm"))
                            closed = true
                        }
                        delay(1)
                    }
                }
                val workers = List(size.workers) { i ->
                    launch {
                        repeat(size.rounds) {
                            val job = launch { attempt() }
                            board.put(i, job)
                            job.join()
                            finishedRounds.incrementAndGet()
                        }
                    }
                }
                val finished = withTimeoutOrNull(120.seconds) { workers.joinAll() }
                done.set(true)
                if (finished == null) {
                    coroutineContext.cancelChildrenSafely()
                    throw AssertionError("${put.name}: workers stranded (P3): $tally, available=${pool.availablePermits} " +
                        "queueLength=${pool.queueLength}, held=${gauge.held}")
                }
                canceller.join()
                watchdog.join()
                resizer?.join()
            }
        }
    }

    val expected = initial + net.get()
    val queue = (pool as WaiterQueueOwner).waiterQueue
    assertEquals(0, gauge.violationCount, "${put.name}: P1 violated: ${gauge.firstViolation}")
    assertNull(dog.failure, "${put.name}: P2 violated")
    assertTrue(dog.checks.get() > 0, "the watchdog never ran")
    assertEquals(0, gauge.held, "${put.name}: permits still counted as held")
    assertEquals(expected, pool.availablePermits, "${put.name}: P3 availablePermits; $tally")
    assertEquals(expected, queue.totalPermits, "${put.name}: P3 totalPermits")
    assertEquals(0, pool.queueLength, "${put.name}: P3 queueLength")
    assertEquals(resize, pool.isClosed)
    assertTrue(tally.acquired.get() > 0 && tally.tried.get() > 0 && tally.timedOut.get() > 0 && tally.cancelled.get() > 0,
        "${put.name}: P4 a path was never exercised: $tally")
    if (resize) assertTrue(tally.failed.get() > 0, "${put.name}: nobody saw the close: $tally")
    println("${put.name} storm (resize=$resize, workers=${size.workers}, rounds=${size.rounds}): $tally, peak held ${gauge.peakHeld}, " +
        "watchdog samples ${dog.checks.get()}, final total $expected")
}

private fun kotlin.coroutines.CoroutineContext.cancelChildrenSafely() {
    this[kotlinx.coroutines.Job]?.children?.forEach { it.cancel() }
}
