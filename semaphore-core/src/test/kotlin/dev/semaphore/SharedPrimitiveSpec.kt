package dev.semaphore

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.yield
import kotlin.time.Duration.Companion.milliseconds

/** The same fairness, cancellation and misuse cases, run against every primitive. */
class SharedPrimitiveSpec : FunSpec({
    for ((name, make) in primitiveFactories) {
        context(name) {
            test("waiters are served in arrival order") {
                runTest {
                    val p = make()
                    p.acquire()
                    val order = mutableListOf<Int>()
                    repeat(5) { i -> launch { p.acquire(); order += i; p.release() } }
                    testScheduler.runCurrent()
                    p.queued shouldBe 5
                    p.release()
                    testScheduler.advanceUntilIdle()
                    order shouldBe listOf(0, 1, 2, 3, 4)
                    p.available shouldBe 1
                    p.queued shouldBe 0
                }
            }

            test("tryAcquire is refused while anyone waits, even when the permit is being handed over") {
                runTest {
                    val p = make()
                    p.acquire()
                    val waiter = launch { p.acquire() }
                    testScheduler.runCurrent()
                    p.release() // granted to the waiter, which has not run yet
                    p.tryAcquire() shouldBe false
                    testScheduler.runCurrent()
                    waiter.isCompleted shouldBe true
                    p.available shouldBe 0
                    p.release()
                    p.tryAcquire() shouldBe true
                    p.release()
                }
            }

            for (position in listOf("first", "middle", "last")) {
                test("a waiter cancelled while queued ($position) leaves, the others keep their order") {
                    runTest {
                        val p = make()
                        p.acquire()
                        val order = mutableListOf<Int>()
                        val jobs = List(3) { i -> launch { p.acquire(); order += i; p.release() } }
                        testScheduler.runCurrent()
                        val victim = when (position) { "first" -> 0; "middle" -> 1; else -> 2 }
                        jobs[victim].cancel()
                        testScheduler.runCurrent()
                        p.queued shouldBe 2
                        p.release()
                        testScheduler.advanceUntilIdle()
                        order shouldBe (0..2).filter { it != victim }
                        p.available shouldBe 1
                    }
                }
            }

            test("a waiter granted but cancelled before it resumed hands the permit on") {
                runTest {
                    val p = make()
                    p.acquire()
                    val first = launch { p.acquire(); error("must not run: cancelled before resuming") }
                    var secondRan = false
                    launch { p.acquire(); secondRan = true; p.release() }
                    testScheduler.runCurrent()
                    p.release() // grants `first`; its resumption is dispatched, not yet run
                    first.cancel() // prompt cancellation: the grant is handed to the next waiter
                    testScheduler.advanceUntilIdle()
                    first.isCancelled shouldBe true
                    secondRan shouldBe true
                    p.available shouldBe 1
                    p.queued shouldBe 0
                }
            }

            test("tryAcquire(timeout) gives up with nothing held, in virtual time") {
                runTest {
                    val p = make()
                    p.acquire()
                    val start = testScheduler.currentTime
                    p.tryAcquire(100.milliseconds) shouldBe false
                    (testScheduler.currentTime - start) shouldBe 100L
                    p.queued shouldBe 0
                    p.available shouldBe 0
                    p.release()
                    p.available shouldBe 1
                }
            }

            test("tryAcquire(timeout) succeeds when released in time, and zero timeout only tries") {
                runTest {
                    val p = make()
                    p.acquire()
                    launch { delay(50); p.release() }
                    p.tryAcquire(100.milliseconds) shouldBe true
                    p.available shouldBe 0
                    p.tryAcquire(0.milliseconds) shouldBe false
                    p.tryAcquire((-5).milliseconds) shouldBe false
                    p.release()
                    p.tryAcquire(0.milliseconds) shouldBe true
                    p.release()
                    p.available shouldBe 1
                }
            }

            test("a grant that lands at the same virtual instant as the timeout is never lost") {
                runTest {
                    repeat(20) { round ->
                        val p = make()
                        p.acquire()
                        launch { delay(100); p.release() }
                        val got = async { p.tryAcquire(100.milliseconds) }
                        testScheduler.advanceUntilIdle()
                        // Either outcome is fine; what must hold is that the permit is where the result says.
                        if (got.await()) {
                            p.available shouldBe 0
                            p.release()
                        }
                        p.available shouldBe 1
                        p.queued shouldBe 0
                        round.let { }
                    }
                }
            }

            test("releasing what is not held throws, naming the counts, and changes nothing") {
                val p = make()
                val e = shouldThrow<IllegalStateException> { p.release() }
                e.message!!.let { it.isNotBlank() shouldBe true }
                p.available shouldBe 1
                p.queued shouldBe 0
                p.tryAcquire() shouldBe true
                p.release()
            }

            test("cancellation racing release on real threads never loses a permit") {
                val p = make()
                repeat(2_000) {
                    runBlocking {
                        p.acquire()
                        val waiter = launch(Dispatchers.Default) {
                            try { p.acquire(); p.release() } catch (_: CancellationException) { }
                        }
                        yield()
                        val releaser = launch(Dispatchers.Default) { p.release() }
                        waiter.cancel()
                        releaser.join()
                        waiter.join()
                    }
                    p.available shouldBe 1
                    p.queued shouldBe 0
                }
            }

            test("close message and misuse messages name the values") {
                val p = make()
                val e = shouldThrow<IllegalStateException> { p.release() }
                e.message!! shouldContain when (name) {
                    "Lock" -> "not locked"
                    "ReadWriteLock (write hold)" -> "without the write hold"
                    else -> "cannot release 1 permits"
                }
            }

            test("close fails every waiter with its cause and refuses later acquisitions; the holder still releases") {
                runTest {
                    val p = make()
                    p.acquire()
                    val failures = List(3) { async { runCatching { p.acquire() }.exceptionOrNull() } }
                    testScheduler.runCurrent()
                    p.queued shouldBe 3
                    val cause = IllegalStateException("shutting down")
                    p.close(cause)
                    p.isClosed shouldBe true
                    failures.awaitAll().forEach { f ->
                        (f is SemaphoreClosedException) shouldBe true
                        f!!.cause shouldBe cause
                    }
                    p.queued shouldBe 0
                    // Held or free, every later acquisition throws, try forms included.
                    shouldThrow<SemaphoreClosedException> { p.tryAcquire() }.cause shouldBe cause
                    shouldThrow<SemaphoreClosedException> { p.tryAcquire(10.milliseconds) }
                    shouldThrow<SemaphoreClosedException> { p.acquire() }
                    p.release()
                    p.available shouldBe 1
                    shouldThrow<SemaphoreClosedException> { p.tryAcquire() }
                    shouldThrow<SemaphoreClosedException> { p.acquire() }
                    p.close(IllegalStateException("again")) // a second close changes nothing
                    shouldThrow<SemaphoreClosedException> { p.acquire() }.cause shouldBe cause
                    p.total shouldBe 1
                }
            }
        }
    }
})
