package dev.semaphore

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.runTest
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * The calls a user writes from memory, written exactly so, and what each does (issue 27). The calls
 * that must not compile are in semaphore-verification's CompileShapesTest.
 */
class CallShapesSpec : FunSpec({
    test("PrioritySemaphore: a positional Int is the permit count, as on Semaphore (2 permits, not priority 2)") {
        runTest {
            val pool = PrioritySemaphore(2)
            pool.acquire(2)
            pool.availablePermits shouldBe 0
            val other = launch { pool.acquire() }
            testScheduler.runCurrent()
            pool.queueLength shouldBe 1
            pool.release(2) // gives back exactly what acquire(2) took: the waiter gets one of them
            testScheduler.runCurrent()
            other.isCompleted shouldBe true
            pool.tryAcquire() shouldBe true
            pool.tryAcquire() shouldBe false // 2 holders of 2 permits, never 3
            pool.availablePermits shouldBe 0
            pool.release(2)
            pool.availablePermits shouldBe 2
        }
    }

    test("PrioritySemaphore: priority is named; withPermit(2, priority = 5) holds 2 permits at priority 5") {
        runTest {
            val pool = PrioritySemaphore(2)
            pool.acquire(2)
            val served = mutableListOf<String>()
            launch { pool.withPermit(priority = 1) { served += "low" } }
            launch { pool.withPermit(2, priority = 5) { served += "high, 2 permits"; pool.availablePermits shouldBe 0 } }
            testScheduler.runCurrent()
            pool.queueLength(5) shouldBe 1
            pool.queueLength(1) shouldBe 1
            pool.release(2) // the head (priority 5) takes both; the low one waits for them
            testScheduler.advanceUntilIdle()
            served shouldBe listOf("high, 2 permits", "low")
            pool.tryAcquire(2, priority = 0) shouldBe true
            pool.availablePermits shouldBe 0
            pool.release(2)
        }
    }

    test("timed tries take the timeout first and wait it: tryAcquire(5.seconds), tryAcquire(5.seconds, permits = 2)") {
        runTest {
            val semaphore = Semaphore(2)
            semaphore.acquire(2)
            val start = testScheduler.currentTime
            semaphore.tryAcquire(5.seconds) shouldBe false
            (testScheduler.currentTime - start) shouldBe 5_000L
            launch { delay(1_000); semaphore.release(2) }
            semaphore.tryAcquire(5.seconds, permits = 2) shouldBe true
            (testScheduler.currentTime - start) shouldBe 6_000L
            semaphore.availablePermits shouldBe 0

            val pool = PrioritySemaphore(1)
            pool.acquire()
            pool.tryAcquire(2.seconds, priority = 3) shouldBe false
            (testScheduler.currentTime - start) shouldBe 8_000L
        }
    }

    test("lock.tryLock(5.seconds) waits up to 5 seconds (it used to take the Duration for an owner and not wait)") {
        runTest {
            val lock = Lock()
            lock.lock()
            val start = testScheduler.currentTime
            lock.tryLock(5.seconds) shouldBe false
            (testScheduler.currentTime - start) shouldBe 5_000L
            launch { delay(3_000); lock.unlock() }
            lock.tryLock(5.seconds) shouldBe true
            (testScheduler.currentTime - start) shouldBe 8_000L
            lock.unlock() // held without owner: the Duration was not taken for one
            lock.isLocked shouldBe false

            val me = Any()
            lock.tryLock(5.seconds, owner = me) shouldBe true
            lock.holdsLock(me) shouldBe true
            shouldThrow<IllegalStateException> { lock.tryLock(1.seconds, me) } // not reentrant: the owner is checked
            lock.unlock(me)
        }
    }

    test("every pool has totalPermits, which follows addPermits and reducePermits") {
        val semaphore = Semaphore(3)
        semaphore.totalPermits shouldBe 3
        semaphore.tryAcquire(2) shouldBe true
        semaphore.totalPermits shouldBe 3 // held permits still exist
        semaphore.addPermits(2)
        semaphore.totalPermits shouldBe 5
        semaphore.reducePermits(4)
        semaphore.totalPermits shouldBe 1
        semaphore.availablePermits shouldBe -1 // 2 held of a total of 1: a debt
        semaphore.release(2)
        semaphore.availablePermits shouldBe 1

        val pool = PrioritySemaphore(4, aging = 1.milliseconds)
        pool.totalPermits shouldBe 4
        pool.addPermits(1)
        pool.totalPermits shouldBe 5
    }

    test("Lock.close and ReadWriteLock.close: queued waiters fail with the cause, holds can still be ended") {
        runTest {
            val lock = Lock()
            lock.lock(owner = "holder")
            val waiter = async { runCatching { lock.lock() }.exceptionOrNull() }
            testScheduler.runCurrent()
            val cause = RuntimeException("shutdown")
            lock.close(cause)
            (waiter.await() as SemaphoreClosedException).cause shouldBe cause
            shouldThrow<SemaphoreClosedException> { lock.tryLock() } // held and closed: refused, not false
            lock.unlock("holder")
            shouldThrow<SemaphoreClosedException> { lock.tryLock() }
            lock.isLocked shouldBe false

            val rw = ReadWriteLock()
            rw.lockRead()
            val writer = async { runCatching { rw.lockWrite() }.exceptionOrNull() }
            testScheduler.runCurrent()
            rw.close(cause)
            rw.isClosed shouldBe true
            (writer.await() as SemaphoreClosedException).cause shouldBe cause
            shouldThrow<SemaphoreClosedException> { rw.tryLockRead() }
            shouldThrow<SemaphoreClosedException> { rw.tryLockWrite() } // refused by the read hold, and closed
            rw.unlockRead()
            rw.readHolds shouldBe 0
            rw.queueLength shouldBe 0
        }
    }
})
