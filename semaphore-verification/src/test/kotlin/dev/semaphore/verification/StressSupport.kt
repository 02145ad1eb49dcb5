/*
 * Shared machinery of the multi-threaded stress tests: a fixed pool of 4 real threads, a canceller
 * that cancels random in-flight attempts, a progress watchdog, and the holder counter.
 *
 * Invariants these helpers let the tests check:
 * H1  Safety: the permits held by callers that returned from an acquisition (counted in
 *     [HolderGauge], incremented inside the critical section, decremented before release) never
 *     exceed the permits that exist; the gauge records every violation, it does not stop at the first.
 * H2  Progress (watchdog): a waiter that fits is never left queued while permits are free. Because the
 *     metrics are two separate snapshots, a single sample may be stale; only a condition that persists
 *     across [Watchdog.samples] samples a few milliseconds apart counts as stuck.
 */
package dev.semaphore.verification

import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.ExecutorCoroutineDispatcher
import kotlinx.coroutines.Job
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.isActive
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import java.util.concurrent.Executors
import java.util.concurrent.ThreadLocalRandom
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicReferenceArray
import kotlin.time.Duration.Companion.seconds

/** A pool of 4 real threads (the brief's "fixed pool of 4"); close it after use. */
fun fourThreads(): ExecutorCoroutineDispatcher = Executors.newFixedThreadPool(4) { r ->
    Thread(r, "stress-worker").apply { isDaemon = true }
}.asCoroutineDispatcher()

/** A random int in [from, until). */
fun rnd(from: Int, until: Int): Int = ThreadLocalRandom.current().nextInt(from, until)

/** Counts permits currently held by callers and remembers the worst excess over a bound (H1). */
class HolderGauge {
    private val inUse = AtomicInteger()
    private val violations = AtomicInteger()
    private val peak = AtomicInteger()

    @Volatile
    var firstViolation: String? = null
        private set

    /** Called right after an acquisition of [n] returned; [bound] is the most permits that may be held now. */
    fun enter(n: Int, bound: Int) {
        val now = inUse.addAndGet(n)
        peak.accumulateAndGet(now) { a, b -> maxOf(a, b) }
        if (now > bound) {
            violations.incrementAndGet()
            if (firstViolation == null) firstViolation = "$now permits held at once, bound $bound"
        }
    }

    /** Called right before the [n] permits are released. */
    fun exit(n: Int) {
        inUse.addAndGet(-n)
    }

    val held: Int get() = inUse.get()
    val violationCount: Int get() = violations.get()
    val peakHeld: Int get() = peak.get()
}

/** Outcome counters, so a test can show that every path (grant, cancel, timeout...) was exercised. */
class Tally {
    val acquired = AtomicLong()
    val tried = AtomicLong()
    val timedOut = AtomicLong()
    val cancelled = AtomicLong()
    val failed = AtomicLong()
    override fun toString() =
        "acquired=${acquired.get()} triedFalse=${tried.get()} timedOut=${timedOut.get()} cancelled=${cancelled.get()} failed=${failed.get()}"
}

/**
 * Slots of in-flight attempts that a canceller coroutine cancels at random. Each worker owns slot
 * `i` and stores the job of its current attempt there.
 */
class CancelBoard(size: Int) {
    private val slots = AtomicReferenceArray<Job?>(size)
    val size: Int = slots.length()

    fun put(i: Int, job: Job) = slots.set(i, job)

    /** Launches the canceller: about [perMilli] cancellations of random slots per millisecond until [stop]. */
    fun CoroutineScope.launchCanceller(perMilli: Int, stop: () -> Boolean): Job = launch {
        while (isActive && !stop()) {
            repeat(perMilli) { slots.get(rnd(0, size))?.cancel() }
            delay(1)
        }
    }
}

/**
 * The progress watchdog (H2): every [periodMs] it evaluates [stuck] (which must read the primitive's
 * metrics and return a description when they show free permits that a queued waiter fits, or null);
 * [samples] consecutive stuck readings record a failure.
 */
class Watchdog(private val samples: Int = 8, private val periodMs: Long = 3) {
    @Volatile
    var failure: String? = null
        private set
    val checks = AtomicLong()

    fun CoroutineScope.launchWatchdog(stop: () -> Boolean, stuck: () -> String?): Job = launch {
        var streak = 0
        while (isActive && !stop()) {
            val s = stuck()
            checks.incrementAndGet()
            streak = if (s != null) streak + 1 else 0
            if (streak >= samples && failure == null) failure = "stuck for $samples samples ${periodMs}ms apart: $s"
            delay(periodMs)
        }
    }
}

/**
 * Runs a storm on [fourThreads]: [workers] workers each make [rounds] attempts, `attempt(i)` each in a
 * job of its own that the [board]'s canceller may cancel (about 2 per millisecond), while [dog]
 * samples [stuck] (H2). Throws if the workers do not all finish within 120 s (stranded), with [state].
 */
suspend fun runStorm(
    workers: Int,
    rounds: Int,
    board: CancelBoard,
    dog: Watchdog,
    stuck: () -> String?,
    state: () -> String,
    attempt: suspend (worker: Int) -> Unit,
) {
    val done = AtomicBoolean(false)
    fourThreads().use { threads ->
        withContext(threads) {
            coroutineScope {
                val canceller = with(board) { launchCanceller(perMilli = 2) { done.get() } }
                val watchdog = with(dog) { launchWatchdog({ done.get() }, stuck) }
                val jobs = List(workers) { i ->
                    launch {
                        repeat(rounds) {
                            val job = launch { attempt(i) }
                            board.put(i, job)
                            job.join()
                        }
                    }
                }
                val finished = withTimeoutOrNull(120.seconds) { jobs.joinAll() }
                done.set(true)
                if (finished == null) {
                    jobs.forEach { it.cancel() }
                    throw AssertionError("workers stranded: ${state()}")
                }
                canceller.join()
                watchdog.join()
            }
        }
    }
}
