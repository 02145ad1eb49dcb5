package dev.semaphore

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.runTest
import kotlin.random.Random
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** Queues one waiter per (label, priority) in the given order, then releases the single permit. */
private fun TestScope.serveOrder(s: PrioritySemaphore, requests: List<Pair<String, Int>>, gapMs: Long = 0): List<String> {
    val served = mutableListOf<String>()
    for ((label, priority) in requests) {
        launch { s.withPermit(priority = priority) { served += label } }
        testScheduler.runCurrent()
        if (gapMs > 0) testScheduler.advanceTimeBy(gapMs)
    }
    s.release()
    testScheduler.advanceUntilIdle()
    return served
}

class PrioritySemaphoreSpec : FunSpec({
    test("higher priority first, FIFO within a level") {
        runTest {
            val s = PrioritySemaphore(1)
            s.acquire()
            val order = serveOrder(
                s,
                listOf("low1" to 0, "high1" to 5, "mid1" to 2, "high2" to 5, "low2" to 0, "mid2" to 2, "top" to 9),
            )
            order shouldBe listOf("top", "high1", "high2", "mid1", "mid2", "low1", "low2")
            s.availablePermits shouldBe 1
        }
    }

    test("Int.MIN_VALUE and Int.MAX_VALUE are valid priorities and order correctly") {
        runTest {
            val s = PrioritySemaphore(1)
            s.acquire()
            val order = serveOrder(s, listOf("min" to Int.MIN_VALUE, "zero" to 0, "max" to Int.MAX_VALUE, "min2" to Int.MIN_VALUE))
            order shouldBe listOf("max", "zero", "min", "min2")
        }
    }

    test("queueLength(priority) counts per level") {
        runTest {
            val s = PrioritySemaphore(1)
            s.acquire()
            repeat(3) { launch { runCatching { s.acquire(priority = 1) } } }
            repeat(2) { launch { runCatching { s.acquire(priority = -4) } } }
            testScheduler.runCurrent()
            s.queueLength shouldBe 5
            s.queueLength(1) shouldBe 3
            s.queueLength(-4) shouldBe 2
            s.queueLength(7) shouldBe 0
            s.close() // fails the five waiters
            testScheduler.runCurrent()
            s.queueLength shouldBe 0
            s.queueLength(1) shouldBe 0
        }
    }

    test("a newcomer of higher priority than every waiter takes free permits at once; others may not barge") {
        runTest {
            val s = PrioritySemaphore(3)
            s.acquire(priority = 0, permits = 2) // 1 free
            launch { s.acquire(priority = 1, permits = 2) } // head, does not fit
            testScheduler.runCurrent()
            s.tryAcquire(priority = 1, permits = 1) shouldBe false // equal priority: behind the head
            s.tryAcquire(priority = 0, permits = 1) shouldBe false
            s.tryAcquire(priority = 2, permits = 1) shouldBe true // it would be first in line, and fits
            s.availablePermits shouldBe 0
            s.release(3)
            testScheduler.runCurrent()
            s.availablePermits shouldBe 1
            s.queueLength shouldBe 0
        }
    }

    test("a cancelled head of the top level lets the next level's head be granted when it fits") {
        runTest {
            val s = PrioritySemaphore(3)
            s.acquire(permits = 2)
            val big = launch { s.acquire(priority = 5, permits = 3) }
            var lowRan = false
            launch { s.acquire(priority = 0, permits = 1); lowRan = true }
            testScheduler.runCurrent()
            lowRan shouldBe false
            big.cancel()
            testScheduler.runCurrent()
            lowRan shouldBe true
            s.queueLength shouldBe 0
        }
    }

    test("aging: a low-priority waiter overtakes newcomers once it has waited long enough (virtual time)") {
        runTest {
            val s = PrioritySemaphore(1, aging = 1.seconds, timeSource = testScheduler.timeSource)
            s.acquire()
            val served = mutableListOf<String>()
            launch { s.withPermit(priority = 0) { served += "old-low" } }
            testScheduler.runCurrent()
            testScheduler.advanceTimeBy(3_500) // old-low now ranks like priority 3.5
            launch { s.withPermit(priority = 3) { served += "new-3" } }
            launch { s.withPermit(priority = 4) { served += "new-4" } }
            testScheduler.runCurrent()
            s.release()
            testScheduler.advanceUntilIdle()
            served shouldBe listOf("new-4", "old-low", "new-3")
        }
    }

    test("aging: exactly on a whole interval the older waiter wins the tie") {
        runTest {
            val s = PrioritySemaphore(1, aging = 1.seconds, timeSource = testScheduler.timeSource)
            s.acquire()
            val order = serveOrder(s, listOf("old-0" to 0, "new-2" to 2), gapMs = 2_000)
            order shouldBe listOf("old-0", "new-2")
        }
    }

    test("without aging, waiting long does not change the order") {
        runTest {
            val s = PrioritySemaphore(1)
            s.acquire()
            val order = serveOrder(s, listOf("old-0" to 0, "new-1" to 1), gapMs = 1_000_000)
            order shouldBe listOf("new-1", "old-0")
        }
    }

    test("aging across the whole Int range does not overflow") {
        runTest {
            val s = PrioritySemaphore(1, aging = 365.days(), timeSource = testScheduler.timeSource)
            s.acquire()
            val order = serveOrder(s, listOf("min" to Int.MIN_VALUE, "max" to Int.MAX_VALUE, "zero" to 0), gapMs = 10)
            order shouldBe listOf("max", "zero", "min")
        }
    }

    test("random priorities against a reference model of the order (with aging)") {
        runTest {
            val rnd = Random(42)
            repeat(20) {
                val agingMs = 100L
                val s = PrioritySemaphore(1, aging = agingMs.milliseconds, timeSource = testScheduler.timeSource)
                s.acquire()
                data class Req(val label: Int, val priority: Int, val at: Long)
                val reqs = mutableListOf<Req>()
                val served = mutableListOf<Int>()
                val start = testScheduler.currentTime
                repeat(30) { i ->
                    val p = rnd.nextInt(-3, 4)
                    reqs += Req(i, p, testScheduler.currentTime - start)
                    launch { s.withPermit(priority = p) { served += i } }
                    testScheduler.runCurrent()
                    testScheduler.advanceTimeBy(rnd.nextLong(0, 60))
                }
                s.release()
                testScheduler.advanceUntilIdle()
                // Reference: order by effective priority p - t / aging, then by arrival. Exact in
                // rationals: compare p1 * aging - t1 with p2 * aging - t2.
                val expected = reqs.sortedWith(compareByDescending<Req> { it.priority * agingMs - it.at }.thenBy { it.at })
                served shouldBe expected.map { it.label }
            }
        }
    }

    test("bad input: permits, aging, initial permits; state unchanged") {
        runTest {
            val s = PrioritySemaphore(2)
            shouldThrow<IllegalArgumentException> { s.acquire(priority = 1, permits = 0) }.message!! shouldContain "was 0"
            shouldThrow<IllegalArgumentException> { s.tryAcquire(priority = 1, permits = -2) }.message!! shouldContain "-2"
            shouldThrow<IllegalArgumentException> { s.tryAcquire(5.milliseconds, 3, priority = 0) }.message!! shouldContain "3 permits"
            shouldThrow<IllegalStateException> { s.release(1) }
            s.availablePermits shouldBe 2
            s.queueLength shouldBe 0
            shouldThrow<IllegalArgumentException> { PrioritySemaphore(1, aging = Duration.ZERO) }.message!! shouldContain "0s"
            shouldThrow<IllegalArgumentException> { PrioritySemaphore(1, aging = (-1).seconds) }.message!! shouldContain "-1s"
            shouldThrow<IllegalArgumentException> { PrioritySemaphore(1, aging = Duration.INFINITE) }.message!! shouldContain "Infinity"
            shouldThrow<IllegalArgumentException> { PrioritySemaphore(-5) }.message!! shouldContain "-5"
        }
    }

    test("timeouts, close and resizing behave as in Semaphore") {
        runTest {
            val s = PrioritySemaphore(2)
            s.acquire(permits = 2)
            s.tryAcquire(priority = 3, permits = 1, timeout = 20.milliseconds) shouldBe false
            val waiting = async { runCatching { s.acquire(priority = 1) }.exceptionOrNull() }
            testScheduler.runCurrent()
            s.addPermits(1)
            testScheduler.runCurrent()
            waiting.await() shouldBe null
            s.availablePermits shouldBe 0
            val late = async { runCatching { s.acquire(priority = 9) }.exceptionOrNull() }
            testScheduler.runCurrent()
            s.close(IllegalStateException("bye"))
            (late.await() is SemaphoreClosedException) shouldBe true
            s.release(3)
            s.availablePermits shouldBe 3
            delay(1)
        }
    }
})

private fun Int.days(): Duration = (this * 24).toLong().let { hours -> (hours * 3600).seconds }
