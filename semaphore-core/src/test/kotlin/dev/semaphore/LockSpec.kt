package dev.semaphore

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withContext
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds

class LockSpec : FunSpec({
    test("locking again with the owner that holds it throws instead of deadlocking, and changes nothing") {
        runTest {
            val lock = Lock()
            val me = "me"
            lock.lock(me)
            shouldThrow<IllegalStateException> { lock.lock(me) }.message!! shouldContain "already held by me"
            shouldThrow<IllegalStateException> { lock.tryLock(me) }
            shouldThrow<IllegalStateException> { lock.tryLock(10.milliseconds, me) }
            lock.holdsLock(me) shouldBe true
            lock.queueLength shouldBe 0
            lock.unlock(me)
            lock.isLocked shouldBe false
        }
    }

    test("unlocking with another owner throws, naming both, and the holder keeps the lock") {
        val lock = Lock()
        lock.tryLock("alice") shouldBe true
        val e = shouldThrow<IllegalStateException> { lock.unlock("bob") }
        e.message!! shouldContain "alice"
        e.message!! shouldContain "bob"
        lock.holdsLock("alice") shouldBe true
        lock.isLocked shouldBe true
        lock.unlock("alice")
        lock.isLocked shouldBe false
        lock.holdsLock("alice") shouldBe false
    }

    test("unlocking an unlocked lock throws and leaves it unlocked") {
        val lock = Lock()
        shouldThrow<IllegalStateException> { lock.unlock() }.message!! shouldContain "not locked"
        lock.isLocked shouldBe false
        lock.tryLock() shouldBe true
        lock.unlock()
        shouldThrow<IllegalStateException> { lock.unlock() } // double unlock
        lock.isLocked shouldBe false
    }

    test("unlock(null) releases a lock held with an owner (no owner given means no check)") {
        val lock = Lock()
        lock.tryLock("owner") shouldBe true
        lock.unlock()
        lock.isLocked shouldBe false
    }

    test("Lock(locked = true) starts held by nobody in particular") {
        val lock = Lock(locked = true)
        lock.isLocked shouldBe true
        lock.tryLock() shouldBe false
        lock.unlock()
        lock.isLocked shouldBe false
    }

    test("a waiter granted from the queue holds the lock for its owner at once") {
        runTest {
            val lock = Lock()
            lock.lock("first")
            launch { lock.lock("second") }
            testScheduler.runCurrent()
            lock.unlock("first")
            // granted, not yet resumed: ownership is already recorded
            lock.holdsLock("second") shouldBe true
            lock.holdsLock("first") shouldBe false
            testScheduler.runCurrent()
            lock.unlock("second")
            lock.isLocked shouldBe false
        }
    }

    test("an owner granted but cancelled before resuming does not keep the lock") {
        runTest {
            val lock = Lock()
            lock.lock("first")
            val second = launch { lock.lock("second") }
            var thirdRan = false
            launch { lock.withLock("third") { thirdRan = true } }
            testScheduler.runCurrent()
            lock.unlock("first")
            second.cancel()
            testScheduler.advanceUntilIdle()
            thirdRan shouldBe true
            lock.holdsLock("second") shouldBe false
            lock.isLocked shouldBe false
        }
    }

    test("tryLock(timeout) with owners: times out with nothing held, or succeeds owning it") {
        runTest {
            val lock = Lock()
            lock.lock("a")
            lock.tryLock(50.milliseconds, "b") shouldBe false
            lock.holdsLock("b") shouldBe false
            launch { kotlinx.coroutines.delay(10); lock.unlock("a") }
            lock.tryLock(50.milliseconds, "b") shouldBe true
            lock.holdsLock("b") shouldBe true
            lock.unlock("b")
        }
    }

    test("mutual exclusion on real threads, with cancellations") {
        val lock = Lock()
        val inside = AtomicInteger()
        val maxInside = AtomicInteger()
        var counter = 0
        runBlocking {
            withContext(Dispatchers.Default) {
                val jobs = List(200) {
                    launch {
                        val me = Any() // an owner of its own: compared by identity
                        repeat(50) {
                            try {
                                lock.withLock(owner = me) {
                                    maxInside.accumulateAndGet(inside.incrementAndGet(), ::maxOf)
                                    counter++
                                    inside.decrementAndGet()
                                }
                            } catch (_: CancellationException) {
                            }
                        }
                    }
                }
                jobs.filterIndexed { i, _ -> i % 7 == 0 }.forEach { it.cancel() }
            }
        }
        maxInside.get() shouldBe 1
        lock.isLocked shouldBe false
        lock.queueLength shouldBe 0
        (counter <= 200 * 50) shouldBe true
    }
})
