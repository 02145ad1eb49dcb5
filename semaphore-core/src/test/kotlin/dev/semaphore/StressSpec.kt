package dev.semaphore

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import java.util.concurrent.atomic.AtomicInteger
import kotlin.random.Random
import kotlin.time.Duration.Companion.microseconds

/** Scale of the stress runs: 1 by default, 5 under -Pstress. */
internal val stressScale: Int = System.getProperty("stress.scale")?.toIntOrNull() ?: 1

/**
 * Multi-threaded stress on Dispatchers.Default: random permit counts, random cancellations and
 * timeouts. At the end every permit is back and nobody waits; at every instant the permits held
 * never exceeded the total.
 */
class StressSpec : FunSpec({
    val total = 8

    /** Counts of what a storm did, so the spec can assert that every path was exercised. */
    class Outcome(val acquired: Int, val timedOut: Int, val cancelled: Int, val maxQueue: Int)

    suspend fun storm(
        acquire: suspend (Int, Int) -> Unit,
        tryFor: suspend (Int, Int) -> Boolean,
        release: (Int) -> Unit,
        queueLength: () -> Int,
        seed: Int,
        describe: () -> String,
    ): Outcome {
        val held = AtomicInteger()
        val maxHeld = AtomicInteger()
        val acquired = AtomicInteger()
        val timedOut = AtomicInteger()
        val cancelled = AtomicInteger()
        val maxQueue = AtomicInteger()
        val workers = 64
        val target = 100_000 * stressScale
        suspend fun critical(n: Int, rnd: Random) {
            acquired.incrementAndGet()
            maxHeld.accumulateAndGet(held.addAndGet(n), ::maxOf)
            try {
                if (rnd.nextInt(4) == 0) yield() // may be cancelled here: the finally still releases
            } finally {
                held.addAndGet(-n)
                release(n)
            }
        }
        withContext(Dispatchers.Default) {
            // Samples the queue length, and fails the run (instead of hanging) if progress stops.
            val monitor = launch {
                var last = -1
                var stalledSince = System.nanoTime()
                while (true) {
                    maxQueue.accumulateAndGet(queueLength(), ::maxOf)
                    val now = acquired.get()
                    if (now != last) {
                        last = now
                        stalledSince = System.nanoTime()
                    } else {
                        check(System.nanoTime() - stalledSince < 20_000_000_000L) {
                            "no progress for 20 s: acquired=$now, held=${held.get()}, state=${describe()}"
                        }
                    }
                    delay(1)
                }
            }
            coroutineScope {
                repeat(workers) { w ->
                    launch {
                        val rnd = Random(seed * 1000 + w)
                        while (acquired.get() < target) {
                            val n = 1 + rnd.nextInt(3)
                            val priority = rnd.nextInt(4)
                            when (rnd.nextInt(8)) {
                                0 -> if (tryFor(n, priority)) critical(n, rnd) else timedOut.incrementAndGet()
                                1 -> {
                                    // An acquisition that a sibling cancels at a random moment.
                                    val job = launch { acquire(n, priority); critical(n, rnd) }
                                    repeat(rnd.nextInt(3)) { yield() }
                                    job.cancel()
                                    job.join()
                                    if (job.isCancelled) cancelled.incrementAndGet()
                                }
                                else -> { acquire(n, priority); critical(n, rnd) }
                            }
                        }
                    }
                }
            }
            monitor.cancel()
        }
        maxHeld.get() shouldBeLessThanOrEqual total
        held.get() shouldBe 0
        return Outcome(acquired.get(), timedOut.get(), cancelled.get(), maxQueue.get())
    }

    fun Outcome.shouldHaveExercisedEverything() {
        (acquired >= 100_000 * stressScale) shouldBe true
        (timedOut > 0) shouldBe true
        (cancelled > 0) shouldBe true
        (maxQueue > 0) shouldBe true
        println("stress: acquired=$acquired timedOut=$timedOut cancelled=$cancelled maxQueue=$maxQueue")
    }

    test("Semaphore: >= 100,000 acquisitions with random permits, cancellations and timeouts") {
        val s = Semaphore(total)
        runBlocking {
            storm(
                { n, _ -> s.acquire(n) },
                { n, _ -> s.tryAcquire(50.microseconds, n) },
                { n -> s.release(n) },
                { s.queueLength },
                1,
                { s.toString() },
            ).shouldHaveExercisedEverything()
        }
        s.availablePermits shouldBe total
        s.queueLength shouldBe 0
    }

    test("Semaphore observed on and off during the storm: a listener added and removed again and again loses nothing") {
        val s = Semaphore(total)
        runBlocking {
            val toggler = launch(Dispatchers.Default) {
                while (true) {
                    val reg = s.addListener(object : SemaphoreListener {})
                    delay(1)
                    reg.close()
                    delay(1)
                }
            }
            storm(
                { n, _ -> s.acquire(n) },
                { n, _ -> s.tryAcquire(50.microseconds, n) },
                { n -> s.release(n) },
                { s.queueLength },
                3,
                { s.toString() },
            ).shouldHaveExercisedEverything()
            toggler.cancel()
        }
        s.availablePermits shouldBe total
        s.queueLength shouldBe 0
        s.snapshot().heldPermits shouldBe 0L
    }

    test("Semaphore with tracking: every permit the listener saw acquired it saw released, and no record is left") {
        val s = Semaphore(total, Diagnostics(tracking = Tracking.HOLDERS))
        val acquiredPermits = java.util.concurrent.atomic.AtomicLong()
        val acquisitions = java.util.concurrent.atomic.AtomicLong()
        val releasedPermits = java.util.concurrent.atomic.AtomicLong()
        s.addListener(object : SemaphoreListener {
            override fun onAcquired(primitive: Inspectable, hold: HoldInfo, waited: java.time.Duration) {
                acquiredPermits.addAndGet(hold.permits.toLong())
                acquisitions.incrementAndGet()
            }

            override fun onReleased(primitive: Inspectable, hold: HoldInfo) {
                releasedPermits.addAndGet(hold.permits.toLong())
            }
        })
        runBlocking {
            storm(
                { n, _ -> s.acquire(n) },
                { n, _ -> s.tryAcquire(50.microseconds, n) },
                { n -> s.release(n) },
                { s.queueLength },
                4,
                { s.toString() },
            ).shouldHaveExercisedEverything()
        }
        s.availablePermits shouldBe total
        s.holders() shouldBe emptyList()
        s.waiters() shouldBe emptyList()
        (acquiredPermits.get() > 0) shouldBe true
        releasedPermits.get() shouldBe acquiredPermits.get()
        // observed from its creation, every acquisition took the lock: the counter is exact, like the events
        s.snapshot().acquired shouldBe acquisitions.get()
    }

    test("PrioritySemaphore (with aging): >= 100,000 acquisitions with random priorities, cancellations and timeouts") {
        val s = PrioritySemaphore(total, aging = 1.microseconds)
        runBlocking {
            storm(
                { n, p -> s.acquire(n, priority = p) },
                { n, p -> s.tryAcquire(50.microseconds, n, priority = p) },
                { n -> s.release(n) },
                { s.queueLength },
                2,
                { s.toString() },
            ).shouldHaveExercisedEverything()
        }
        s.availablePermits shouldBe total
        s.queueLength shouldBe 0
    }
})
