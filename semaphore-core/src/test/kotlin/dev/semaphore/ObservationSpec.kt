package dev.semaphore

import dev.semaphore.internal.WaiterQueueOwner
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.runCurrent
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withContext
import java.io.File
import java.time.Duration
import java.util.Collections
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TestTimeSource

/** Records every event as one line, in order. */
private class Recorder : SemaphoreListener {
    val events: MutableList<String> = Collections.synchronizedList(ArrayList())

    override fun onAcquired(primitive: Inspectable, hold: HoldInfo, waited: Duration) {
        events += "acquired ${hold.permits} by ${hold.holder} waited=${if (waited.isZero) "0" else ">0"}"
    }

    override fun onReleased(primitive: Inspectable, hold: HoldInfo) {
        events += "released ${hold.permits} by ${hold.holder} held=${if (hold.held == null) "?" else "known"}"
    }

    override fun onRefused(primitive: Inspectable, permits: Int) {
        events += "refused $permits"
    }

    override fun onTimedOut(primitive: Inspectable, request: WaitInfo) {
        events += "timed out ${request.permits} by ${request.requester}"
    }

    override fun onCancelled(primitive: Inspectable, request: WaitInfo) {
        events += "cancelled ${request.permits} by ${request.requester}"
    }

    override fun onClosed(primitive: Inspectable, cause: Throwable?, failedRequests: Int) {
        events += "closed ${cause?.message} failed=$failedRequests"
    }

    override fun onResized(primitive: Inspectable, oldTotal: Int, newTotal: Int) {
        events += "resized $oldTotal->$newTotal"
    }

    override fun onLongHold(primitive: Inspectable, hold: HoldInfo) {
        events += "long hold ${hold.permits} by ${hold.holder}"
    }

    override fun onLongHoldReleased(primitive: Inspectable, hold: HoldInfo) {
        events += "long hold released ${hold.permits}"
    }
}

private val Inspectable.isObserved: Boolean get() = (this as WaiterQueueOwner).waiterQueue.observer != null

class ObservationSpec : FunSpec({
    test("a listener hears every acquisition, release, refusal, timeout, cancellation, resize and close, naming the coroutine") {
        runTest {
            val s = Semaphore(2, Diagnostics(name = "db"))
            val r = Recorder()
            s.addListener(r)
            s.isObserved shouldBe true
            withContext(CoroutineName("first")) { s.acquire(2) }
            s.tryAcquire() shouldBe false
            val waiter = launch(CoroutineName("waiter")) { s.acquire(1) }
            val quitter = launch(CoroutineName("quitter")) { s.acquire(1) }
            val impatient = launch(CoroutineName("impatient")) { s.tryAcquire(10.milliseconds) }
            runCurrent()
            quitter.cancel()
            testScheduler.advanceTimeBy(20)
            runCurrent()
            impatient.isCompleted shouldBe true
            s.release(2)
            waiter.join()
            s.addPermits(1)
            s.reducePermits(2)
            launch(CoroutineName("late")) { shouldThrow<SemaphoreClosedException> { s.acquire(1) } }
            runCurrent()
            s.close(IllegalStateException("shutting down"))
            runCurrent()
            val first = r.events.first()
            first shouldStartWith "acquired 2 by coroutine \"first\""
            first shouldContain "waited=0"
            r.events.drop(1) shouldBe listOf(
                "refused 1",
                r.events[2], // the cancellation, naming the coroutine and its Job
                "timed out 1 by " + r.events[3].removePrefix("timed out 1 by "),
                r.events[4], // the release of the first hold
                r.events[5], // the grant to the waiter
                "resized 2->3",
                "resized 3->1",
                "closed shutting down failed=1",
            )
            r.events[2] shouldStartWith "cancelled 1 by coroutine \"quitter\""
            r.events[3] shouldStartWith "timed out 1 by coroutine \"impatient\""
            r.events[4] shouldStartWith "released 2 by coroutine \"first\""
            r.events[4] shouldContain "held=known"
            r.events[5] shouldStartWith "acquired 1 by coroutine \"waiter\""
            r.events[5] shouldContain "waited=>0"
        }
    }

    test("holders and waiters say who, how many, since when and until when; the dump shows them") {
        runTest {
            val s = Semaphore(3, Diagnostics(name = "pool", tracking = Tracking.HOLDERS))
            s.isObserved shouldBe true
            withContext(CoroutineName("loader")) { s.acquire(2) }
            val big = launch(CoroutineName("big")) { s.acquire(3) }
            val timed = launch(CoroutineName("timed")) { s.tryAcquire(1.minutes, permits = 1) }
            runCurrent()
            val holders = s.holders()
            holders shouldHaveSize 1
            holders[0].permits shouldBe 2
            holders[0].holder shouldStartWith "coroutine \"loader\""
            holders[0].since.shouldNotBeNull()
            val waiters = s.waiters()
            waiters shouldHaveSize 2
            waiters[0].requester shouldStartWith "coroutine \"big\""
            waiters[0].permits shouldBe 3
            waiters[0].deadline.shouldBeNull()
            waiters[1].requester shouldStartWith "coroutine \"timed\""
            val deadline = waiters[1].deadline.shouldNotBeNull()
            // the deadline is a minute after joining the line (real clock; generous bounds)
            (Duration.between(waiters[1].since, deadline).toMillis() in 59_000L..61_000L) shouldBe true
            s.snapshot().oldestWait.shouldNotBeNull()
            val dump = s.dump()
            dump shouldContain "Semaphore \"pool\": 2/3 held, 2 waiting (4 permits, oldest"
            dump shouldContain "\n  holders:\n    2 permits held by coroutine \"loader\""
            dump shouldContain "\n  waiting, in the order they came:\n    coroutine \"big\""
            dump shouldContain " waits for 3 permits since "
            Diagnostics.dumpAll() shouldContain "Semaphore \"pool\": 2/3 held"
            big.cancel()
            timed.cancel() // granted when big left, then cancelled: hands its permit back when it runs (W3)
            s.release(2)
            runCurrent()
            s.holders().shouldBeEmpty()
            s.waiters().shouldBeEmpty()
        }
    }

    test("a priority semaphore's waiters show their priority and, with aging, the priority they are served at now") {
        runTest {
            val clock = TestTimeSource()
            val s = PrioritySemaphore(1, aging = 1.seconds, timeSource = clock, diagnostics = Diagnostics(tracking = Tracking.HOLDERS))
            s.acquire()
            launch { shouldThrow<SemaphoreClosedException> { s.acquire(priority = 3) } }
            runCurrent()
            clock += 5.seconds
            val w = s.waiters().single()
            w.priority shouldBe 3
            w.effectivePriority shouldBe 8
            w.toString() shouldContain "at priority 3 (now 8)"
            s.close()
        }
    }

    test("a lock's holder shows its owner; stacks, when captured, start at the caller") {
        runTest {
            val lock = Lock(diagnostics = Diagnostics(name = "ledger", tracking = Tracking.HOLDERS_AND_STACKS))
            lock.lock("alice")
            val h = lock.holders().single()
            h.owner shouldBe "alice"
            h.holder shouldStartWith "owner alice (coroutine"
            h.stack.first().className shouldStartWith "dev.semaphore.ObservationSpec"
            val bob = launch { lock.lock("bob") }
            runCurrent()
            val w = lock.waiters().single()
            w.owner shouldBe "bob"
            w.requester shouldStartWith "owner bob (coroutine"
            w.stack.first().className shouldStartWith "dev.semaphore.ObservationSpec"
            lock.unlock("alice")
            bob.join()
            lock.holders().single().owner shouldBe "bob"
            lock.unlock("bob")
        }
    }

    test("a hold longer than the threshold is reported once, and again at its release") {
        val s = Semaphore(1, Diagnostics(name = "slow", longHoldThreshold = 50.milliseconds))
        val r = Recorder()
        val reported = CountDownLatch(1)
        s.addListener(object : SemaphoreListener {
            override fun onLongHold(primitive: Inspectable, hold: HoldInfo) = reported.countDown()
        })
        s.addListener(r)
        runBlocking { withContext(CoroutineName("sleeper")) { s.acquire() } }
        reported.await(10, TimeUnit.SECONDS) shouldBe true
        Thread.sleep(200) // several more looks by the watch: still reported once
        s.release()
        r.events.count { it.startsWith("long hold 1 by coroutine \"sleeper\"") } shouldBe 1
        r.events.last() shouldBe "long hold released 1"
    }

    test("a listener that throws is logged and does not reach the caller; the primitive is unaffected") {
        val s = Semaphore(1)
        val thrower = object : SemaphoreListener {
            override fun onAcquired(primitive: Inspectable, hold: HoldInfo, waited: Duration) = throw IllegalStateException("boom")
            override fun toString() = "the throwing listener"
        }
        s.addListener(thrower)
        val logged = capturingLog("dev.semaphore") {
            s.tryAcquire() shouldBe true
        }
        s.availablePermits shouldBe 0
        s.release()
        s.availablePermits shouldBe 1
        val warning = logged.single { it.thrown?.message == "boom" }
        warning.level shouldBe java.util.logging.Level.WARNING
        warning.message shouldContain "the throwing listener"
    }

    test("closing the last registration ends observation: the lock-free paths return and nothing more is heard") {
        val s = withoutProcessDiagnostics { Semaphore(1) }
        val r = Recorder()
        val reg = s.addListener(r)
        s.tryAcquire() shouldBe true
        s.release()
        reg.close()
        reg.close() // twice: nothing
        s.isObserved shouldBe false
        s.tryAcquire() shouldBe true
        s.release()
        r.events shouldHaveSize 2
        // created with tracking: observation stays after a listener goes
        val tracked = Semaphore(1, Diagnostics(tracking = Tracking.HOLDERS))
        tracked.addListener(Recorder()).close()
        tracked.isObserved shouldBe true
    }

    test("a hold taken before observation began is reported at its release with an unknown start") {
        val s = withoutProcessDiagnostics { Semaphore(2) }
        s.tryAcquire() shouldBe true
        val r = Recorder()
        s.addListener(r)
        s.holders().shouldBeEmpty()
        s.release()
        r.events.single() shouldBe "released 1 by a holder from before observation began held=?"
    }

    test("the core loads and works where the jdk.jfr module is absent") {
        val java = File(System.getProperty("java.home"), "bin/java").path
        val cp = System.getProperty("java.class.path")
        val p = ProcessBuilder(java, "--limit-modules", "java.base,java.logging", "-cp", cp, "dev.semaphore.NoJfrMain")
            .redirectErrorStream(true).start()
        val out = p.inputStream.bufferedReader().readText()
        p.waitFor(60, TimeUnit.SECONDS) shouldBe true
        out shouldContain "jdk.jfr present: false"
        out shouldContain "ok: 1 holder, 1 waiter, dump of 5 lines"
        p.exitValue() shouldBe 0
    }
})

/** Run by the test above in a JVM without jdk.jfr. */
object NoJfrMain {
    @JvmStatic
    fun main(args: Array<String>) {
        println("jdk.jfr present: ${ModuleLayer.boot().findModule("jdk.jfr").isPresent}")
        val s = Semaphore(1, Diagnostics(name = "no-jfr", tracking = Tracking.HOLDERS, longHoldThreshold = 1.seconds))
        runBlocking {
            s.acquire()
            val w = launch { s.acquire() }
            delay(50)
            val dump = s.dump()
            println("ok: ${s.holders().size} holder, ${s.waiters().size} waiter, dump of ${dump.lines().size} lines")
            s.release()
            w.join()
            s.release()
        }
    }
}
