package dev.semaphore

import dev.semaphore.internal.PhaseFairOrder
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.Job
import kotlinx.coroutines.async
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.runTest
import kotlin.time.Duration.Companion.milliseconds

/** The policy's guarantees, numbered as in [ReadWritePolicy.PHASE_FAIR]'s KDoc. */
class PhaseFairReadWriteLockSpec : FunSpec({
    fun pf(): ReadWriteLock = ReadWriteLock(ReadWritePolicy.PHASE_FAIR)

    fun ReadWriteLock.shouldBeFree() {
        withClue("lock: $this") {
            readHolds shouldBe 0
            isWriteLocked shouldBe false
            queueLength shouldBe 0
            val impl = this as ReadWriteLockImpl
            impl.waiterQueue.availablePermits shouldBe impl.total
        }
    }

    /** Launches [block] and runs everything runnable now, so that it has queued (or finished) when this returns. */
    fun TestScope.start(block: suspend () -> Unit): Job = launch { block() }.also { testScheduler.runCurrent() }

    context("creation") {
        test("the factory with a policy; the default stays FIFO") {
            ReadWriteLock().policy shouldBe ReadWritePolicy.FIFO
            ReadWriteLock(Diagnostics(name = "fifo")).policy shouldBe ReadWritePolicy.FIFO
            ReadWriteLock(ReadWritePolicy.FIFO).policy shouldBe ReadWritePolicy.FIFO
            val lock = ReadWriteLock(ReadWritePolicy.PHASE_FAIR, Diagnostics(name = "cache"))
            lock.policy shouldBe ReadWritePolicy.PHASE_FAIR
            lock.name shouldBe "cache"
            ReadWriteLock(policy = ReadWritePolicy.PHASE_FAIR).policy shouldBe ReadWritePolicy.PHASE_FAIR
            lock.toString() shouldContain "policy=PHASE_FAIR"
            ReadWriteLock().toString().contains("policy") shouldBe false
            ((lock as ReadWriteLockImpl).waiterQueue.toString()) shouldContain "queued=0"
        }
    }

    context("snapshot") {
        test("the line reads the same under both policies: the upgrade at priority 1, every other request at 0") {
            for (policy in ReadWritePolicy.entries) {
                runTest {
                    val lock = ReadWriteLock(policy)
                    lock.lockUpgradableRead()
                    lock.lockRead()
                    start { runCatching { lock.lockWrite() } } // failed by the close below
                    start { runCatching { lock.upgrade() } }
                    start { runCatching { lock.lockRead() } }
                    val snapshot = lock.snapshot()
                    withClue("$policy: $snapshot") {
                        snapshot.queuedRequests shouldBe 3
                        snapshot.queuedByPriority shouldBe mapOf(1 to 1, 0 to 2)
                        snapshot.queuedPermits shouldBe ReadWriteLockImpl.TOTAL.toLong() + 1 +
                            ((lock as ReadWriteLockImpl).upgradePermits)
                    }
                    lock.close()
                    testScheduler.runCurrent()
                    lock.queueLength shouldBe 0
                }
            }
        }
    }

    context("1. batches: when a write phase ends, every waiting reader is granted together") {
        test("readers queued before and after a waiting writer, during the write phase, all get in; the writer waits") {
            runTest {
                val lock = pf()
                val entered = mutableListOf<String>()
                lock.lockWrite()
                start { lock.lockRead(); entered += "r1" }
                start { lock.lockWrite(); entered += "w2" }
                start { lock.lockRead(); entered += "r2" } // came after w2, during the write phase
                start { lock.lockUpgradableRead(); entered += "u" }
                start { lock.lockRead(); entered += "r3" }
                lock.queueLength shouldBe 5
                lock.unlockWrite()
                lock.readHolds shouldBe 3 // in the release itself
                lock.queueLength shouldBe 2
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r2", "r3")
                // The same calls on the FIFO lock let in r1 only (w2 stops the line).
                repeat(3) { lock.unlockRead() }
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r2", "r3", "w2")
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r2", "r3", "w2", "u")
                lock.unlockUpgradableRead()
                lock.shouldBeFree()
            }
        }

        test("FIFO, for contrast: the same calls let in only the reader ahead of the writer") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockWrite()
                start { lock.lockRead() }
                start { lock.lockWrite() }
                start { lock.lockRead() }
                lock.unlockWrite()
                lock.readHolds shouldBe 1
                lock.queueLength shouldBe 2
                lock.unlockRead()
                lock.unlockWrite()
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }

        test("a write taken on the fast path is a write phase too: a reader that queues behind it comes before a writer queued earlier") {
            runTest {
                val lock = pf()
                val entered = mutableListOf<String>()
                lock.tryLockWrite() shouldBe true // nobody waits: no queue step at all
                start { lock.lockWrite(); entered += "w2" }
                start { lock.lockRead(); entered += "r" }
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("r")
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("r", "w2")
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("downgrade ends the write phase: every waiting reader joins the downgraded read, the next writer waits for them all") {
            runTest {
                val lock = pf()
                val entered = mutableListOf<String>()
                lock.lockWrite()
                start { lock.lockRead(); entered += "r1" }
                start { lock.lockWrite(); entered += "w2" }
                start { lock.lockRead(); entered += "r2" }
                lock.downgrade()
                lock.readHolds shouldBe 3
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r2")
                var late = false
                start { lock.lockRead(); late = true } // a newcomer while w2 waits: the next read phase
                late shouldBe false
                repeat(3) { lock.unlockRead() }
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r2", "w2")
                late shouldBe false
                lock.unlockWrite()
                testScheduler.runCurrent()
                late shouldBe true
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }
    }

    context("2. a reader waits for at most one write phase") {
        test("during a write phase with several writers queued, a reader waits for that write phase only") {
            runTest {
                val lock = pf()
                val entered = mutableListOf<String>()
                lock.lockWrite()
                repeat(3) { i -> start { lock.lockWrite(); entered += "w$i" } }
                start { lock.lockRead(); entered += "r" }
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("r")
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("r", "w0")
                repeat(3) { i ->
                    lock.unlockWrite()
                    testScheduler.runCurrent()
                    entered.size shouldBe (if (i < 2) 3 + i else 4)
                }
                entered shouldBe listOf("r", "w0", "w1", "w2")
                lock.shouldBeFree()
            }
        }

        test("during a read phase with a writer waiting, a newcomer reader waits for that writer's phase, then comes before the next writer") {
            runTest {
                val lock = pf()
                val entered = mutableListOf<String>()
                lock.lockRead()
                start { lock.lockWrite(); entered += "w1" }
                start { lock.lockRead(); entered += "r" }
                start { lock.lockWrite(); entered += "w2" }
                lock.tryLockRead() shouldBe false // 6. no barging into the read phase either
                entered.shouldBeEmpty()
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("w1")
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("w1", "r")
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("w1", "r", "w2")
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("an upgradable reader's grant lets in the readers waiting behind it at once, and only them") {
            runTest {
                val lock = pf()
                val entered = mutableListOf<String>()
                lock.lockWrite()
                start { lock.lockUpgradableRead(); entered += "u" }
                start { lock.lockWrite(); entered += "w" }
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("u")
                lock.unlockUpgradableRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("u", "w")
                start { lock.lockUpgradableRead(); entered += "u2" } // waits for w
                start { lock.lockRead(); entered += "r1" } // during w's phase: batch at its end
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("u", "w", "r1", "u2")
                lock.readHolds shouldBe 2
                lock.unlockRead()
                lock.unlockUpgradableRead()
                lock.shouldBeFree()
            }
        }

        test("a reader behind a writer that leaves the line, with no other writer waiting, is granted at once") {
            runTest {
                val lock = pf()
                val entered = mutableListOf<String>()
                lock.lockRead()
                val writer = start { lock.lockWrite(); entered += "w" }
                start { lock.lockRead(); entered += "r1" }
                start { lock.lockRead(); entered += "r2" }
                writer.cancel()
                lock.readHolds shouldBe 3
                lock.queueLength shouldBe 0
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r2")
                repeat(3) { lock.unlockRead() }
                lock.shouldBeFree()
            }
        }

        test("a writer that leaves the line with another writer behind it: the readers wait for that one") {
            runTest {
                val lock = pf()
                val entered = mutableListOf<String>()
                lock.lockRead()
                val w1 = start { lock.lockWrite(); entered += "w1" }
                start { lock.lockWrite(); entered += "w2" }
                start { lock.lockRead(); entered += "r" }
                w1.cancel()
                testScheduler.runCurrent()
                entered.shouldBeEmpty()
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("w2")
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("w2", "r")
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }
    }

    context("3. a writer never starves") {
        test("a steady stream of readers: each writer gets in after at most one batch, and every batch is all the waiting readers") {
            runTest {
                val lock = pf()
                val log = mutableListOf<String>()
                var readersIn = 0
                lock.lockRead()
                var writersGranted = 0
                for (round in 0 until 20) {
                    // While a reader holds, a writer and then readers arrive.
                    start { lock.lockWrite(); log += "w$round"; writersGranted++ }
                    repeat(3) { i -> start { lock.lockRead(); log += "r$round.$i"; readersIn++ } }
                    lock.tryLockRead() shouldBe false
                    // End every read hold: the writer comes next, before the readers that arrived after it.
                    repeat(lock.readHolds) { lock.unlockRead() }
                    readersIn = 0
                    testScheduler.runCurrent()
                    writersGranted shouldBe round + 1
                    log.last() shouldBe "w$round"
                    // Readers that arrive during the write phase join the same batch.
                    start { lock.lockRead(); log += "late$round"; readersIn++ }
                    lock.unlockWrite()
                    testScheduler.runCurrent()
                    readersIn shouldBe 4
                    lock.readHolds shouldBe 4
                    log.takeLast(4) shouldBe listOf("r$round.0", "r$round.1", "r$round.2", "late$round")
                }
                repeat(lock.readHolds) { lock.unlockRead() }
                lock.shouldBeFree()
            }
        }

        test("at the reader limit a batch is granted as read holds end, and readers that come meanwhile wait for the writer") {
            runTest {
                val lock = ReadWriteLockImpl(4, policy = ReadWritePolicy.PHASE_FAIR)
                val entered = mutableListOf<String>()
                lock.lockWrite()
                repeat(6) { i -> start { lock.lockRead(); entered += "r$i" } }
                start { lock.lockWrite(); entered += "w" }
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("r0", "r1", "r2", "r3") // N = 4 read holds
                start { lock.lockRead(); entered += "late" } // after the batch closed
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("r0", "r1", "r2", "r3", "r4")
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("r0", "r1", "r2", "r3", "r4", "r5") // the batch is complete
                repeat(4) { lock.unlockRead() }
                testScheduler.runCurrent()
                entered.last() shouldBe "w" // before "late", which came after the batch closed
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered.last() shouldBe "late"
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }

        test("a batch reader that leaves at the reader limit shortens the batch; the writer then comes next") {
            runTest {
                val lock = ReadWriteLockImpl(4, policy = ReadWritePolicy.PHASE_FAIR)
                val entered = mutableListOf<String>()
                lock.lockWrite()
                val readers = (0 until 5).map { i -> start { lock.lockRead(); entered += "r$i" } }
                start { lock.lockWrite(); entered += "w" }
                start { lock.lockRead(); entered += "late" } // during the write phase: in the batch
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("r0", "r1", "r2", "r3")
                start { lock.lockRead(); entered += "later" } // after the batch closed
                readers[4].cancel() // r4 leaves; "late" is still the batch's last
                testScheduler.runCurrent()
                lock.queueLength shouldBe 3
                lock.unlockRead()
                testScheduler.runCurrent()
                entered.last() shouldBe "late"
                repeat(4) { lock.unlockRead() }
                testScheduler.runCurrent()
                entered.last() shouldBe "w"
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered.last() shouldBe "later"
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }
    }

    context("4. upgrade") {
        test("served before everyone; its write phase ends with the readers that waited, before a writer queued earlier") {
            runTest {
                val lock = pf()
                val entered = mutableListOf<String>()
                lock.lockUpgradableRead()
                lock.lockRead()
                start { lock.lockWrite(); entered += "w" }
                start { lock.upgrade(); entered += "upgraded" }
                start { lock.lockRead(); entered += "r" }
                lock.tryLockRead() shouldBe false
                lock.queueLength shouldBe 3
                lock.unlockRead()
                lock.isWriteLocked shouldBe true
                testScheduler.runCurrent()
                entered shouldBe listOf("upgraded")
                start { lock.lockRead(); entered += "r2" } // during the upgrade's write phase
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("upgraded", "r", "r2") // FIFO would serve w here
                repeat(2) { lock.unlockRead() }
                testScheduler.runCurrent()
                entered shouldBe listOf("upgraded", "r", "r2", "w")
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("a cancelled upgrade keeps the upgradable read and lets in the readers it held back when no writer waits") {
            runTest {
                val lock = pf()
                lock.lockUpgradableRead()
                lock.lockRead()
                val upgrade = start { lock.upgrade() }
                var readerIn = false
                start { lock.lockRead(); readerIn = true }
                upgrade.cancel()
                lock.readHolds shouldBe 3
                testScheduler.runCurrent()
                readerIn shouldBe true
                repeat(2) { lock.unlockRead() }
                lock.tryUpgrade(0.milliseconds) shouldBe true
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("an upgrade granted but cancelled before it resumed keeps the upgradable read; no write phase happened") {
            runTest {
                val lock = pf()
                lock.lockUpgradableRead()
                lock.lockRead()
                val upgrade = start { lock.upgrade(); error("must not run: cancelled before resuming") }
                var readerIn = false
                start { lock.lockRead(); readerIn = true }
                lock.unlockRead() // grants the upgrade
                lock.isWriteLocked shouldBe true
                upgrade.cancel()
                testScheduler.runCurrent()
                lock.isWriteLocked shouldBe false
                readerIn shouldBe true // the hand-back ended the write hold: the waiting reader's batch
                lock.readHolds shouldBe 2
                lock.unlockRead()
                lock.unlockUpgradableRead()
                lock.shouldBeFree()
            }
        }
    }

    context("6. try forms never barge") {
        test("tryLockRead is refused while anyone waits, in either line; tryLockWrite and tryLockUpgradableRead likewise") {
            runTest {
                val lock = pf()
                lock.tryLockRead() shouldBe true
                lock.tryLockRead() shouldBe true // nobody waits: joins the read phase
                lock.tryLockUpgradableRead() shouldBe true
                start { lock.lockWrite() }
                lock.tryLockRead() shouldBe false
                lock.tryLockUpgradableRead() shouldBe false
                lock.tryLockWrite() shouldBe false
                lock.tryLockRead(10.milliseconds) shouldBe false // waits in the readers' line, leaves with nothing
                lock.readHolds shouldBe 3
                lock.queueLength shouldBe 1
                repeat(2) { lock.unlockRead() }
                lock.unlockUpgradableRead()
                lock.isWriteLocked shouldBe true
                lock.tryLockRead() shouldBe false
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }
    }

    context("7. cancellation and timeouts in the middle of a batch") {
        test("a reader cancelled or timed out before its batch is not part of it; the others are granted, the writer waits") {
            runTest {
                val lock = pf()
                val entered = mutableListOf<String>()
                lock.lockWrite()
                start { lock.lockRead(); entered += "r1" }
                val r2 = start { lock.lockRead(); entered += "r2" }
                val timed = async { lock.tryLockRead(50.milliseconds) }
                start { lock.lockWrite(); entered += "w" }
                start { lock.lockRead(); entered += "r3" }
                testScheduler.runCurrent()
                r2.cancel()
                testScheduler.advanceTimeBy(51)
                testScheduler.runCurrent()
                timed.await() shouldBe false
                lock.queueLength shouldBe 3
                lock.unlockWrite()
                lock.readHolds shouldBe 2
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r3")
                repeat(2) { lock.unlockRead() }
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r3", "w")
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("a batch reader granted but cancelled before it resumed gives its read back; the rest of the batch keeps theirs") {
            runTest {
                val lock = pf()
                val entered = mutableListOf<String>()
                lock.lockWrite()
                start { lock.lockRead(); entered += "r1" }
                val r2 = start { lock.lockRead(); error("must not run: cancelled before resuming") }
                start { lock.lockWrite(); entered += "w" }
                start { lock.lockRead(); entered += "r3" }
                lock.unlockWrite()
                lock.readHolds shouldBe 3
                r2.cancel()
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r3")
                lock.readHolds shouldBe 2
                repeat(2) { lock.unlockRead() }
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r3", "w")
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("a writer granted but cancelled before it resumed hands the write back: the readers waiting then are admitted") {
            runTest {
                val lock = pf()
                val entered = mutableListOf<String>()
                lock.lockRead()
                val w = start { lock.lockWrite(); error("must not run: cancelled before resuming") }
                start { lock.lockRead(); entered += "r" }
                start { lock.lockWrite(); entered += "w2" }
                lock.unlockRead() // grants w
                lock.isWriteLocked shouldBe true
                w.cancel()
                testScheduler.runCurrent()
                entered shouldBe listOf("r")
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("r", "w2")
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }
    }

    context("close") {
        test("fails the waiters of every line, the upgrade included, and every later acquisition; holds may still end") {
            runTest {
                val lock = pf()
                lock.lockUpgradableRead()
                lock.lockRead()
                val failures = mutableListOf<String>()
                fun waiter(name: String, block: suspend () -> Unit) = start {
                    try {
                        block()
                    } catch (e: SemaphoreClosedException) {
                        failures += name
                    }
                }
                waiter("w") { lock.lockWrite() }
                waiter("r") { lock.lockRead() }
                waiter("u2") { lock.lockUpgradableRead() }
                waiter("upgrade") { lock.upgrade() }
                lock.queueLength shouldBe 4
                lock.close(IllegalStateException("shutdown"))
                testScheduler.runCurrent()
                failures.sorted() shouldBe listOf("r", "u2", "upgrade", "w")
                lock.queueLength shouldBe 0
                shouldThrow<SemaphoreClosedException> { lock.tryLockRead() }
                shouldThrow<SemaphoreClosedException> { lock.lockWrite() }
                lock.unlockRead()
                lock.unlockUpgradableRead() // the failed upgrade kept it
                lock.readHolds shouldBe 0
            }
        }
    }

    test("the order's batch is the readers waiting when it closes (white box)") {
        runTest {
            val lock = ReadWriteLockImpl(4, policy = ReadWritePolicy.PHASE_FAIR)
            lock.lockWrite()
            repeat(6) { start { lock.lockRead() } }
            lock.unlockWrite()
            val order = lock.waiterQueue.withObserver { _, o -> (o as PhaseFairOrder).batchSizeForTests() }
            order shouldBe 2 // 4 granted, 2 left of the batch
            order shouldBeLessThanOrEqual lock.queueLength
            repeat(4) { lock.unlockRead() }
            testScheduler.runCurrent()
            repeat(2) { lock.unlockRead() }
            lock.shouldBeFree()
        }
    }
})
