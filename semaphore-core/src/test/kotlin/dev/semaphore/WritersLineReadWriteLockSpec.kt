package dev.semaphore

import dev.semaphore.bridge.HoldKind
import dev.semaphore.bridge.InternalSemaphoreApi
import dev.semaphore.bridge.JavaBridge
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withTimeout
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import kotlin.concurrent.thread
import kotlin.time.Duration.Companion.milliseconds

/** The policy's guarantees, numbered as in [ReadWritePolicy.WRITERS_LINE]'s KDoc. */
@OptIn(InternalSemaphoreApi::class)
class WritersLineReadWriteLockSpec : FunSpec({
    fun wl(): ReadWriteLockImpl = ReadWriteLock(ReadWritePolicy.WRITERS_LINE) as ReadWriteLockImpl

    fun ReadWriteLockImpl.writersWaiting(): Int = writersLine!!.queueLength

    fun ReadWriteLockImpl.shouldBeFree() {
        withClue("lock: $this") {
            readHolds shouldBe 0
            isWriteLocked shouldBe false
            queueLength shouldBe 0
            waiterQueue.availablePermits shouldBe total
            writersLine!!.availablePermits shouldBe 1 // WL1: nobody on its way
        }
    }

    /** Spins until [condition] holds, failing after 10 seconds (a thread that never queued). */
    fun awaitUntil(what: String, condition: () -> Boolean) {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
        while (!condition()) {
            check(System.nanoTime() < deadline) { "timed out waiting until $what" }
            Thread.onSpinWait()
        }
    }

    /** Launches [block] and runs everything runnable now, so that it has queued (or finished) when this returns. */
    fun TestScope.start(block: suspend () -> Unit): Job = launch { block() }.also { testScheduler.runCurrent() }

    test("creation: the policy, its name in toString, and no writers' line for the other policies") {
        val lock = wl()
        lock.policy shouldBe ReadWritePolicy.WRITERS_LINE
        lock.toString() shouldContain "policy=WRITERS_LINE"
        (ReadWriteLock() as ReadWriteLockImpl).writersLine shouldBe null
        (ReadWriteLock(ReadWritePolicy.PHASE_FAIR) as ReadWriteLockImpl).writersLine shouldBe null
        lock.shouldBeFree()
    }

    context("1. writers' line: one writer on its way, the others first come, first served") {
        test("writers queue in the writers' line behind the one standing in the lock's line, and are served in order") {
            runTest {
                val lock = wl()
                val entered = mutableListOf<String>()
                lock.lockRead()
                for (w in listOf("w1", "w2", "w3")) start { lock.lockWrite(); entered += w }
                lock.writersWaiting() shouldBe 2 // w2, w3
                lock.waiterQueue.queueLength shouldBe 1 // w1 stands in the lock's line
                lock.queueLength shouldBe 3
                lock.snapshot().queuedRequests shouldBe 3
                lock.snapshot().queuedPermits shouldBe 3L * lock.total
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("w1")
                lock.writersWaiting() shouldBe 1 // w2 moved on when w1's call returned
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("w1", "w2")
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("w1", "w2", "w3")
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }
    }

    context("2. a reader waits for at most the write held and the writer on its way") {
        test("a reader that comes while the next writer is being woken is granted before it") {
            runTest {
                val lock = wl()
                val entered = mutableListOf<String>()
                lock.lockWrite()
                start { lock.lockWrite(); entered += "w2" } // stands in the lock's line
                start { lock.lockWrite(); entered += "w3" } // waits in the writers' line
                lock.unlockWrite() // w2 is granted; its call has not returned yet
                start { lock.lockRead(); entered += "r" } // w2 runs here: w3 is woken, r queues behind w2's hold
                entered shouldBe listOf("w2")
                testScheduler.runCurrent() // w3 joins the lock's line, behind r
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("w2", "r")
                lock.isWriteLocked shouldBe false
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("w2", "r", "w3")
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("FIFO, for contrast: the same calls serve w3 before the reader") {
            runTest {
                val lock = ReadWriteLock()
                val entered = mutableListOf<String>()
                lock.lockWrite()
                start { lock.lockWrite(); entered += "w2" }
                start { lock.lockWrite(); entered += "w3" }
                lock.unlockWrite()
                start { lock.lockRead(); entered += "r" }
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("w2", "w3")
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("w2", "w3", "r")
                lock.unlockRead()
            }
        }

        test("writers in the writers' line hold back no reader: with the one on its way gone, readers get in at once") {
            runTest {
                val lock = wl()
                lock.lockRead()
                val w1 = start { lock.lockWrite() }
                start { lock.lockWrite() }
                lock.tryLockRead() shouldBe false // w1 stands in the lock's line
                w1.cancel() // w2 is woken; until it runs, nobody stands in the lock's line
                lock.tryLockRead() shouldBe true
                lock.readHolds shouldBe 2
                testScheduler.runCurrent() // w2 stands now
                lock.tryLockRead() shouldBe false
                lock.unlockRead()
                lock.unlockRead()
                testScheduler.runCurrent()
                lock.isWriteLocked shouldBe true
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }
    }

    context("4. the upgrade never passes through the writers' line") {
        test("an upgrade while a writer waits for the upgradable reader is served first, with no deadlock") {
            runTest {
                val lock = wl()
                val entered = mutableListOf<String>()
                lock.lockUpgradableRead()
                start { lock.lockWrite(); entered += "w1" }
                start { lock.lockWrite(); entered += "w2" }
                lock.upgrade() // the one writer standing waits for the upgradable read: the upgrade goes first
                lock.isWriteLocked shouldBe true
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("w1")
                lock.unlockWrite()
                testScheduler.runCurrent()
                entered shouldBe listOf("w1", "w2")
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }
    }

    context("5. try forms never barge") {
        test("tryLockWrite fails while a writer waits or is on its way, even with no hold taken") {
            runTest {
                val lock = wl()
                lock.lockRead()
                start { lock.lockWrite() }
                lock.unlockRead() // the writer is granted; its call has not returned
                lock.tryLockWrite() shouldBe false
                testScheduler.runCurrent()
                lock.unlockWrite()
                lock.tryLockWrite() shouldBe true
                lock.unlockWrite()
                lock.lockRead()
                start { lock.lockWrite() } // stands in the lock's line, holding the writers' line
                lock.unlockRead()
                lock.tryLockWrite() shouldBe false
                testScheduler.runCurrent()
                lock.unlockWrite()
                lock.shouldBeFree()
                lock.snapshot().tryRefused shouldBe 2
            }
        }
    }

    context("6. cancellation and timeouts") {
        test("a writer cancelled in the writers' line changes nothing else") {
            runTest {
                val lock = wl()
                lock.lockRead()
                start { lock.lockWrite() }
                val w2 = start { lock.lockWrite() }
                w2.cancel()
                testScheduler.runCurrent()
                lock.writersWaiting() shouldBe 0
                lock.waiterQueue.queueLength shouldBe 1
                lock.snapshot().cancelled shouldBe 1
                lock.unlockRead()
                testScheduler.runCurrent()
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("a writer cancelled in the lock's line lets the readers behind it in and wakes the next writer") {
            runTest {
                val lock = wl()
                val entered = mutableListOf<String>()
                lock.lockRead()
                val w1 = start { lock.lockWrite(); entered += "w1" }
                start { lock.lockRead(); entered += "r" }
                start { lock.lockWrite(); entered += "w2" }
                w1.cancel()
                testScheduler.runCurrent()
                entered shouldBe listOf("r")
                lock.writersWaiting() shouldBe 0 // w2 stands in the lock's line now
                lock.unlockRead()
                lock.unlockRead()
                testScheduler.runCurrent()
                entered shouldBe listOf("r", "w2")
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }

        test("a timed try that expires in the writers' line, or in the lock's line, holds nothing and frees the line") {
            runTest {
                val lock = wl()
                lock.lockRead()
                start { lock.lockWrite() }
                lock.tryLockWrite(50.milliseconds) shouldBe false // all of it in the writers' line
                lock.writersWaiting() shouldBe 0
                lock.unlockRead()
                testScheduler.runCurrent()
                lock.unlockWrite()
                lock.shouldBeFree()

                lock.lockRead()
                var second: Boolean? = null
                start { second = lock.tryLockWrite(50.milliseconds) } // stands in the lock's line
                start { lock.lockWrite() } // waits in the writers' line
                testScheduler.advanceTimeBy(51)
                testScheduler.runCurrent()
                second shouldBe false
                lock.writersWaiting() shouldBe 0 // the next writer moved on when the timed one gave up
                lock.unlockRead()
                testScheduler.runCurrent()
                lock.isWriteLocked shouldBe true
                lock.unlockWrite()
                lock.shouldBeFree()
                lock.snapshot().timedOut shouldBe 2
            }
        }

        test("a timed try that waits in both lines gets the write hold within its one deadline") {
            runTest {
                val lock = wl()
                lock.lockRead()
                start { lock.lockWrite() }
                var got: Boolean? = null
                start { got = lock.tryLockWrite(100.milliseconds) }
                lock.unlockRead()
                testScheduler.runCurrent()
                lock.unlockWrite() // the first writer's; the timed one moved to the lock's line and is granted
                testScheduler.runCurrent()
                got shouldBe true
                lock.unlockWrite()
                lock.shouldBeFree()
            }
        }
    }

    test("7. close fails the writers in both lines") {
        runTest {
            val lock = wl()
            lock.lockRead()
            val failures = mutableListOf<Throwable>()
            repeat(2) { start { runCatching { lock.lockWrite() }.onFailure { failures += it } } }
            lock.close()
            testScheduler.runCurrent()
            failures.size shouldBe 2
            failures.all { it is SemaphoreClosedException } shouldBe true
            lock.queueLength shouldBe 0
            shouldThrow<SemaphoreClosedException> { lock.tryLockWrite() }
            lock.unlockRead()
            lock.writersLine!!.availablePermits shouldBe 1
        }
    }

    context("diagnostics: the writers' line is seen where the lock is observed from its creation") {
        test("waiters() lists the writers in the writers' line as requests of the write hold, in the order they came; holders() only holds") {
            runTest {
                val lock = ReadWriteLock(ReadWritePolicy.WRITERS_LINE, Diagnostics(tracking = Tracking.HOLDERS)) as ReadWriteLockImpl
                lock.lockRead()
                start { runCatching { lock.lockWrite() } } // stands in the lock's line; failed by the close below
                start { runCatching { lock.lockWrite() } } // waits in the writers' line
                start { runCatching { lock.lockRead() } } // behind the first writer
                val waiters = lock.waiters()
                waiters.map { it.permits } shouldBe listOf(lock.total, lock.total, 1)
                lock.holders().map { it.permits } shouldBe listOf(1) // the writers' line's permit is not a hold
                lock.dump() shouldContain "3 waiting"
                lock.close()
                testScheduler.runCurrent()
                lock.waiters() shouldBe emptyList()
            }
        }

        test("a deadlock through the writers' line is found: a writer waits there for the writer on its way") {
            val detect = Diagnostics(detectDeadlocksAfter = 10.milliseconds)
            val rw = ReadWriteLock(ReadWritePolicy.WRITERS_LINE, Diagnostics(name = "cache", detectDeadlocksAfter = 10.milliseconds)) as ReadWriteLockImpl
            val x = Lock(diagnostics = detect)
            runBlocking(Dispatchers.Default) {
                val readerHolds = CompletableFuture<Unit>()
                val aHoldsX = CompletableFuture<Unit>()
                val reader = launch(CoroutineName("reader")) {
                    rw.lockRead()
                    readerHolds.complete(Unit)
                    aHoldsX.join()
                    x.lock() // waits for A
                }
                readerHolds.join()
                val standing = launch(CoroutineName("standing")) { rw.lockWrite() } // waits for the reader
                withTimeout(10_000) { while (rw.waiterQueue.queueLength < 1) delay(1) }
                val a = launch(CoroutineName("A")) {
                    x.lock()
                    aHoldsX.complete(Unit)
                    rw.lockWrite() // waits in the writers' line for "standing"
                }
                withTimeout(10_000) { while (rw.writersLine!!.queueLength < 1 || x.queueLength < 1) delay(1) }
                val found = Diagnostics.findDeadlocks()
                found.size shouldBe 1
                val who = found.single().participants.map { it.who }
                withClue("participants: $who") {
                    who.size shouldBe 3
                    listOf("\"reader\"", "\"standing\"", "\"A\"").forEach { name -> who.any { it.contains(name) } shouldBe true }
                }
                listOf(reader, standing, a).forEach { it.cancel() }
                rw.close()
                x.close()
            }
        }
    }

    context("Java bridge: futures and blocked threads in the same two lines") {
        test("write futures wait in the writers' line; a withdrawn one leaves it; the others are served in order") {
            val lock = wl()
            val read = JavaBridge.lockBlocking(lock, HoldKind.READ, JavaBridge.NO_TIMEOUT) { it }!!
            val f1 = JavaBridge.lockAsync(lock, HoldKind.WRITE, JavaBridge.NO_TIMEOUT) { it }
            val f2 = JavaBridge.lockAsync(lock, HoldKind.WRITE, JavaBridge.NO_TIMEOUT) { it }
            val f3 = JavaBridge.lockAsync(lock, HoldKind.WRITE, JavaBridge.NO_TIMEOUT) { it }
            lock.writersWaiting() shouldBe 2
            f2.cancel(false) shouldBe true
            lock.writersWaiting() shouldBe 1
            read.unlock()
            f1.isDone shouldBe true
            f3.isDone shouldBe false
            lock.writersWaiting() shouldBe 0 // a future joins the lock's line as soon as the one before is delivered
            f1.get().unlock()
            f3.get(5, TimeUnit.SECONDS).unlock()
            lock.shouldBeFree()
        }

        test("a write future withdrawn while it stands in the lock's line gives the writers' line back") {
            val lock = wl()
            val read = JavaBridge.lockBlocking(lock, HoldKind.READ, JavaBridge.NO_TIMEOUT) { it }!!
            val f1 = JavaBridge.lockAsync(lock, HoldKind.WRITE, JavaBridge.NO_TIMEOUT) { it }
            val f2 = JavaBridge.lockAsync(lock, HoldKind.WRITE, JavaBridge.NO_TIMEOUT) { it }
            f1.cancel(false) shouldBe true
            lock.waiterQueue.queueLength shouldBe 1 // f2 moved on
            lock.writersWaiting() shouldBe 0
            read.unlock()
            f2.get(5, TimeUnit.SECONDS).unlock()
            lock.shouldBeFree()
        }

        test("a write future cancelled as it moves on to the lock's line, while the write before it ends, gives the writers' line back (F3)") {
            // f2 is woken from the writers' line by f1's grant, on the thread that ends the read, while another
            // thread cancels f2 as soon as it left the writers' line. f2's dependent runs between f2's completion
            // and its second withdrawal, on the cancelling thread: it ends f1's write once f2's second waiter
            // stands in the lock's line, so the lock's line meets that waiter with its future done and drops it
            // (W1: claim refused). Before the fix, a cancel whose first withdrawal still saw the writers' line's
            // waiter then found the second one gone and gave the writers' line's permit back to nobody (about a
            // third of the rounds lost it on an idle 2-core machine; none of 20,000 after it).
            val pool = java.util.concurrent.Executors.newFixedThreadPool(2)
            try {
                repeat(2_000) { round ->
                    val lock = wl()
                    val read = JavaBridge.lockBlocking(lock, HoldKind.READ, JavaBridge.NO_TIMEOUT) { it }!!
                    val f1 = JavaBridge.lockAsync(lock, HoldKind.WRITE, JavaBridge.NO_TIMEOUT) { it }
                    val f2 = JavaBridge.lockAsync(lock, HoldKind.WRITE, JavaBridge.NO_TIMEOUT) { it }
                    lock.writersWaiting() shouldBe 1
                    val readEnded = java.util.concurrent.atomic.AtomicBoolean(false)
                    f2.whenComplete { _, _ ->
                        while (lock.waiterQueue.queueLength == 0 && !readEnded.get()) Thread.onSpinWait()
                        f1.join().unlock()
                    }
                    val canceller = pool.submit {
                        while (lock.writersWaiting() != 0) Thread.onSpinWait() // f2 left the writers' line
                        repeat(round % 64) { Thread.onSpinWait() } // a varying moment in its move
                        f2.cancel(false)
                    }
                    val reader = pool.submit {
                        read.unlock()
                        readEnded.set(true)
                    }
                    reader.get(10, TimeUnit.SECONDS)
                    canceller.get(10, TimeUnit.SECONDS)
                    withClue("round $round, f2 cancelled: ${f2.isCancelled}") { lock.shouldBeFree() }
                }
            } finally {
                pool.shutdownNow()
            }
        }

        test("a write future that times out in either line holds nothing") {
            val lock = wl()
            val read = JavaBridge.lockBlocking(lock, HoldKind.READ, JavaBridge.NO_TIMEOUT) { it }!!
            val f1 = JavaBridge.lockAsync(lock, HoldKind.WRITE, TimeUnit.MILLISECONDS.toNanos(50)) { it }
            val f2 = JavaBridge.lockAsync(lock, HoldKind.WRITE, TimeUnit.MILLISECONDS.toNanos(20)) { it }
            val e2 = shouldThrow<java.util.concurrent.ExecutionException> { f2.get(5, TimeUnit.SECONDS) }
            (e2.cause is TimeoutException) shouldBe true
            val e1 = shouldThrow<java.util.concurrent.ExecutionException> { f1.get(5, TimeUnit.SECONDS) }
            (e1.cause is TimeoutException) shouldBe true
            read.unlock()
            lock.shouldBeFree()
            lock.snapshot().timedOut shouldBe 2
        }

        test("blocked writer threads: in order, and a timed one that expires in the writers' line holds nothing") {
            val lock = wl()
            val read = JavaBridge.lockBlocking(lock, HoldKind.READ, JavaBridge.NO_TIMEOUT) { it }!!
            val order = java.util.Collections.synchronizedList(mutableListOf<String>())
            val started = CountDownLatch(1)
            val t1 = thread(isDaemon = true) {
                started.countDown()
                val h = JavaBridge.lockBlocking(lock, HoldKind.WRITE, JavaBridge.NO_TIMEOUT) { it }!!
                order += "t1"
                h.unlock()
            }
            started.await()
            awaitUntil("t1 stands in the lock's line") { lock.waiterQueue.queueLength == 1 }
            JavaBridge.lockBlocking(lock, HoldKind.WRITE, TimeUnit.MILLISECONDS.toNanos(30)) { it } shouldBe null
            lock.writersWaiting() shouldBe 0
            val t2 = thread(isDaemon = true) {
                val h = JavaBridge.lockBlocking(lock, HoldKind.WRITE, JavaBridge.NO_TIMEOUT) { it }!!
                order += "t2"
                h.unlock()
            }
            awaitUntil("a writer waits in the writers' line") { lock.writersWaiting() == 1 }
            read.unlock()
            t1.join(5000)
            t2.join(5000)
            t1.isAlive shouldBe false
            t2.isAlive shouldBe false
            order shouldBe listOf("t1", "t2")
            lock.shouldBeFree()
        }

        test("a future, a blocked thread and a coroutine share the writers' line, first come, first served") {
            val lock = wl()
            val read = JavaBridge.lockBlocking(lock, HoldKind.READ, JavaBridge.NO_TIMEOUT) { it }!!
            val order = java.util.Collections.synchronizedList(mutableListOf<String>())
            val f = JavaBridge.lockAsync(lock, HoldKind.WRITE, JavaBridge.NO_TIMEOUT) { it }
            val t = thread(isDaemon = true) {
                val h = JavaBridge.lockBlocking(lock, HoldKind.WRITE, JavaBridge.NO_TIMEOUT) { it }!!
                order += "thread"
                h.unlock()
            }
            awaitUntil("a writer waits in the writers' line") { lock.writersWaiting() == 1 }
            val done = CompletableFuture<Unit>()
            val c = thread(isDaemon = true) {
                runBlocking {
                    lock.lockWrite()
                    order += "coroutine"
                    lock.unlockWrite()
                }
                done.complete(Unit)
            }
            awaitUntil("two writers wait in the writers' line") { lock.writersWaiting() == 2 }
            read.unlock()
            f.get(5, TimeUnit.SECONDS)
            order += "future"
            f.get().unlock()
            done.get(5, TimeUnit.SECONDS)
            t.join(5000)
            c.join(5000)
            order shouldBe listOf("future", "thread", "coroutine")
            lock.shouldBeFree()
        }
    }
})
