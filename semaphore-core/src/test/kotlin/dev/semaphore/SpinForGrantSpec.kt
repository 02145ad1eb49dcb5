package dev.semaphore

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong
import kotlin.coroutines.CoroutineContext
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * A queued coroutine's moment of spinning for a grant before it suspends (internal/Suspending.kt, C5): a release, a
 * cancellation, a close or a timeout from another thread may land while the waiter spins or after it suspended; in
 * either case the wait ends as it would have without the spin. The waiter runs on a thread of its own, the other
 * side on the test's thread, so both moments happen over the rounds (which one a round hits is not controlled).
 */
class SpinForGrantSpec : FunSpec({
    /** A thread of its own for the waiter, counting the coroutines dispatched to it. */
    class WaiterThread : AutoCloseable {
        private val executor = Executors.newSingleThreadExecutor { r -> Thread(r, "spin-spec-waiter").apply { isDaemon = true } }
        private val inner = executor.asCoroutineDispatcher()
        val dispatches = AtomicLong()
        val dispatcher = object : CoroutineDispatcher() {
            override fun dispatch(context: CoroutineContext, block: Runnable) {
                dispatches.incrementAndGet()
                inner.dispatch(context, block)
            }
        }

        override fun close() = executor.shutdownNow().let { }
    }

    suspend fun awaitQueued(queueLength: () -> Int, n: Int) = withTimeout(10.seconds) { while (queueLength() != n) yield() }

    test("a release from another thread, during the waiter's spin or after it suspended: every grant taken once, none lost") {
        WaiterThread().use { waiter ->
            val steps = 2_000
            for (kind in listOf("semaphore", "lock")) {
                val s = Semaphore(1)
                val lock = Lock()
                val queued = { if (kind == "semaphore") s.queueLength else lock.queueLength }
                val before = waiter.dispatches.get()
                runBlocking {
                    if (kind == "semaphore") s.acquire() else lock.lock()
                    val taken = AtomicInteger()
                    val job = launch(waiter.dispatcher) {
                        repeat(steps) {
                            if (kind == "semaphore") s.acquire() else lock.lock()
                            taken.incrementAndGet()
                        }
                    }
                    for (i in 0 until steps) {
                        // The waiter took i grants and is back in line, spinning or suspended: a release at once.
                        val deadline = System.nanoTime() + 10_000_000_000L
                        while (queued() != 1) check(System.nanoTime() < deadline) { "the waiter did not queue again in 10 s" }
                        if (taken.get() != i) throw AssertionError("the waiter took ${taken.get()} grants, expected $i")
                        if (kind == "semaphore") s.release() else lock.unlock()
                    }
                    job.join()
                    taken.get() shouldBe steps
                }
                // The launch is one dispatch; a grant is at most one more (none when it came during the spin).
                val dispatched = waiter.dispatches.get() - before
                dispatched shouldBeLessThanOrEqual steps + 1L
                println("$kind: ${steps + 1 - dispatched} of $steps grants resumed the waiter in place") // how often the spin caught one
                if (kind == "semaphore") {
                    s.availablePermits shouldBe 0 // the waiter's last grant, still held
                    s.queueLength shouldBe 0
                } else {
                    lock.isLocked shouldBe true
                    lock.queueLength shouldBe 0
                }
            }
        }
    }

    test("a cancellation, a close or a timeout during the waiter's spin or after it suspended ends the wait, holding nothing") {
        WaiterThread().use { waiter ->
            repeat(300) { round ->
                val s = Semaphore(1) // a fresh queue each round: its first wait spins (C5's backoff starts at none)
                s.acquire()
                runBlocking {
                    when (round % 3) {
                        0 -> {
                            val job = launch(waiter.dispatcher) { s.acquire(); error("granted although the permit is held") }
                            awaitQueued({ s.queueLength }, 1)
                            job.cancel()
                            job.join()
                            job.isCancelled shouldBe true
                        }
                        1 -> {
                            val failed = async(waiter.dispatcher) { runCatching { s.acquire() }.exceptionOrNull() }
                            awaitQueued({ s.queueLength }, 1)
                            s.close(IllegalStateException("closed in round $round"))
                            val e = failed.await()
                            (e is SemaphoreClosedException) shouldBe true
                            e!!.cause!!.message shouldBe "closed in round $round"
                        }
                        else -> {
                            val got = async(waiter.dispatcher) { s.tryAcquire(1.milliseconds) }
                            got.await() shouldBe false
                        }
                    }
                }
                s.queueLength shouldBe 0
                s.availablePermits shouldBe 0 // the test's permit only
                s.release() // a holder may release after a close, too
                s.availablePermits shouldBe 1
            }
        }
    }

    test("a cancelled waiter whose grant raced the cancellation during its spin hands the permit on") {
        WaiterThread().use { waiter ->
            repeat(300) {
                val s = Semaphore(1)
                s.acquire()
                runBlocking {
                    val job = launch(waiter.dispatcher) {
                        s.acquire()
                        s.release()
                    }
                    awaitQueued({ s.queueLength }, 1)
                    s.release() // grant and cancellation race: either the waiter ran its body or it handed back
                    job.cancel()
                    job.join()
                }
                s.queueLength shouldBe 0
                s.availablePermits shouldBe 1
            }
        }
    }
})
