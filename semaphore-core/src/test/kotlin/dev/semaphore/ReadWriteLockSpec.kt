package dev.semaphore

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.concurrent.thread
import kotlin.random.Random
import kotlin.time.Duration
import kotlin.time.Duration.Companion.microseconds
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** What a ReadWriteLock shows, to assert that a refused or failed call changed nothing. */
private data class LockState(val readHolds: Int, val isWriteLocked: Boolean, val queueLength: Int, val holdsWord: Long)

private fun ReadWriteLock.state() =
    LockState(readHolds, isWriteLocked, queueLength, (this as ReadWriteLockImpl).holdsSnapshot)

private fun ReadWriteLock.shouldBeFree() {
    withClue("lock: $this") {
        readHolds shouldBe 0
        isWriteLocked shouldBe false
        queueLength shouldBe 0
        (this as ReadWriteLockImpl).waiterQueue.availablePermits shouldBe ReadWriteLockImpl.TOTAL
    }
}

/** Launches [block] and runs everything runnable now, so that it has queued (or finished) when this returns. */
private fun TestScope.start(block: suspend () -> Unit): Job = launch { block() }.also { testScheduler.runCurrent() }

class ReadWriteLockSpec : FunSpec({
    context("strict FIFO: one line for every kind of request") {
        test("the readers consecutive at the head are granted together; the first writer stops them") {
            runTest {
                val lock = ReadWriteLock()
                val entered = mutableListOf<String>()
                lock.lockWrite()
                start { lock.lockRead(); entered += "r1" }
                start { lock.lockRead(); entered += "r2" }
                start { lock.lockWrite(); entered += "w" }
                start { lock.lockRead(); entered += "r3" }
                lock.queueLength shouldBe 4
                lock.unlockWrite()
                // Granted in the same step as the release, before they even resume.
                lock.readHolds shouldBe 2
                lock.queueLength shouldBe 2
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r2")
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r2") // one read hold is left: the writer waits
                lock.unlockRead()
                lock.isWriteLocked shouldBe true
                lock.readHolds shouldBe 0
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r2", "w")
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r2", "w", "r3")
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }

        test("a queued writer blocks every reader that came after it: writers are not starved by a stream of readers") {
            runTest {
                val lock = ReadWriteLock()
                val entered = mutableListOf<String>()
                lock.lockRead()
                start { lock.lockWrite(); entered += "w" }
                repeat(5) { i -> start { lock.lockRead(); entered += "r$i" } }
                entered.shouldBeEmpty() // every later reader waits behind the writer, though a read is all that is held
                lock.readHolds shouldBe 1
                lock.queueLength shouldBe 6
                lock.tryLockRead() shouldBe false
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("w")
                lock.queueLength shouldBe 5
                lock.unlockWrite()
                lock.readHolds shouldBe 5 // the five readers, together
                testScheduler.runCurrent()
                entered shouldBe listOf("w", "r0", "r1", "r2", "r3", "r4")
                repeat(5) { lock.unlockRead() }
                lock.shouldBeFree()
            }
        }

        test("readers are not starved by writers: a reader queued between two writers goes before the second") {
            runTest {
                val lock = ReadWriteLock()
                val entered = mutableListOf<String>()
                lock.lockWrite()
                start { lock.lockRead(); entered += "r" }
                start { lock.lockWrite(); entered += "w2" }
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("r")
                lock.isWriteLocked shouldBe false
                lock.queueLength shouldBe 1
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("r", "w2")
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("an upgradable reader stands in the same line: granted with the readers around it, and a second one waits as the head") {
            runTest {
                val lock = ReadWriteLock()
                val entered = mutableListOf<String>()
                lock.lockWrite()
                start { lock.lockRead(); entered += "r1" }
                start { lock.lockUpgradableRead(); entered += "u1" }
                start { lock.lockRead(); entered += "r2" }
                start { lock.lockUpgradableRead(); entered += "u2" }
                start { lock.lockRead(); entered += "r3" }
                lock.queueLength shouldBe 5
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "u1", "r2") // u2 cannot share with u1, and r3 is behind it
                lock.readHolds shouldBe 3
                lock.queueLength shouldBe 2
                lock.unlockUpgradableRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "u1", "r2", "u2", "r3")
                lock.readHolds shouldBe 4
                repeat(3) { lock.unlockRead() }
                lock.unlockUpgradableRead()
                lock.shouldBeFree()
            }
        }
    }

    context("no barging: the try forms succeed only if served now with nobody ahead") {
        test("tryLockRead: true beside other readers when nobody waits; false while a writer waits, though only reads are held") {
            runTest {
                val lock = ReadWriteLock()
                lock.tryLockRead() shouldBe true
                lock.tryLockRead() shouldBe true
                lock.readHolds shouldBe 2
                val writer = start { lock.lockWrite() }
                val before = lock.state()
                lock.tryLockRead() shouldBe false
                lock.tryLockRead(Duration.ZERO) shouldBe false
                lock.state() shouldBe before
                writer.cancel()
                lock.tryLockRead() shouldBe true // the line is empty again
                repeat(3) { lock.unlockRead() }
                lock.shouldBeFree()
            }
        }

        test("tryLockWrite: true on a free lock; false at the moment the lock is handed to a queued writer") {
            runTest {
                val lock = ReadWriteLock()
                lock.tryLockWrite() shouldBe true
                var secondRan = false
                start { lock.lockWrite(); secondRan = true }
                lock.unlockWrite() // granted to the waiter, which has not run yet
                lock.isWriteLocked shouldBe true
                lock.tryLockWrite() shouldBe false
                lock.tryLockRead() shouldBe false
                lock.tryLockUpgradableRead() shouldBe false
                testScheduler.runCurrent()
                secondRan shouldBe true
                lock.unlockWrite()
                lock.tryLockWrite() shouldBe true
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("tryLockUpgradableRead: true beside readers when nobody waits; false while a writer waits") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockRead()
                lock.tryLockUpgradableRead() shouldBe true
                lock.readHolds shouldBe 2
                lock.unlockUpgradableRead()
                val writer = start { lock.lockWrite() }
                val before = lock.state()
                lock.tryLockUpgradableRead() shouldBe false
                lock.state() shouldBe before
                writer.cancel()
                lock.tryLockUpgradableRead() shouldBe true
                lock.unlockUpgradableRead()
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }

        test("the try forms are refused while an upgrade waits") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockUpgradableRead()
                lock.lockRead()
                val upgrade = start { lock.upgrade() }
                lock.queueLength shouldBe 1
                val before = lock.state()
                lock.tryLockRead() shouldBe false
                lock.tryLockWrite() shouldBe false
                lock.tryLockUpgradableRead() shouldBe false
                lock.state() shouldBe before
                lock.unlockRead()
                testScheduler.runCurrent()
                upgrade.isCompleted shouldBe true
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }
    }

    context("cancellation") {
        test("a cancelled head writer lets the readers behind it join the current readers (AsyncEx #134)") {
            runTest {
                val lock = ReadWriteLock()
                val entered = mutableListOf<String>()
                lock.lockRead()
                val writer = start { lock.lockWrite(); entered += "w" }
                start { lock.lockRead(); entered += "r1" }
                start { lock.lockRead(); entered += "r2" }
                lock.readHolds shouldBe 1
                lock.queueLength shouldBe 3
                writer.cancel()
                // At once, in the cancellation itself: nobody has to release anything for them.
                lock.readHolds shouldBe 3
                lock.queueLength shouldBe 0
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "r2")
                writer.isCancelled shouldBe true
                repeat(3) { lock.unlockRead() }
                lock.shouldBeFree()
            }
        }

        test("a timed-out head writer does the same, at the virtual instant of its timeout") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockRead()
                val writer = async { lock.tryLockWrite(100.milliseconds) }
                var readerInAt = -1L
                testScheduler.runCurrent()
                start { lock.lockRead(); readerInAt = testScheduler.currentTime }
                testScheduler.advanceTimeBy(100)
                testScheduler.runCurrent()
                writer.await() shouldBe false
                readerInAt shouldBe 100L
                lock.readHolds shouldBe 2
                lock.isWriteLocked shouldBe false
                lock.queueLength shouldBe 0
                repeat(2) { lock.unlockRead() }
                lock.shouldBeFree()
            }
        }

        test("a cancelled writer in the middle of the line leaves; the readers behind it still wait for the writer ahead") {
            runTest {
                val lock = ReadWriteLock()
                val entered = mutableListOf<String>()
                lock.lockRead()
                start { lock.lockWrite(); entered += "w1" }
                val w2 = start { lock.lockWrite(); entered += "w2" }
                start { lock.lockRead(); entered += "r" }
                w2.cancel()
                testScheduler.runCurrent()
                lock.queueLength shouldBe 2
                lock.readHolds shouldBe 1
                entered.shouldBeEmpty()
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("w1")
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("w1", "r")
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }

        test("a reader granted but cancelled before it resumed gives its hold back, and the writer behind it gets in") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockWrite()
                val reader = start { lock.lockRead(); error("must not run: cancelled before resuming") }
                var writerRan = false
                start { lock.lockWrite(); writerRan = true }
                lock.unlockWrite() // grants the reader; its resumption is dispatched, not yet run
                lock.readHolds shouldBe 1
                reader.cancel() // prompt cancellation: the hold is handed back
                testScheduler.runCurrent()
                reader.isCancelled shouldBe true
                writerRan shouldBe true
                lock.isWriteLocked shouldBe true
                lock.readHolds shouldBe 0
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("a writer granted but cancelled before it resumed gives the write hold back, and the readers behind it get in") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockRead()
                val writer = start { lock.lockWrite(); error("must not run: cancelled before resuming") }
                start { lock.lockRead() }
                start { lock.lockUpgradableRead() }
                lock.unlockRead() // grants the writer
                lock.isWriteLocked shouldBe true
                writer.cancel()
                testScheduler.runCurrent()
                lock.isWriteLocked shouldBe false
                lock.readHolds shouldBe 2
                lock.unlockRead()
                lock.unlockUpgradableRead()
                lock.shouldBeFree()
            }
        }
    }

    context("timeouts, in virtual time") {
        // For each kind: the hold that blocks it, its timed try, and how to end what it took.
        data class Kind(
            val name: String,
            val block: suspend (ReadWriteLock) -> Unit,
            val unblock: (ReadWriteLock) -> Unit,
            val tryFor: suspend (ReadWriteLock, Duration) -> Boolean,
            val end: (ReadWriteLock) -> Unit,
        )
        val kinds = listOf(
            Kind("read", { it.lockWrite() }, { it.unlockWrite() }, { l, t -> l.tryLockRead(t) }, { it.unlockRead() }),
            Kind("write", { it.lockRead() }, { it.unlockRead() }, { l, t -> l.tryLockWrite(t) }, { it.unlockWrite() }),
            Kind(
                "upgradable read",
                { it.lockWrite() },
                { it.unlockWrite() },
                { l, t -> l.tryLockUpgradableRead(t) },
                { it.unlockUpgradableRead() },
            ),
        )
        for (k in kinds) {
            test("${k.name}: gives up after exactly the timeout with nothing held, and succeeds when freed in time") {
                runTest {
                    val lock = ReadWriteLock()
                    k.block(lock)
                    val before = lock.state()
                    val start = testScheduler.currentTime
                    k.tryFor(lock, 100.milliseconds) shouldBe false
                    (testScheduler.currentTime - start) shouldBe 100L
                    lock.state() shouldBe before
                    launch { delay(40); k.unblock(lock) }
                    k.tryFor(lock, 100.milliseconds) shouldBe true
                    (testScheduler.currentTime - start) shouldBe 140L
                    k.end(lock)
                    lock.shouldBeFree()
                }
            }

            test("${k.name}: a zero or negative timeout only tries now") {
                runTest {
                    val lock = ReadWriteLock()
                    k.tryFor(lock, Duration.ZERO) shouldBe true
                    k.end(lock)
                    k.tryFor(lock, (-5).milliseconds) shouldBe true
                    k.end(lock)
                    k.block(lock)
                    val before = lock.state()
                    k.tryFor(lock, Duration.ZERO) shouldBe false
                    k.tryFor(lock, (-5).milliseconds) shouldBe false
                    testScheduler.currentTime shouldBe 0L
                    lock.state() shouldBe before
                    k.unblock(lock)
                    lock.shouldBeFree()
                }
            }

            test("${k.name}: Duration.INFINITE waits without limit") {
                runTest {
                    val lock = ReadWriteLock()
                    k.block(lock)
                    launch { delay(1_000_000); k.unblock(lock) }
                    k.tryFor(lock, Duration.INFINITE) shouldBe true
                    testScheduler.currentTime shouldBe 1_000_000L
                    k.end(lock)
                    lock.shouldBeFree()
                }
            }

            // Deterministic: both timers are due at t = 100; the scheduler runs them in the order
            // they were registered. With the release first, the waiter is granted (its resumption
            // dispatched) and then its timeout fires before it resumes: the grant must come back.
            for (releaseFirst in listOf(true, false)) {
                val order = if (releaseFirst) "the grant, then the timeout" else "the timeout, then the release"
                test("${k.name}: a grant at the same virtual instant as the timeout is never lost ($order)") {
                    runTest {
                        val lock = ReadWriteLock()
                        k.block(lock)
                        var grantedBeforeTimeout = false
                        val release: suspend () -> Unit = {
                            delay(100)
                            k.unblock(lock)
                            grantedBeforeTimeout = lock.queueLength == 0 && (lock.readHolds > 0 || lock.isWriteLocked)
                        }
                        if (releaseFirst) start(release) // its timer is registered before the waiter's
                        val result = async { k.tryFor(lock, 100.milliseconds) }
                        testScheduler.runCurrent()
                        if (!releaseFirst) start(release)
                        testScheduler.advanceUntilIdle()
                        testScheduler.currentTime shouldBe 100L
                        grantedBeforeTimeout shouldBe releaseFirst
                        // The timeout won in both orders; with the grant first, the hold was handed back.
                        result.await() shouldBe false
                        lock.shouldBeFree()
                        lock.tryLockWrite() shouldBe true // nothing is left held anywhere
                        lock.unlockWrite()
                    }
                }
            }
        }

        test("a grant that resumes before the timeout is kept") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockWrite()
                launch { delay(99); lock.unlockWrite() }
                lock.tryLockRead(100.milliseconds) shouldBe true
                testScheduler.currentTime shouldBe 99L
                lock.readHolds shouldBe 1
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }
    }

    context("downgrade") {
        test("turns the write hold into a read hold at once and grants the readers at the head, up to the first writer") {
            runTest {
                val lock = ReadWriteLock()
                val entered = mutableListOf<String>()
                lock.lockWrite()
                start { lock.lockRead(); entered += "r1" }
                start { lock.lockUpgradableRead(); entered += "u" }
                start { lock.lockRead(); entered += "r2" }
                start { lock.lockWrite(); entered += "w" }
                start { lock.lockRead(); entered += "r3" }
                lock.downgrade()
                lock.isWriteLocked shouldBe false
                lock.readHolds shouldBe 4 // our read, r1, u, r2
                lock.queueLength shouldBe 2
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "u", "r2")
                lock.unlockRead() // ours
                lock.unlockRead()
                lock.unlockRead()
                lock.unlockUpgradableRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "u", "r2", "w")
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("r1", "u", "r2", "w", "r3")
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }

        test("a writer first in line keeps the readers behind it waiting, and gets the lock when the read hold ends") {
            runTest {
                val lock = ReadWriteLock()
                val entered = mutableListOf<String>()
                lock.lockWrite()
                start { lock.lockWrite(); entered += "w" }
                start { lock.lockRead(); entered += "r" }
                lock.downgrade()
                testScheduler.runCurrent()
                entered.shouldBeEmpty()
                lock.readHolds shouldBe 1
                lock.isWriteLocked shouldBe false
                lock.queueLength shouldBe 2
                lock.tryLockRead() shouldBe false // no barging past the writer either
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("w")
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("w", "r")
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }
    }

    context("upgradable read") {
        test("at most one at a time: a second is refused by the try form and waits in line") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockUpgradableRead()
                lock.tryLockUpgradableRead() shouldBe false
                lock.tryLockUpgradableRead(50.milliseconds) shouldBe false
                var secondIn = false
                start { lock.lockUpgradableRead(); secondIn = true }
                secondIn shouldBe false
                lock.queueLength shouldBe 1
                lock.unlockUpgradableRead()
                testScheduler.runCurrent()
                secondIn shouldBe true
                lock.readHolds shouldBe 1
                lock.unlockUpgradableRead()
                lock.shouldBeFree()
            }
        }

        test("shares the lock with plain readers, and counts as one read hold") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockRead()
                lock.lockRead()
                lock.lockUpgradableRead()
                lock.tryLockRead() shouldBe true
                lock.readHolds shouldBe 4
                lock.isWriteLocked shouldBe false
                repeat(3) { lock.unlockRead() }
                lock.readHolds shouldBe 1
                lock.unlockUpgradableRead()
                lock.shouldBeFree()
            }
        }

        test("excludes writers, both ways") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockWrite()
                lock.tryLockUpgradableRead() shouldBe false
                var upgradableIn = false
                start { lock.lockUpgradableRead(); upgradableIn = true }
                upgradableIn shouldBe false
                lock.unlockWrite()
                testScheduler.runCurrent()
                upgradableIn shouldBe true
                lock.tryLockWrite() shouldBe false
                var writerIn = false
                start { lock.lockWrite(); writerIn = true }
                writerIn shouldBe false
                lock.unlockUpgradableRead()
                testScheduler.runCurrent()
                writerIn shouldBe true
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("the reader limit: N read holds alone, N/2 - 1 beside the upgradable read; a reader beyond it waits in line") {
            runTest {
                val lock: ReadWriteLock = ReadWriteLockImpl(8) // U = 5, so 3 plain reads fit beside it
                repeat(8) { lock.tryLockRead() shouldBe true }
                lock.tryLockRead() shouldBe false
                lock.tryLockUpgradableRead() shouldBe false
                repeat(8) { lock.unlockRead() }
                lock.tryLockUpgradableRead() shouldBe true
                repeat(3) { lock.tryLockRead() shouldBe true }
                val before = lock.state()
                lock.tryLockRead() shouldBe false // refused by the limit, at once (no waiting for a window)
                lock.state() shouldBe before
                var fourthIn = false
                start { lock.lockRead(); fourthIn = true }
                fourthIn shouldBe false
                lock.unlockRead()
                testScheduler.runCurrent()
                fourthIn shouldBe true
                lock.readHolds shouldBe 4
                repeat(3) { lock.unlockRead() }
                lock.unlockUpgradableRead()
                lock.readHolds shouldBe 0
                lock.queueLength shouldBe 0
            }
        }

        test("upgrade waits for the other read holds, lets no new reader in, and is served before everyone queued; no writer slips in") {
            runTest {
                val lock = ReadWriteLock()
                val entered = mutableListOf<String>()
                lock.lockUpgradableRead()
                lock.lockRead()
                lock.lockRead()
                start { lock.lockWrite(); entered += "w" } // queued before the upgrade
                start { lock.upgrade(); entered += "upgraded" }
                start { lock.lockRead(); entered += "r" }
                lock.queueLength shouldBe 3 // the writer, the upgrade and the reader
                lock.tryLockRead() shouldBe false
                lock.readHolds shouldBe 3 // the upgradable read is still held while it waits
                lock.unlockRead()
                testScheduler.runCurrent()
                entered.shouldBeEmpty()
                lock.isWriteLocked shouldBe false
                lock.unlockRead() // the last other read hold: the upgrade is served, ahead of the writer
                lock.isWriteLocked shouldBe true
                lock.readHolds shouldBe 0
                lock.queueLength shouldBe 2
                testScheduler.runCurrent()
                entered shouldBe listOf("upgraded")
                lock.unlockWrite() // the hold is now the write hold
                testScheduler.runCurrent()
                entered shouldBe listOf("upgraded", "w")
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("upgraded", "w", "r")
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }

        test("upgrade with no other read hold is immediate, even with writers and readers queued") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockUpgradableRead()
                start { lock.lockWrite() }
                start { lock.lockRead() }
                val upgrade = start { lock.upgrade() }
                upgrade.isCompleted shouldBe true
                lock.isWriteLocked shouldBe true
                lock.queueLength shouldBe 2
                lock.unlockWrite()
                testScheduler.runCurrent()
                lock.unlockWrite()
                testScheduler.runCurrent()
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }

        test("a cancelled upgrade keeps the upgradable read and lets in the readers it held back") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockUpgradableRead()
                lock.lockRead()
                val upgrade = start { lock.upgrade() }
                var readerIn = false
                start { lock.lockRead(); readerIn = true }
                lock.queueLength shouldBe 2
                upgrade.cancel()
                lock.readHolds shouldBe 3 // the reader behind it was granted at once
                lock.queueLength shouldBe 0
                testScheduler.runCurrent()
                upgrade.isCancelled shouldBe true
                readerIn shouldBe true
                lock.isWriteLocked shouldBe false
                lock.tryUpgrade(Duration.ZERO) shouldBe false // the upgradable read is still ours to upgrade
                repeat(2) { lock.unlockRead() }
                lock.tryUpgrade(Duration.ZERO) shouldBe true
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("an upgrade granted but cancelled before it resumed keeps the upgradable read; the writer queued behind still waits") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockUpgradableRead()
                lock.lockRead()
                val upgrade = start { lock.upgrade(); error("must not run: cancelled before resuming") }
                var writerIn = false
                start { lock.lockWrite(); writerIn = true }
                lock.unlockRead() // grants the upgrade
                lock.isWriteLocked shouldBe true
                upgrade.cancel()
                testScheduler.runCurrent()
                upgrade.isCancelled shouldBe true
                lock.isWriteLocked shouldBe false
                lock.readHolds shouldBe 1
                writerIn shouldBe false
                lock.unlockUpgradableRead() // still held, so this is no misuse
                testScheduler.runCurrent()
                writerIn shouldBe true
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("tryUpgrade: false after the timeout with the upgradable read kept; zero or negative only tries now") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockUpgradableRead()
                lock.lockRead()
                var readerIn = false
                val waiting = async { lock.tryUpgrade(100.milliseconds) }
                testScheduler.runCurrent()
                start { lock.lockRead(); readerIn = true }
                readerIn shouldBe false // held back by the waiting upgrade
                testScheduler.advanceTimeBy(100)
                testScheduler.runCurrent()
                waiting.await() shouldBe false
                readerIn shouldBe true // let in when the upgrade gave up
                lock.readHolds shouldBe 3
                lock.tryUpgrade(Duration.ZERO) shouldBe false
                lock.tryUpgrade((-1).milliseconds) shouldBe false
                testScheduler.currentTime shouldBe 100L
                repeat(2) { lock.unlockRead() }
                lock.tryUpgrade(Duration.ZERO) shouldBe true
                lock.isWriteLocked shouldBe true
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("a tryUpgrade granted at the same virtual instant as its timeout keeps the upgradable read") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockUpgradableRead()
                lock.lockRead()
                var granted = false
                start { delay(100); lock.unlockRead(); granted = lock.isWriteLocked }
                val result = async { lock.tryUpgrade(100.milliseconds) }
                testScheduler.advanceUntilIdle()
                granted shouldBe true
                result.await() shouldBe false
                lock.isWriteLocked shouldBe false
                lock.readHolds shouldBe 1
                lock.unlockUpgradableRead()
                lock.shouldBeFree()
            }
        }

        test("after upgrade the hold is the write hold: downgrade makes it a plain read hold") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockUpgradableRead()
                lock.upgrade()
                lock.downgrade()
                lock.readHolds shouldBe 1
                lock.tryLockUpgradableRead() shouldBe true // the upgradable read was given up with the upgrade
                lock.unlockUpgradableRead()
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }
    }

    context("withReadLock, withWriteLock, withUpgradableReadLock") {
        test("each returns the action's value and ends its hold however the action ends") {
            runTest {
                val lock = ReadWriteLock()
                lock.withReadLock { lock.readHolds } shouldBe 1
                lock.withWriteLock { lock.isWriteLocked } shouldBe true
                lock.withUpgradableReadLock { lock.readHolds } shouldBe 1
                lock.shouldBeFree()
                shouldThrow<IllegalArgumentException> { lock.withReadLock { throw IllegalArgumentException("boom") } }
                shouldThrow<IllegalArgumentException> { lock.withWriteLock { throw IllegalArgumentException("boom") } }
                shouldThrow<IllegalArgumentException> {
                    lock.withUpgradableReadLock { throw IllegalArgumentException("boom") }
                }
                lock.shouldBeFree()
            }
        }

        test("withUpgradableReadLock ends the write hold that an upgrade inside made, also when the action throws after it") {
            runTest {
                val lock = ReadWriteLock()
                lock.withUpgradableReadLock {
                    lock.upgrade()
                    lock.isWriteLocked
                } shouldBe true
                lock.shouldBeFree()
                shouldThrow<IllegalArgumentException> {
                    lock.withUpgradableReadLock {
                        lock.upgrade()
                        throw IllegalArgumentException("boom")
                    }
                }
                lock.shouldBeFree()
            }
        }

        test("withUpgradableReadLock around an upgrade cancelled while it waits ends the upgradable read it kept") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockRead()
                val job = start { lock.withUpgradableReadLock { lock.upgrade() } }
                lock.queueLength shouldBe 1
                job.cancel()
                testScheduler.runCurrent()
                job.isCancelled shouldBe true
                lock.readHolds shouldBe 1
                lock.unlockRead()
                lock.shouldBeFree()
            }
        }
    }

    context("not reentrant") {
        test("a read inside a read deadlocks once a writer is queued: the inner read waits behind the writer") {
            runTest {
                val lock = ReadWriteLock()
                lock.lockRead()
                lock.tryLockRead() shouldBe true // fine while nobody waits...
                lock.unlockRead()
                var writerIn = false
                start { lock.lockWrite(); writerIn = true }
                // ...but with a writer queued, the inner read waits for the writer, which waits for the outer read.
                lock.tryLockRead(1.seconds) shouldBe false
                writerIn shouldBe false
                lock.unlockRead() // only ending the outer read resolves it
                testScheduler.runCurrent()
                writerIn shouldBe true
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }
    }

    context("misuse throws IllegalStateException naming the mistake, and changes nothing") {
        data class Misuse(
            val label: String,
            val setup: suspend TestScope.(ReadWriteLock) -> Unit,
            val call: suspend (ReadWriteLock) -> Unit,
            val says: List<String>,
        )
        val writerQueued: suspend TestScope.(ReadWriteLock) -> Unit = { l -> start { l.lockWrite() } }
        val upgradeWaiting: suspend TestScope.(ReadWriteLock) -> Unit = { l ->
            l.lockUpgradableRead()
            l.lockRead()
            start { l.upgrade() }
        }
        val noRead = "unlockRead() without a read hold"
        val noWrite = "unlockWrite() without the write hold"
        val noDowngrade = "downgrade() without the write hold"
        val noUpgrade = "upgrade() without the upgradable read"
        val noUpgradable = "unlockUpgradableRead() without the upgradable read"
        val cases = listOf(
            Misuse("unlockRead on a free lock", {}, { it.unlockRead() }, listOf(noRead, "no read hold is taken")),
            Misuse(
                "unlockRead after the only read hold ended",
                { it.lockRead(); it.unlockRead() },
                { it.unlockRead() },
                listOf(noRead, "no read hold is taken"),
            ),
            Misuse(
                "unlockRead with the write hold",
                { it.lockWrite(); writerQueued(it) },
                { it.unlockRead() },
                listOf(noRead, "write-locked", "unlockWrite()"),
            ),
            Misuse(
                "unlockRead with only the upgradable read",
                { it.lockUpgradableRead(); writerQueued(it) },
                { it.unlockRead() },
                listOf(noRead, "only the upgradable read", "unlockUpgradableRead()"),
            ),
            Misuse("unlockWrite on a free lock", {}, { it.unlockWrite() }, listOf(noWrite, "not write-locked")),
            Misuse(
                "unlockWrite with read holds",
                { it.lockRead(); writerQueued(it) },
                { it.unlockWrite() },
                listOf(noWrite, "readHolds=1"),
            ),
            Misuse(
                "unlockWrite with the upgradable read",
                { it.lockUpgradableRead() },
                { it.unlockWrite() },
                listOf(noWrite, "upgradable read held=true"),
            ),
            Misuse("downgrade on a free lock", {}, { it.downgrade() }, listOf(noDowngrade, "not write-locked")),
            Misuse(
                "downgrade with a read hold",
                { it.lockRead(); writerQueued(it) },
                { it.downgrade() },
                listOf(noDowngrade, "readHolds=1"),
            ),
            Misuse("upgrade on a free lock", {}, { it.upgrade() }, listOf(noUpgrade, "upgradable read is not held")),
            Misuse(
                "upgrade with plain read holds only",
                { it.lockRead(); it.lockRead() },
                { it.upgrade() },
                listOf(noUpgrade, "readHolds=2"),
            ),
            Misuse(
                "upgrade with the write hold",
                { it.lockWrite() },
                { it.upgrade() },
                listOf(noUpgrade, "write-locked", "end it with unlockWrite()"),
            ),
            Misuse(
                "upgrade again after upgrade",
                { it.lockUpgradableRead(); it.upgrade() },
                { it.upgrade() },
                listOf(noUpgrade, "after upgrade() the hold is the write hold"),
            ),
            Misuse(
                "upgrade while another upgrade is in progress",
                upgradeWaiting,
                { it.upgrade() },
                listOf("upgrade() while another upgrade of the upgradable read is in progress"),
            ),
            Misuse(
                "tryUpgrade without the upgradable read",
                { it.lockRead() },
                { it.tryUpgrade(Duration.ZERO) },
                listOf("tryUpgrade() without the upgradable read"),
            ),
            Misuse(
                "unlockUpgradableRead on a free lock",
                {},
                { it.unlockUpgradableRead() },
                listOf(noUpgradable, "the upgradable read is not held"),
            ),
            Misuse(
                "unlockUpgradableRead with a plain read hold",
                { it.lockRead(); writerQueued(it) },
                { it.unlockUpgradableRead() },
                listOf(noUpgradable, "the upgradable read is not held"),
            ),
            Misuse(
                "unlockUpgradableRead after upgrade",
                { it.lockUpgradableRead(); it.upgrade(); writerQueued(it) },
                { it.unlockUpgradableRead() },
                listOf(noUpgradable, "after upgrade() the hold is the write hold: end it with unlockWrite()"),
            ),
            Misuse(
                "unlockUpgradableRead while its upgrade is in progress",
                upgradeWaiting,
                { it.unlockUpgradableRead() },
                listOf("unlockUpgradableRead() while an upgrade() of the upgradable read is in progress"),
            ),
        )
        for (m in cases) {
            test(m.label) {
                runTest {
                    val lock = ReadWriteLock()
                    m.setup(this, lock)
                    testScheduler.runCurrent()
                    val before = lock.state()
                    val e = shouldThrow<IllegalStateException> { m.call(lock) }
                    for (s in m.says) e.message!! shouldContain s
                    lock.state() shouldBe before
                    // Still fully usable: end whatever the setup holds, then it is free.
                    coroutineContext[Job]!!.children.forEach { it.cancel() }
                    testScheduler.runCurrent()
                    val h = (lock as ReadWriteLockImpl).holdsSnapshot
                    if (h and ReadWriteLockImpl.WRITER != 0L) lock.unlockWrite()
                    if (h and ReadWriteLockImpl.UPGRADABLE != 0L) lock.unlockUpgradableRead()
                    repeat((h and ReadWriteLockImpl.READS).toInt()) { lock.unlockRead() }
                    lock.shouldBeFree()
                }
            }
        }
    }

    context("RW3: a try that meets another thread between its two steps waits for it instead of answering false") {
        // The engine's permits are taken directly here, as another thread's fast path has taken them
        // before recording its hold (RW2); giving them back directly closes that window.
        test("tryLockWrite with nothing recorded and nobody queued waits for the window, then succeeds") {
            val lock = ReadWriteLock() as ReadWriteLockImpl
            lock.waiterQueue.tryAcquirePermits(1) shouldBe true
            val result = CompletableFuture<Boolean>()
            val t = thread { result.complete(lock.tryLockWrite()) }
            Thread.sleep(200)
            // A false now could not be ordered: no hold is recorded and nobody waits.
            result.isDone shouldBe false
            lock.waiterQueue.release(1)
            result.get(10, TimeUnit.SECONDS) shouldBe true
            t.join()
            lock.isWriteLocked shouldBe true
            lock.unlockWrite()
            lock.shouldBeFree()
        }

        test("tryLockRead does not take a line that only the window made for real: it waits, then answers from the holds") {
            val lock = ReadWriteLock() as ReadWriteLockImpl
            lock.waiterQueue.tryAcquirePermits(1) shouldBe true
            runBlocking {
                val writer = launch(Dispatchers.Default) { lock.lockWrite() } // queued: one permit is missing
                while (lock.queueLength == 0) delay(1)
                val result = CompletableFuture<Boolean>()
                val t = thread { result.complete(lock.tryLockRead()) }
                Thread.sleep(200)
                result.isDone shouldBe false // nothing recorded holds the writer back, so its line is not real yet
                lock.waiterQueue.release(1) // the window closes: the writer is granted
                result.get(10, TimeUnit.SECONDS) shouldBe false
                t.join()
                writer.join()
                lock.isWriteLocked shouldBe true
                lock.unlockWrite()
            }
            lock.shouldBeFree()
        }
    }

    test("queueLength counts waiters of every kind, a waiting upgrade included") {
        runTest {
            val lock = ReadWriteLock()
            lock.lockUpgradableRead()
            lock.lockRead()
            val jobs = listOf(
                start { lock.lockWrite() },
                start { lock.upgrade() },
                start { lock.lockRead() },
                start { lock.lockUpgradableRead() },
                start { lock.tryLockWrite(1.seconds) },
            )
            lock.queueLength shouldBe 5
            jobs.forEach { it.cancel() }
            testScheduler.runCurrent()
            lock.queueLength shouldBe 0
            lock.unlockRead()
            lock.unlockUpgradableRead()
            lock.shouldBeFree()
        }
    }

    test("stress on Dispatchers.Default: exclusion at every moment; everything released and nobody queued at the end") {
        val lock = ReadWriteLock() as ReadWriteLockImpl
        val readersIn = AtomicInteger()
        val writersIn = AtomicInteger()
        val upgradablesIn = AtomicInteger()
        val violations = ConcurrentLinkedQueue<String>()
        val ops = AtomicInteger()
        val reads = AtomicInteger()
        val writes = AtomicInteger()
        val upgradables = AtomicInteger()
        val upgrades = AtomicInteger()
        val downgrades = AtomicInteger()
        val refused = AtomicInteger()
        val cancelled = AtomicInteger()
        val target = 60_000 * stressScale
        val deadline = System.nanoTime() + 8_000_000_000L * stressScale

        // Counters go up after a hold is taken and down before it ends, so they never exceed the
        // true holders: whatever they show inside a hold is a real violation.
        fun enterRead() {
            readersIn.incrementAndGet()
            if (writersIn.get() != 0) violations += "a reader beside a writer"
            reads.incrementAndGet()
        }
        fun enterWrite() {
            if (writersIn.incrementAndGet() != 1) violations += "two writers"
            if (readersIn.get() != 0 || upgradablesIn.get() != 0) violations += "a writer beside a reader"
            writes.incrementAndGet()
        }
        fun enterUpgradable() {
            if (upgradablesIn.incrementAndGet() != 1) violations += "two upgradable readers"
            if (writersIn.get() != 0) violations += "an upgradable reader beside a writer"
            upgradables.incrementAndGet()
        }
        suspend fun pause(rnd: Random) {
            if (rnd.nextInt(3) == 0) yield() // may be cancelled here: the finally blocks still end the hold
        }
        suspend fun readBody(rnd: Random) {
            enterRead()
            try {
                pause(rnd)
            } finally {
                readersIn.decrementAndGet()
                lock.unlockRead()
            }
        }
        suspend fun writeBody(rnd: Random) {
            enterWrite()
            var downgraded = false
            try {
                pause(rnd)
                if (rnd.nextInt(4) == 0) {
                    writersIn.decrementAndGet()
                    lock.downgrade()
                    downgraded = true
                    downgrades.incrementAndGet()
                    enterRead()
                    pause(rnd)
                }
            } finally {
                if (downgraded) {
                    readersIn.decrementAndGet()
                    lock.unlockRead()
                } else {
                    writersIn.decrementAndGet()
                    lock.unlockWrite()
                }
            }
        }
        suspend fun upgradableBody(rnd: Random) {
            enterUpgradable()
            var upgraded = false
            try {
                pause(rnd)
                if (rnd.nextBoolean()) {
                    // A cancelled or timed-out upgrade keeps the upgradable read: the finally ends it.
                    upgraded = if (rnd.nextBoolean()) {
                        lock.upgrade()
                        true
                    } else {
                        lock.tryUpgrade((50 + rnd.nextInt(500)).microseconds)
                    }
                    if (upgraded) {
                        upgradablesIn.decrementAndGet()
                        enterWrite()
                        upgrades.incrementAndGet()
                        pause(rnd)
                    } else {
                        refused.incrementAndGet()
                    }
                }
            } finally {
                if (upgraded) {
                    writersIn.decrementAndGet()
                    lock.unlockWrite()
                } else {
                    upgradablesIn.decrementAndGet()
                    lock.unlockUpgradableRead()
                }
            }
        }
        suspend fun oneOperation(rnd: Random, choice: Int) {
            val timeout = (50 + rnd.nextInt(1000)).microseconds
            when (choice) {
                0, 1, 2 -> { lock.lockRead(); readBody(rnd) }
                3 -> if (lock.tryLockRead()) readBody(rnd) else refused.incrementAndGet()
                4 -> if (lock.tryLockRead(timeout)) readBody(rnd) else refused.incrementAndGet()
                5 -> { lock.lockWrite(); writeBody(rnd) }
                6 -> {
                    val got = if (rnd.nextBoolean()) lock.tryLockWrite() else lock.tryLockWrite(timeout)
                    if (got) writeBody(rnd) else refused.incrementAndGet()
                }
                7 -> { lock.lockUpgradableRead(); upgradableBody(rnd) }
                else -> {
                    val got =
                        if (rnd.nextBoolean()) lock.tryLockUpgradableRead() else lock.tryLockUpgradableRead(timeout)
                    if (got) upgradableBody(rnd) else refused.incrementAndGet()
                }
            }
        }

        runBlocking {
            withTimeout(60.seconds) { // fails the run instead of hanging if progress stops
                withContext(Dispatchers.Default) {
                    val monitor = launch {
                        while (isActive) {
                            val h = lock.holdsSnapshot
                            val writer = h and ReadWriteLockImpl.WRITER != 0L
                            if (writer && h and (ReadWriteLockImpl.READS or ReadWriteLockImpl.UPGRADABLE) != 0L) {
                                violations += "holds word: a write hold beside read holds: ${lock.state()}"
                            }
                            if (h and ReadWriteLockImpl.UPGRADING != 0L && h and ReadWriteLockImpl.UPGRADABLE == 0L) {
                                violations += "holds word: upgrading without the upgradable read: ${lock.state()}"
                            }
                            yield()
                        }
                    }
                    val workers = List(48) { w ->
                        launch {
                            val rnd = Random(w)
                            while (ops.incrementAndGet() <= target && System.nanoTime() < deadline) {
                                if (rnd.nextInt(10) == 0) {
                                    // An operation that a sibling cancels at a random moment: queued,
                                    // just granted, or inside its hold.
                                    val job = launch { oneOperation(rnd, rnd.nextInt(9)) }
                                    repeat(rnd.nextInt(4)) { yield() }
                                    job.cancel()
                                    job.join()
                                    if (job.isCancelled) cancelled.incrementAndGet()
                                } else {
                                    oneOperation(rnd, rnd.nextInt(9))
                                }
                            }
                        }
                    }
                    workers.forEach { it.join() }
                    monitor.cancel()
                }
            }
        }
        println(
            "ReadWriteLock stress: ops=${minOf(ops.get(), target)} reads=$reads writes=$writes upgradables=$upgradables " +
                "upgrades=$upgrades downgrades=$downgrades refused=$refused cancelled=$cancelled",
        )
        violations.shouldBeEmpty()
        lock.shouldBeFree()
        lock.holdsSnapshot shouldBe 0L
        readersIn.get() shouldBe 0
        writersIn.get() shouldBe 0
        upgradablesIn.get() shouldBe 0
        reads.get() shouldBeGreaterThan 0
        writes.get() shouldBeGreaterThan 0
        upgradables.get() shouldBeGreaterThan 0
        upgrades.get() shouldBeGreaterThan 0
        downgrades.get() shouldBeGreaterThan 0
        refused.get() shouldBeGreaterThan 0
        cancelled.get() shouldBeGreaterThan 0
    }
})
