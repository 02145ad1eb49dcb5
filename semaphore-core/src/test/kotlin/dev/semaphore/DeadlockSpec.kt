@file:OptIn(InternalSemaphoreApi::class)

package dev.semaphore

import dev.semaphore.bridge.InternalSemaphoreApi
import dev.semaphore.bridge.JavaBridge
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import jdk.jfr.consumer.RecordedEvent
import jdk.jfr.consumer.RecordingStream
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import java.util.Collections
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import kotlin.time.Duration.Companion.milliseconds

/** Real deadlocks, found by the watch and on demand; and none where there is none. */
class DeadlockSpec : FunSpec({
    test("two coroutines taking two locks in opposite orders: found on demand, reported once by the watch, to listeners and JFR") {
        val a = Lock(diagnostics = Diagnostics(name = "accounts", detectDeadlocksAfter = 100.milliseconds))
        val b = Lock(diagnostics = Diagnostics(name = "ledger", detectDeadlocksAfter = 100.milliseconds))
        val reported = CopyOnWriteArrayList<Pair<String?, Deadlock>>()
        val heard = CountDownLatch(2) // each lock's listener
        val listener = object : SemaphoreListener {
            override fun onDeadlock(primitive: Inspectable, deadlock: Deadlock) {
                reported += primitive.name to deadlock
                heard.countDown()
            }
        }
        a.addListener(listener)
        b.addListener(listener)
        val jfr = Collections.synchronizedList(ArrayList<RecordedEvent>())
        val jfrSeen = CountDownLatch(1)
        RecordingStream().use { rs ->
            rs.enable("dev.semaphore.Deadlock")
            rs.onEvent("dev.semaphore.Deadlock") { jfr += it; jfrSeen.countDown() }
            rs.startAsync()
            runBlocking(Dispatchers.Default) {
                val inTransfer = CountDownLatch(2)
                val t1 = launch(CoroutineName("transfer-1")) {
                    a.withLock {
                        inTransfer.countDown()
                        while (inTransfer.count > 0) delay(1)
                        withContext(CoroutineName("inner")) { b.lock() } // a scope inside: still transfer-1
                        b.unlock()
                    }
                }
                val t2 = launch(CoroutineName("transfer-2")) {
                    b.withLock {
                        inTransfer.countDown()
                        while (inTransfer.count > 0) delay(1)
                        a.lock()
                        a.unlock()
                    }
                }
                withTimeout(20_000) {
                    while (a.queueLength + b.queueLength < 2) delay(5)
                }
                val found = Diagnostics.findDeadlocks()
                found shouldHaveSize 1
                val d = found.single()
                d.participants shouldHaveSize 2
                val whoWaitsOnWhat = d.participants.associate { it.waitsOn to it.who }
                whoWaitsOnWhat.getValue("Lock \"ledger\"") shouldContain "coroutine \"transfer-1\""
                whoWaitsOnWhat.getValue("Lock \"accounts\"") shouldContain "coroutine \"transfer-2\""
                d.participants.forEach { p ->
                    p.blockedBecause shouldBe "held by the next"
                    p.holds shouldHaveSize 1
                }
                d.toString() shouldContain "deadlock of 2 participants:"
                heard.await(20, TimeUnit.SECONDS) shouldBe true
                jfrSeen.await(20, TimeUnit.SECONDS) shouldBe true
                t2.cancel() // one gives up: the deadlock resolves
                t1.join()
                Diagnostics.findDeadlocks().shouldBeEmpty()
            }
        }
        reported.map { it.first }.toSet() shouldBe setOf("accounts", "ledger")
        reported.size shouldBe 2 // reported once, to each lock's listener
        jfr.first().getInt("participants") shouldBe 2
        jfr.first().getString("description") shouldContain "transfer-1"
    }

    test("a coroutine and a blocked Java thread in a deadlock: the thread is the participant") {
        val a = Lock(diagnostics = Diagnostics(name = "java-a", detectDeadlocksAfter = 50.milliseconds))
        val b = Lock(diagnostics = Diagnostics(name = "java-b", detectDeadlocksAfter = 50.milliseconds))
        runBlocking(Dispatchers.Default) {
            val coroutineHoldsA = CountDownLatch(1)
            val javaHoldsB = CountDownLatch(1)
            val coroutine = launch(CoroutineName("kotlin-side")) {
                a.lock()
                coroutineHoldsA.countDown()
                while (javaHoldsB.count > 0) delay(1)
                b.lock() // waits for the Java side
            }
            coroutineHoldsA.await(10, TimeUnit.SECONDS) shouldBe true
            val javaSide = Thread({
                val holdB = JavaBridge.lockBlocking(b, JavaBridge.NO_TIMEOUT) { it }!!
                javaHoldsB.countDown()
                JavaBridge.lockBlocking(a, JavaBridge.NO_TIMEOUT) { it }!!.unlock() // waits for the coroutine
                holdB.unlock()
            }, "java-worker")
            javaSide.start()
            withTimeout(20_000) { while (a.queueLength + b.queueLength < 2) delay(5) }
            val d = Diagnostics.findDeadlocks().single()
            val who = d.participants.map { it.who }
            who.any { it.startsWith("coroutine \"kotlin-side\"") } shouldBe true
            who.any { it == "thread \"java-worker\"" } shouldBe true
            coroutine.cancel() // the coroutine gives up waiting for b, and ends still holding a (taken without withLock)
            coroutine.join()
            a.unlock() // so the test ends that hold: the Java side gets a, then releases both
            javaSide.join(10_000)
            javaSide.isAlive shouldBe false
        }
    }

    test("a read-write lock: a reader that reads again behind a waiting writer deadlocks with it") {
        val rw = ReadWriteLock(Diagnostics(name = "cache", detectDeadlocksAfter = 50.milliseconds))
        runBlocking(Dispatchers.Default) {
            val readerHolds = CountDownLatch(1)
            val writerQueued = CompletableDeferred<Unit>()
            val reader = launch(CoroutineName("reader")) {
                rw.lockRead()
                readerHolds.countDown()
                writerQueued.await()
                rw.lockRead() // behind the writer (strict FIFO), which waits for this reader's first hold
            }
            readerHolds.await(10, TimeUnit.SECONDS) shouldBe true
            val writer = launch(CoroutineName("writer")) { rw.lockWrite() }
            withTimeout(20_000) { while (rw.queueLength < 1) delay(5) }
            writerQueued.complete(Unit)
            withTimeout(20_000) { while (rw.queueLength < 2) delay(5) }
            val d = Diagnostics.findDeadlocks().single { it.participants.any { p -> p.waitsOn == "ReadWriteLock \"cache\"" } }
            d.participants.map { it.blockedBecause }.toSet() shouldBe setOf("held by the next", "behind the next in line")
            writer.cancel()
            reader.join()
            rw.unlockRead()
            rw.unlockRead()
        }
    }

    test("contention without a cycle is not a deadlock, however long it waits") {
        val lock = Lock(diagnostics = Diagnostics(name = "busy", detectDeadlocksAfter = 20.milliseconds))
        val heard = CopyOnWriteArrayList<Deadlock>()
        lock.addListener(object : SemaphoreListener {
            override fun onDeadlock(primitive: Inspectable, deadlock: Deadlock) {
                heard += deadlock
            }
        })
        runBlocking(Dispatchers.Default) {
            lock.lock()
            val waiters = List(3) { i -> launch(CoroutineName("w$i")) { lock.withLock { delay(10) } } }
            delay(300) // many looks by the watch
            Diagnostics.findDeadlocks().filter { d -> d.participants.any { it.waitsOn == "Lock \"busy\"" } }.shouldBeEmpty()
            lock.unlock()
            waiters.forEach { it.join() }
        }
        heard.shouldBeEmpty()
    }

    test("deadlock detection is refused on a semaphore, naming it") {
        shouldThrow<IllegalArgumentException> {
            Semaphore(2, Diagnostics(name = "pool", detectDeadlocksAfter = 1.milliseconds))
        }.message!! shouldContain "this is a Semaphore"
        shouldThrow<IllegalArgumentException> { Diagnostics(detectDeadlocksAfter = (-1).milliseconds) }.message!! shouldContain "was -1ms"
    }
})
