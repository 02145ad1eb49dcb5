package dev.semaphore

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withTimeout
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds

/** Snapshot of what a Semaphore shows, to assert that a failed call changed nothing. */
private data class Snapshot(val available: Int, val queued: Int, val closed: Boolean)

private fun Semaphore.state() = Snapshot(availablePermits, queueLength, isClosed)

class SemaphoreSpec : FunSpec({
    context("multi-permit") {
        test("a request is granted whole, and the head blocks smaller requests behind it") {
            runTest {
                val s = Semaphore(4)
                s.acquire(3) // 1 free
                val order = mutableListOf<String>()
                launch { s.acquire(2); order += "two"; s.release(2) }
                launch { s.acquire(1); order += "one"; s.release(1) }
                testScheduler.runCurrent()
                order shouldBe emptyList() // "one" would fit but waits behind "two": head-of-line
                s.queueLength shouldBe 2
                s.availablePermits shouldBe 1
                s.release(1) // 2 free: "two" fits, then "one" too
                testScheduler.advanceUntilIdle()
                order shouldBe listOf("two", "one")
                s.release(2)
                s.availablePermits shouldBe 4
            }
        }

        test("one release can grant several waiters at once, in order") {
            runTest {
                val s = Semaphore(6)
                s.acquire(6)
                val order = mutableListOf<Int>()
                val holders = List(3) { i -> launch { s.acquire(2); order += i } }
                testScheduler.runCurrent()
                s.release(6)
                testScheduler.runCurrent()
                order shouldBe listOf(0, 1, 2)
                holders.forEach { it.isCompleted shouldBe true }
                s.availablePermits shouldBe 0
                s.release(6)
            }
        }

        test("the fast path is refused while waiters queue, even for a request that would fit") {
            val s = Semaphore(3)
            runTest {
                s.acquire(2)
                launch { s.acquire(3) }
                testScheduler.runCurrent()
                s.tryAcquire(1) shouldBe false // one permit is free but the head wants 3
                s.availablePermits shouldBe 1
                s.release(2) // head granted
                testScheduler.runCurrent()
                s.availablePermits shouldBe 0
                s.release(3)
            }
        }

        test("a request larger than the total fails at once instead of queueing forever") {
            runTest {
                val s = Semaphore(3)
                val e = shouldThrow<IllegalArgumentException> { s.acquire(4) }
                e.message!! shouldContain "4 permits"
                e.message!! shouldContain "3 permits in total"
                shouldThrow<IllegalArgumentException> { s.tryAcquire(4) }
                shouldThrow<IllegalArgumentException> { s.tryAcquire(10.milliseconds, 4) }
                s.state() shouldBe Snapshot(3, 0, false)
            }
        }
    }

    context("timeouts") {
        test("a multi-permit timeout leaves nothing held and lets those behind proceed") {
            runTest {
                val s = Semaphore(3)
                s.acquire(2)
                val big = async { s.tryAcquire(100.milliseconds, 3) }
                var smallRan = false
                launch { s.acquire(1); smallRan = true }
                testScheduler.runCurrent()
                smallRan shouldBe false // behind the head
                testScheduler.advanceTimeBy(101)
                testScheduler.runCurrent()
                big.await() shouldBe false
                smallRan shouldBe true // the timed-out head left; the small one fit
                s.availablePermits shouldBe 0
                s.release(3)
            }
        }

        test("Duration.INFINITE waits without limit") {
            runTest {
                val s = Semaphore(1)
                s.acquire()
                launch { delay(1_000_000); s.release() }
                s.tryAcquire(Duration.INFINITE, 1) shouldBe true
                s.availablePermits shouldBe 0
            }
        }

        test("timeouts racing grants on real threads: the result always says where the permits are") {
            val s = Semaphore(2)
            var successes = 0
            repeat(300) {
                runBlocking(Dispatchers.Default) {
                    s.acquire(2)
                    val timed = async { s.tryAcquire(1.milliseconds, 2) }
                    launch { delay(1); s.release(2) }
                    if (timed.await()) {
                        successes++
                        s.availablePermits shouldBe 0
                        s.release(2)
                    }
                }
                s.availablePermits shouldBe 2
                s.queueLength shouldBe 0
            }
            // Not a speed claim: only that both outcomes were exercised is not guaranteed; the
            // invariant above is what is checked on every round.
            (successes in 0..300) shouldBe true
        }

        test("withTimeout around acquire never leaks a permit either (prompt cancellation)") {
            val s = Semaphore(1)
            repeat(300) {
                runBlocking(Dispatchers.Default) {
                    s.acquire()
                    launch { delay(1); s.release() }
                    try {
                        withTimeout(1) { s.acquire() }
                        s.release()
                    } catch (_: CancellationException) {
                    }
                }
                s.availablePermits shouldBe 1
                s.queueLength shouldBe 0
            }
        }
    }

    context("close") {
        test("queued waiters fail with the cause, holders may still release, later acquires fail") {
            runTest {
                val s = Semaphore(2)
                s.acquire(2)
                val cause = RuntimeException("shutting down")
                val failures = List(3) { async { runCatching { s.acquire() }.exceptionOrNull() } }
                testScheduler.runCurrent()
                s.queueLength shouldBe 3
                s.close(cause)
                testScheduler.runCurrent()
                failures.forEach { f ->
                    val e = f.await()
                    (e is SemaphoreClosedException) shouldBe true
                    e!!.cause shouldBeSameInstanceAs cause
                }
                s.isClosed shouldBe true
                s.queueLength shouldBe 0
                shouldThrow<SemaphoreClosedException> { s.acquire() }.cause shouldBeSameInstanceAs cause
                shouldThrow<SemaphoreClosedException> { s.tryAcquire() }
                shouldThrow<SemaphoreClosedException> { s.tryAcquire(10.milliseconds, 1) }
                s.release(2) // holders may still release
                s.availablePermits shouldBe 2
                s.close(RuntimeException("second")) // no effect
                shouldThrow<SemaphoreClosedException> { s.acquire() }.cause shouldBeSameInstanceAs cause
                shouldThrow<IllegalStateException> { s.release() } // over-release is still caught
            }
        }

        test("close without a cause") {
            val s = Semaphore(1)
            s.close()
            val e = shouldThrow<SemaphoreClosedException> { s.tryAcquire() }
            e.cause shouldBe null
            e.message shouldBe "the semaphore is closed"
        }
    }

    context("resizing") {
        test("addPermits grants queued waiters that now fit") {
            runTest {
                val s = Semaphore(3)
                s.acquire(3)
                var got = false
                launch { s.acquire(2); got = true }
                testScheduler.runCurrent()
                got shouldBe false
                s.addPermits(1) // total 4, free 1: still short
                testScheduler.runCurrent()
                got shouldBe false
                s.addPermits(1) // total 5, free 2
                testScheduler.runCurrent()
                got shouldBe true
                s.availablePermits shouldBe 0
                s.release(5)
                s.availablePermits shouldBe 5
            }
        }

        test("reducePermits below the held count creates a debt that releases repay first") {
            runTest {
                val s = Semaphore(4)
                s.acquire(4)
                s.reducePermits(2) // total 2; 4 still held
                s.availablePermits shouldBe -2
                var got = false
                launch { s.acquire(1); got = true }
                testScheduler.runCurrent()
                s.release(2)
                testScheduler.runCurrent()
                s.availablePermits shouldBe 0
                got shouldBe false // the debt came first
                s.release(1)
                testScheduler.runCurrent()
                got shouldBe true
                s.availablePermits shouldBe 0
                s.release(1) // the waiter's permit
                s.release(1) // the last of the four originally held
                s.availablePermits shouldBe 2
                shouldThrow<IllegalStateException> { s.release() }.message!! shouldContain "2 of 2"
            }
        }

        test("a queued request that no longer fits the total fails when it reaches the head; the rest go on") {
            runTest {
                val s = Semaphore(4)
                s.acquire(4)
                val big = async { runCatching { s.acquire(4) }.exceptionOrNull() }
                var smallRan = false
                launch { s.acquire(1); smallRan = true }
                testScheduler.runCurrent()
                s.reducePermits(1) // total 3: the head's request for 4 can never be granted
                testScheduler.runCurrent()
                val e = big.await()
                (e is IllegalStateException) shouldBe true
                e!!.message!! shouldContain "4 permits can never be granted"
                smallRan shouldBe false // 4 held, total 3: debt of 1
                s.release(2)
                testScheduler.runCurrent()
                smallRan shouldBe true
                s.queueLength shouldBe 0
            }
        }

        test("drainPermits takes what is free and returns the count; 0 when in debt") {
            val s = Semaphore(5)
            s.tryAcquire(2) shouldBe true
            s.drainPermits() shouldBe 3
            s.availablePermits shouldBe 0
            s.drainPermits() shouldBe 0
            s.reducePermits(4) // total 1, held 5 (2 + 3 drained)
            s.drainPermits() shouldBe 0
            s.availablePermits shouldBe -4
            s.release(5)
            s.availablePermits shouldBe 1
        }
    }

    context("bad input throws, names the value, and changes nothing") {
        val cases: List<Pair<String, suspend (Semaphore) -> Unit>> = listOf(
            "acquire(0)" to { s -> s.acquire(0) },
            "acquire(-1)" to { s -> s.acquire(-1) },
            "tryAcquire(0)" to { s -> s.tryAcquire(0) },
            "tryAcquire(Int.MIN_VALUE)" to { s -> s.tryAcquire(Int.MIN_VALUE) },
            "tryAcquire(timeout, 0)" to { s -> s.tryAcquire(1.milliseconds, 0) },
            "release(0)" to { s -> s.release(0) },
            "release(-3)" to { s -> s.release(-3) },
            "addPermits(0)" to { s -> s.addPermits(0) },
            "addPermits(-2)" to { s -> s.addPermits(-2) },
            "addPermits(Int.MAX_VALUE)" to { s -> s.addPermits(Int.MAX_VALUE) },
            "reducePermits(0)" to { s -> s.reducePermits(0) },
            "reducePermits(total + 1)" to { s -> s.reducePermits(4) },
            "withPermit(-1)" to { s -> s.withPermit(-1) { } },
        )
        for ((label, call) in cases) {
            test(label) {
                runTest {
                    val s = Semaphore(3)
                    s.acquire(1)
                    launch { s.acquire(3) } // a waiter queued, so the slow paths are checked too
                    testScheduler.runCurrent()
                    val before = s.state()
                    val e = shouldThrow<IllegalArgumentException> { call(s) }
                    val named = Regex("-?\\d+").findAll(label).map { it.value }.toList()
                    val shown = when {
                        "MIN_VALUE" in label -> Int.MIN_VALUE.toString()
                        "MAX_VALUE" in label -> Int.MAX_VALUE.toString()
                        "total + 1" in label -> "4"
                        else -> named.last()
                    }
                    e.message!! shouldContain shown
                    s.state() shouldBe before
                    s.release(1)
                    testScheduler.runCurrent()
                    s.availablePermits shouldBe 0 // the waiter got all 3: nothing was lost or added
                }
            }
        }

        test("over-release with a waiter queued") {
            runTest {
                val s = Semaphore(3)
                s.acquire(1)
                launch { s.acquire(3) }
                testScheduler.runCurrent()
                val before = s.state()
                shouldThrow<IllegalStateException> { s.release(2) }.message!! shouldContain "cannot release 2 permits"
                s.state() shouldBe before
                s.release(1)
                testScheduler.runCurrent()
                s.state() shouldBe Snapshot(0, 0, false)
            }
        }

        test("negative initial permits") {
            shouldThrow<IllegalArgumentException> { Semaphore(-1) }.message!! shouldContain "-1"
        }

        test("zero initial permits is valid, but refuses requests as impossible until permits are added") {
            runTest {
                val s = Semaphore(0)
                shouldThrow<IllegalArgumentException> { s.tryAcquire() }.message!! shouldContain "0 permits in total"
                shouldThrow<IllegalArgumentException> { s.acquire() }
                shouldThrow<IllegalStateException> { s.release() }
                s.state() shouldBe Snapshot(0, 0, false)
                s.addPermits(1)
                s.acquire()
                s.availablePermits shouldBe 0
            }
        }
    }
})
