@file:OptIn(InternalSemaphoreApi::class)

package dev.semaphore

import dev.semaphore.bridge.InternalSemaphoreApi
import dev.semaphore.bridge.JavaBridge
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import java.lang.ref.WeakReference
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * What diagnostics report is true and changes nothing (docs/diagnostics.md, "Who holds"; Observer.kt, H1-H2):
 * each test is one of the cases that once went wrong.
 */
class DiagnosticsTruthSpec : FunSpec({
    /** Every way of observing a primitive, and none. */
    val observations: List<Pair<String, (Inspectable) -> Unit>> = listOf(
        "unobserved" to { _ -> },
        "a listener" to { p -> p.addListener(object : SemaphoreListener {}) },
    )
    val lockDiagnostics = listOf(
        "none" to Diagnostics.NONE,
        "tracking" to Diagnostics(tracking = Tracking.HOLDERS_AND_STACKS),
        "long holds" to Diagnostics(longHoldThreshold = 1.seconds),
        "deadlocks" to Diagnostics(detectDeadlocksAfter = 1.seconds),
    )

    test("a timed try with a zero or negative timeout takes a free primitive, observed or not") {
        for ((dName, d) in lockDiagnostics) for ((oName, observe) in observations) {
            val where = "diagnostics $dName, $oName"
            for (timeout in listOf(Duration.ZERO, (-1).milliseconds)) {
                val lock = Lock(diagnostics = d).also(observe)
                withClue(where, timeout) { lock.tryLock(timeout) shouldBe true }
                lock.snapshot().tryRefused shouldBe 0L
                lock.unlock()
                val rw = ReadWriteLock(d).also(observe)
                withClue(where, timeout) { rw.tryLockWrite(timeout) shouldBe true }
                rw.unlockWrite()
                withClue(where, timeout) { rw.tryLockRead(timeout) shouldBe true }
                rw.unlockRead()
                val sem = Semaphore(2, Diagnostics(tracking = if (d === Diagnostics.NONE) Tracking.OFF else Tracking.HOLDERS)).also(observe)
                withClue(where, timeout) { sem.tryAcquire(timeout, 2) shouldBe true }
                sem.release(2)
            }
        }
    }

    test("a high-priority try with no timeout goes ahead of a low-priority request that does not fit, as tryAcquire does") {
        runBlocking {
            for (tracking in listOf(Tracking.OFF, Tracking.HOLDERS)) {
                val pool = PrioritySemaphore(3, diagnostics = Diagnostics(tracking = tracking))
                pool.acquire(2)
                val big = launch(Dispatchers.Default) { pool.acquire(2, priority = 0) } // waits: only 1 free
                withTimeout(10_000) { while (pool.queueLength < 1) delay(1) }
                pool.tryAcquire(1, priority = 5) shouldBe true // the plain try: priority 5 is served before priority 0
                pool.release(1)
                pool.tryAcquire(Duration.ZERO, 1, priority = 5) shouldBe true // the same answer
                pool.release(1)
                pool.release(2)
                big.join()
                pool.release(2)
            }
        }
    }

    test("a hold taken by a suspending try is its coroutine's, whatever path granted it, and a deadlock through it is found") {
        for (timeout in listOf(Duration.ZERO, 1.seconds)) {
            val a = Lock(diagnostics = Diagnostics(name = "try-a", detectDeadlocksAfter = 30.milliseconds))
            val b = Lock(diagnostics = Diagnostics(name = "try-b", detectDeadlocksAfter = 30.milliseconds))
            runBlocking(Dispatchers.Default) {
                val bothHold = CompletableDeferred<Unit>()
                val first = launch(CoroutineName("first")) {
                    a.tryLock(timeout) shouldBe true
                    a.holders().single().holder shouldStartWith "coroutine \"first\""
                    bothHold.await()
                    b.lock()
                }
                val second = launch(CoroutineName("second")) {
                    b.lock()
                    withTimeout(10_000) { while (!a.isLocked) delay(1) }
                    bothHold.complete(Unit)
                    a.lock()
                }
                withTimeout(10_000) { while (a.queueLength + b.queueLength < 2) delay(5) }
                val all = Diagnostics.findDeadlocks()
                val d = all.singleOrNull { it.participants.any { p -> p.waitsOn == "Lock \"try-a\"" } } ?: error("timeout $timeout: $all\n${a.dump()}\n${b.dump()}")
                d.participants.map { it.who.substringBefore(" ") + " " + it.who.substringAfter(" ").substringBefore(" ") }.toSet() shouldBe
                    setOf("coroutine \"first\"", "coroutine \"second\"")
                first.cancelAndJoin()
                second.cancelAndJoin()
            }
        }
        val rw = ReadWriteLock(Diagnostics(tracking = Tracking.HOLDERS))
        val sem = Semaphore(3, Diagnostics(tracking = Tracking.HOLDERS))
        runBlocking(CoroutineName("trier")) {
            rw.tryLockRead(Duration.ZERO) shouldBe true
            sem.tryAcquire(Duration.ZERO, 2) shouldBe true
            sem.tryAcquire(1.seconds, 1) shouldBe true
        }
        rw.holders().single().holder shouldStartWith "coroutine \"trier\""
        sem.holders() shouldHaveSize 2
        sem.holders().forEach { it.holder shouldStartWith "coroutine \"trier\"" }
    }

    test("two readers on one thread: the first ends its read and asks to write: no deadlock, the other reader still holds") {
        for (scoped in listOf(true, false)) {
            val rw = ReadWriteLock(Diagnostics(name = "shared-thread", detectDeadlocksAfter = 20.milliseconds))
            val heard = CopyOnWriteArrayList<Deadlock>()
            rw.addListener(object : SemaphoreListener {
                override fun onDeadlock(primitive: Inspectable, deadlock: Deadlock) {
                    heard += deadlock
                }
            })
            val single = Executors.newSingleThreadExecutor().asCoroutineDispatcher()
            runBlocking(single) {
                val firstRead = CompletableDeferred<Unit>()
                val secondRead = CompletableDeferred<Unit>()
                val release = CompletableDeferred<Unit>()
                val first = launch(CoroutineName("first")) {
                    if (scoped) rw.withReadLock { firstRead.complete(Unit); secondRead.await() } else {
                        rw.lockRead(); firstRead.complete(Unit); secondRead.await(); rw.unlockRead()
                    }
                    rw.lockWrite() // waits for the second reader, which is not waiting for anyone
                    rw.unlockWrite()
                }
                val second = launch(CoroutineName("second")) {
                    firstRead.await()
                    rw.withReadLock { secondRead.complete(Unit); release.await() }
                }
                withTimeout(10_000) { while (rw.queueLength < 1) delay(1) }
                delay(200) // many looks by the watch
                Diagnostics.findDeadlocks().filter { d -> d.participants.any { it.waitsOn == "ReadWriteLock \"shared-thread\"" } }.shouldBeEmpty()
                val holder = rw.holders().single().holder
                if (scoped) holder shouldStartWith "coroutine \"second\"" else holder shouldStartWith "unattributed"
                release.complete(Unit)
                first.join()
                second.join()
            }
            single.close()
            heard.shouldBeEmpty()
            rw.holders().shouldBeEmpty()
        }
    }

    test("futures close no cycle: a future's hold is released by whoever has it, so a wait for it is no deadlock") {
        val a = Lock(diagnostics = Diagnostics(name = "future-a", detectDeadlocksAfter = 20.milliseconds))
        val b = Lock(diagnostics = Diagnostics(name = "future-b", detectDeadlocksAfter = 20.milliseconds))
        val heard = CopyOnWriteArrayList<Deadlock>()
        val listener = object : SemaphoreListener {
            override fun onDeadlock(primitive: Inspectable, deadlock: Deadlock) {
                heard += deadlock
            }
        }
        a.addListener(listener)
        b.addListener(listener)
        val scheduler = Executors.newSingleThreadScheduledExecutor()
        val x = Thread({ // thread X holds b, then blocks on a
            val holdB = JavaBridge.lockBlocking(b, JavaBridge.NO_TIMEOUT) { it }!!
            Thread.sleep(50)
            JavaBridge.lockBlocking(a, JavaBridge.NO_TIMEOUT) { it }!!.unlock()
            holdB.unlock()
        }, "thread-x")
        val futureA = JavaBridge.lockAsync(a, JavaBridge.NO_TIMEOUT) { it } // held at once, by the future
        x.start()
        while (!b.isLocked) Thread.sleep(1)
        val futureB = JavaBridge.lockAsync(b, JavaBridge.NO_TIMEOUT) { it } // requested on this thread: waits for X
        scheduler.schedule({ futureA.join().unlock() }, 400, TimeUnit.MILLISECONDS) // the task with a ends later
        Thread.sleep(160)
        Diagnostics.findDeadlocks().filter { d -> d.participants.any { it.waitsOn.startsWith("Lock \"future-") } }.shouldBeEmpty()
        futureB.get(10, TimeUnit.SECONDS).unlock() // everything completes by itself
        x.join(10_000)
        x.isAlive shouldBe false
        scheduler.shutdown()
        heard.shouldBeEmpty()
    }

    test("-Ddev.semaphore.diagnostics observes every primitive created after it; a bad value is refused, naming it") {
        val saved = System.getProperty("dev.semaphore.diagnostics")
        try {
            System.setProperty("dev.semaphore.diagnostics", "tracking=holders, deadlocks=2s, listener=dev.semaphore.ObservingListener")
            val lock = Lock()
            val sem = Semaphore(2)
            val before = ObservingListener.events.get()
            runBlocking(CoroutineName("everywhere")) {
                lock.lock()
                sem.acquire()
            }
            lock.holders().single().holder shouldStartWith "coroutine \"everywhere\""
            sem.holders().single().holder shouldStartWith "coroutine \"everywhere\""
            (ObservingListener.events.get() - before >= 2) shouldBe true // the process's listener heard both
            for ((value, named) in listOf(
                "tracking=all" to "tracking is holders, stacks or off, not \"all\"",
                "deadlocks=soon" to "\"soon\" is not a duration",
                "longHolds=-1s" to "must be positive",
                "listener=no.such.Listener" to "no public class \"no.such.Listener\"",
                "listener=java.lang.Object" to "\"java.lang.Object\" is not a dev.semaphore.SemaphoreListener",
                "colour=blue" to "unknown option \"colour\"",
            )) {
                System.setProperty("dev.semaphore.diagnostics", value)
                val e = io.kotest.assertions.throwables.shouldThrow<IllegalArgumentException> { Semaphore(1) }
                e.message!! shouldContain "dev.semaphore.diagnostics=\"$value\""
                e.message!! shouldContain named
            }
        } finally {
            if (saved == null) System.clearProperty("dev.semaphore.diagnostics") else System.setProperty("dev.semaphore.diagnostics", saved)
        }
    }

    test("a Lock created locked lists its holder; a closed held Lock counts every refused lock() and tryLock()") {
        val created = Lock(locked = true, diagnostics = Diagnostics(tracking = Tracking.HOLDERS))
        created.holders().single().holder shouldBe "the lock's creation with locked = true, on thread \"${Thread.currentThread().name}\""
        created.unlock()
        created.holders().shouldBeEmpty()
        for (d in listOf(Diagnostics.NONE, Diagnostics(tracking = Tracking.HOLDERS))) {
            val lock = Lock(diagnostics = d)
            val sem = Semaphore(1, Diagnostics(tracking = d.tracking))
            runBlocking {
                lock.lock()
                sem.acquire()
                lock.close()
                sem.close()
                io.kotest.assertions.throwables.shouldThrow<SemaphoreClosedException> { lock.lock() }
                io.kotest.assertions.throwables.shouldThrow<SemaphoreClosedException> { lock.tryLock() }
                io.kotest.assertions.throwables.shouldThrow<SemaphoreClosedException> { lock.tryLock(1.seconds) }
                io.kotest.assertions.throwables.shouldThrow<SemaphoreClosedException> { sem.acquire() }
                io.kotest.assertions.throwables.shouldThrow<SemaphoreClosedException> { sem.tryAcquire() }
                io.kotest.assertions.throwables.shouldThrow<SemaphoreClosedException> { sem.tryAcquire(1.seconds) }
            }
            lock.snapshot().failedByClose shouldBe 3L
            sem.snapshot().failedByClose shouldBe 3L // the same count for the same calls
        }
    }

    test("watches follow records: idle primitives arm no timer, a long innocent wait starts one search, a slow listener delays only its own primitive") {
        val timers = { dev.semaphore.internal.DiagnosticsThread.executor.queue.size }
        val idle = ArrayList<Lock>()
        val before = timers()
        repeat(1000) { idle += Lock(diagnostics = Diagnostics(longHoldThreshold = 1.seconds, detectDeadlocksAfter = 1.seconds)) }
        (timers() - before < 10) shouldBe true // was one periodic task each
        idle.clear()

        val busy = Lock(diagnostics = Diagnostics(name = "busy-innocent", detectDeadlocksAfter = 20.milliseconds))
        val searchesBefore = dev.semaphore.internal.Deadlocks.searches.get()
        runBlocking(Dispatchers.Default) {
            busy.lock()
            val waiters = List(3) { launch { busy.withLock { } } }
            delay(400) // 20 periods of the old watch
            busy.unlock()
            waiters.forEach { it.join() }
        }
        (dev.semaphore.internal.Deadlocks.searches.get() - searchesBefore <= 3) shouldBe true // one per request at most

        val slowRelease = java.util.concurrent.CountDownLatch(1)
        val slow = Semaphore(1, Diagnostics(longHoldThreshold = 20.milliseconds))
        slow.addListener(object : SemaphoreListener {
            override fun onLongHold(primitive: Inspectable, hold: HoldInfo) {
                slowRelease.await(10, TimeUnit.SECONDS) // a listener that blocks
            }
        })
        val other = Semaphore(1, Diagnostics(longHoldThreshold = 100.milliseconds))
        val otherHeard = java.util.concurrent.CountDownLatch(1)
        other.addListener(object : SemaphoreListener {
            override fun onLongHold(primitive: Inspectable, hold: HoldInfo) = otherHeard.countDown()
        })
        slow.tryAcquire() shouldBe true
        other.tryAcquire() shouldBe true
        val heard = otherHeard.await(5, TimeUnit.SECONDS) // while the slow listener still blocks
        slowRelease.countDown()
        heard shouldBe true
        slow.release()
        other.release()
    }

    test("who holds and who waits are fields: kind, the launched coroutine's Job and name, the thread, the owner") {
        val sem = Semaphore(3, Diagnostics(tracking = Tracking.HOLDERS))
        val lock = Lock(diagnostics = Diagnostics(tracking = Tracking.HOLDERS))
        val owner = Any()
        runBlocking(Dispatchers.Default) {
            val job = launch(CoroutineName("fetch")) {
                kotlinx.coroutines.withContext(CoroutineName("inner")) { sem.acquire() } // a scope: still "fetch"
                lock.lock(owner)
                kotlinx.coroutines.awaitCancellation()
            }
            withTimeout(10_000) { while (!lock.isLocked) delay(1) }
            val hold = sem.holders().single().caller
            hold.kind shouldBe Caller.Kind.COROUTINE
            hold.job shouldBe job
            hold.coroutineName shouldBe "fetch"
            hold.toString() shouldBe "coroutine \"fetch\"" // no Job text, no hash code, when it has a name
            lock.holders().single().caller.owner shouldBe owner
            val waiter = launch(CoroutineName("next")) { lock.lock() }
            withTimeout(10_000) { while (lock.queueLength < 1) delay(1) }
            lock.waiters().single().caller.job shouldBe waiter
            waiter.cancelAndJoin()
            job.cancelAndJoin()
        }
        sem.tryAcquire() shouldBe true
        sem.holders().last().caller.let {
            it.kind shouldBe Caller.Kind.THREAD
            it.thread shouldBe Thread.currentThread()
            it.job shouldBe null
        }
        sem.release(1) // two holds of one permit by different callers, one anonymous release: who is left is not known
        sem.holders().single().let {
            it.caller.kind shouldBe Caller.Kind.UNATTRIBUTED
            it.permits shouldBe 1
        }
        val future = JavaBridge.acquireAsync(sem, 1, 0, JavaBridge.NO_TIMEOUT) { it }
        future.isDone shouldBe true
        sem.holders().last().caller.kind shouldBe Caller.Kind.FUTURE
    }

    test("durations follow the primitive's clock: under runTest, a 100 ms virtual wait reads 100 ms, and a dump agrees with itself") {
        kotlinx.coroutines.test.runTest {
            val lock = Lock(diagnostics = Diagnostics(tracking = Tracking.HOLDERS, timeSource = testScheduler.timeSource))
            lock.lock()
            val waiter = launch { if (lock.tryLock(1.seconds)) lock.unlock() }
            testScheduler.runCurrent()
            testScheduler.advanceTimeBy(100)
            val wait = lock.waiters().single()
            wait.waited shouldBe java.time.Duration.ofMillis(100)
            java.time.Duration.between(wait.since, wait.deadline) shouldBe java.time.Duration.ofSeconds(1)
            lock.holders().single().held shouldBe java.time.Duration.ofMillis(100)
            lock.snapshot().oldestWait shouldBe java.time.Duration.ofMillis(100)
            val dump = lock.dump()
            dump shouldContain "oldest 100ms"
            dump shouldContain "for 100ms"
            dump shouldContain "since 100ms ago"
            lock.unlock()
            waiter.join()
        }
    }

    test("a deadlock is reported after its wait, even on locks whose holds arm a longer long-hold look; a named release never ends another's hold") {
        val a = Lock(diagnostics = Diagnostics(longHoldThreshold = 60.seconds, detectDeadlocksAfter = 20.milliseconds))
        val b = Lock(diagnostics = Diagnostics(longHoldThreshold = 60.seconds, detectDeadlocksAfter = 20.milliseconds))
        val heard = CompletableDeferred<Deadlock>()
        a.addListener(object : SemaphoreListener {
            override fun onDeadlock(primitive: Inspectable, deadlock: Deadlock) {
                heard.complete(deadlock)
            }
        })
        runBlocking(Dispatchers.Default) {
            val bothHold = CompletableDeferred<Unit>()
            val first = launch { a.lock(); bothHold.await(); b.lock() }
            val second = launch { b.lock(); withTimeout(10_000) { while (!a.isLocked) delay(1) }; bothHold.complete(Unit); a.lock() }
            withTimeout(5_000) { heard.await() }.participants shouldHaveSize 2 // not after the 60 s look
            first.cancelAndJoin()
            second.cancelAndJoin()
        }
        val sem = withoutProcessDiagnostics { Semaphore(2) }
        runBlocking(Dispatchers.Default) {
            val inside = CompletableDeferred<Unit>()
            val leave = CompletableDeferred<Unit>()
            val early = launch(CoroutineName("early")) { sem.withPermit { inside.complete(Unit); leave.await() } } // before observation
            inside.await()
            sem.addListener(object : SemaphoreListener {}) // observed from here: the early hold is not recorded
            sem.tryAcquire() shouldBe true // recorded: this thread's
            leave.complete(Unit)
            early.join() // its release names its coroutine, whose hold was never recorded
        }
        sem.holders().single().caller.kind shouldBe Caller.Kind.THREAD // the other caller's hold stays (O3, H2)
        sem.release()
    }

    test("a reported deadlock keeps none of its participants alive once they are gone") {
        class Owner(val payload: ByteArray = ByteArray(1 shl 20))
        val refs = ArrayList<WeakReference<Any>>()
        runBlocking(Dispatchers.Default) {
            val a = Lock(diagnostics = Diagnostics(detectDeadlocksAfter = 10.milliseconds))
            val b = Lock(diagnostics = Diagnostics(detectDeadlocksAfter = 10.milliseconds))
            val reported = CompletableDeferred<Unit>()
            a.addListener(object : SemaphoreListener {
                override fun onDeadlock(primitive: Inspectable, deadlock: Deadlock) {
                    reported.complete(Unit)
                }
            })
            val jobs = ArrayList<Job>()
            for ((first, second) in listOf(a to b, b to a)) {
                val owner = Owner()
                refs += WeakReference(owner)
                jobs += launch {
                    first.lock(owner)
                    withTimeout(10_000) { while (!(a.isLocked && b.isLocked)) delay(1) }
                    second.lock(owner)
                }
            }
            jobs.forEach { refs += WeakReference(it) }
            withTimeout(20_000) { reported.await() }
            jobs.forEach { it.cancelAndJoin() }
        }
        repeat(20) {
            if (refs.all { it.get() == null }) return@repeat
            System.gc()
            Thread.sleep(50)
        }
        refs.filter { it.get() != null }.shouldHaveSize(0)
    }
})

private inline fun <T> withClue(where: String, timeout: Duration, block: () -> T): T =
    io.kotest.assertions.withClue("$where, timeout $timeout") { block() }
