package dev.semaphore

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.collections.shouldNotContain
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.runCurrent
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withTimeoutOrNull
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

class SnapshotSpec : FunSpec({
    test("a semaphore's snapshot counts holds, the line and every way a request can end") {
        runTest {
            val s = Semaphore(3)
            s.snapshot().let {
                it.kind shouldBe "Semaphore"
                it.name shouldBe null
                it.totalPermits shouldBe 3
                it.availablePermits shouldBe 3
                it.heldPermits shouldBe 0L
                it.queuedRequests shouldBe 0
                it.acquired shouldBe 0L
            }
            s.acquire(2) // fast path
            s.tryAcquire(2) shouldBe false // refused
            s.tryAcquire(0.seconds, permits = 2) shouldBe false // a try without waiting: refused too
            val waiting = launch { s.acquire(2) } // waits, then is granted
            val cancelled = launch { s.acquire(3) }
            val timedOut = launch { s.tryAcquire(50.milliseconds, permits = 1) }
            runCurrent()
            s.snapshot().let {
                it.heldPermits shouldBe 2L
                it.availablePermits shouldBe 1
                it.queuedRequests shouldBe 3
                it.queuedPermits shouldBe 6L
                it.tryRefused shouldBe 2L
                it.acquired shouldBe 1L
            }
            cancelled.cancel()
            runCurrent()
            testScheduler.advanceTimeBy(100)
            runCurrent()
            timedOut.isCompleted shouldBe true
            s.snapshot().let {
                it.cancelled shouldBe 1L
                it.timedOut shouldBe 1L
                it.queuedRequests shouldBe 1
                it.queuedPermits shouldBe 2L
            }
            s.release(2)
            waiting.join()
            s.snapshot().let {
                it.acquired shouldBe 2L
                it.acquiredAfterWait shouldBe 1L
                it.heldPermits shouldBe 2L
                it.queuedRequests shouldBe 0
            }
            val blocked = launch { shouldThrow<SemaphoreClosedException> { s.acquire(3) } }
            runCurrent()
            s.close()
            blocked.join()
            shouldThrow<SemaphoreClosedException> { s.tryAcquire() }
            s.snapshot().let {
                it.failedByClose shouldBe 2L // the waiter at the close, and the try after it
                it.isClosed shouldBe true
                it.toString() shouldContain "Semaphore: 2/3 held, 0 waiting, acquired 2 (1 after waiting), try refused 2, " +
                    "timed out 1, cancelled 1, failed by close 2, closed"
            }
        }
    }

    test("a timeout around acquire counts as timed out, another cancellation as cancelled") {
        runTest {
            val s = Semaphore(1)
            s.acquire()
            withTimeoutOrNull(10.milliseconds) { s.acquire() } shouldBe null
            val job = launch(start = CoroutineStart.UNDISPATCHED) { s.acquire() }
            job.cancel()
            job.join()
            s.snapshot().timedOut shouldBe 1L
            s.snapshot().cancelled shouldBe 1L
        }
    }

    test("a priority semaphore's line is counted per priority, highest first") {
        runTest {
            val s = withoutProcessDiagnostics { PrioritySemaphore(1, diagnostics = Diagnostics(name = "jobs")) } // unobserved: no oldest wait in the text
            s.acquire()
            repeat(3) { i -> launch { shouldThrow<SemaphoreClosedException> { s.acquire(priority = if (i == 0) 1 else 5) } } }
            runCurrent()
            val snap = s.snapshot()
            snap.kind shouldBe "PrioritySemaphore"
            snap.name shouldBe "jobs"
            snap.queuedByPriority shouldBe mapOf(5 to 2, 1 to 1)
            snap.queuedByPriority.keys.toList() shouldBe listOf(5, 1)
            snap.toString() shouldContain "PrioritySemaphore \"jobs\": 1/1 held, 3 waiting (3 permits, by priority {5=2, 1=1})"
            s.close()
        }
    }

    test("a lock's snapshot says locked and who waits; a refused tryLock and a timed-out tryLock are counted apart") {
        runTest {
            val lock = Lock(diagnostics = Diagnostics(name = "ledger"))
            lock.lock("me")
            lock.tryLock("you") shouldBe false
            lock.tryLock(10.milliseconds, "you") shouldBe false
            val w = launch { lock.lock() }
            runCurrent()
            lock.snapshot().let {
                it.kind shouldBe "Lock"
                it.heldPermits shouldBe 1L
                it.queuedRequests shouldBe 1
                it.tryRefused shouldBe 1L
                it.timedOut shouldBe 1L
                it.toString() shouldContain "Lock \"ledger\": locked, 1 waiting"
            }
            lock.unlock("me")
            w.join()
            lock.snapshot().acquiredAfterWait shouldBe 1L
            lock.unlock()
            lock.snapshot().toString() shouldContain "unlocked"
        }
    }

    test("a read-write lock's snapshot shows its holds plainly") {
        runTest {
            val rw = ReadWriteLock(Diagnostics(name = "cache"))
            rw.lockRead()
            rw.lockRead()
            rw.lockUpgradableRead()
            rw.tryLockWrite() shouldBe false
            val writer = launch { rw.lockWrite() }
            runCurrent()
            rw.snapshot().let {
                it.kind shouldBe "ReadWriteLock"
                it.readHolds shouldBe 3 // two reads and the upgradable read
                it.upgradableHeld shouldBe true
                it.writeLocked shouldBe false
                it.queuedRequests shouldBe 1
                it.tryRefused shouldBe 1L
                it.toString() shouldContain "ReadWriteLock \"cache\": 3 read holds, upgradable read held, 1 waiting"
            }
            rw.unlockRead()
            rw.unlockRead()
            rw.unlockUpgradableRead()
            writer.join()
            rw.snapshot().writeLocked shouldBe true
            rw.unlockWrite()
        }
    }

    test("named primitives are listed once and dumped in one call; unnamed ones are not") {
        val a = Semaphore(2, Diagnostics(name = "snapshot-spec-a"))
        val b = Lock(diagnostics = Diagnostics.named("snapshot-spec-b"))
        val anonymous = Semaphore(1)
        val listed = Diagnostics.namedPrimitives()
        listed shouldContain a
        listed shouldContain b
        listed shouldNotContain anonymous
        val dump = Diagnostics.dumpAll()
        dump shouldContain "Semaphore \"snapshot-spec-a\": 0/2 held"
        dump shouldContain "Lock \"snapshot-spec-b\": unlocked"
    }

    test("a named primitive nobody references leaves the list when collected: the list stays as long as what is alive") {
        val before = NamedPrimitives.size()
        repeat(10_000) { Semaphore(1, Diagnostics(name = "throwaway")) }
        var size = NamedPrimitives.size()
        var rounds = 0
        while (size > before + 100 && rounds++ < 50) {
            System.gc()
            Thread.sleep(20)
            size = NamedPrimitives.size()
        }
        (size <= before + 100) shouldBe true
    }

    test("a bad name is refused with the name in the message") {
        shouldThrow<IllegalArgumentException> { Diagnostics(name = " ") }.message!! shouldContain "was \" \""
        val long = "x".repeat(201)
        shouldThrow<IllegalArgumentException> { Diagnostics.named(long) }.message!! shouldContain "(201 characters)"
    }
})
