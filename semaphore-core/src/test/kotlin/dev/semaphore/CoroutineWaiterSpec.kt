package dev.semaphore

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.asContextElement
import kotlinx.coroutines.async
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import dev.semaphore.internal.acquireSuspending
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.Job
import kotlin.coroutines.Continuation
import kotlin.coroutines.cancellation.CancellationException
import kotlin.coroutines.startCoroutine

/**
 * How a queued coroutine is resumed (internal/Suspending.kt, C2): dispatched as the waiter itself, or,
 * with thread-context elements or without a dispatch, through the interceptor's own continuation; both
 * must keep the context and every permit. (A dispatcher that refuses: RefusingDispatcherSpec.)
 */
@OptIn(kotlinx.coroutines.DelicateCoroutinesApi::class)
class CoroutineWaiterSpec : FunSpec({
    test("a thread-context element of the waiting coroutine is in place when it resumes after a grant") {
        val name = ThreadLocal<String?>()
        val s = Semaphore(1)
        s.tryAcquire() shouldBe true
        val seen = GlobalScope.async(Dispatchers.Default + name.asContextElement("waiter")) {
            s.acquire()
            val v = name.get()
            s.release()
            v
        }
        while (s.queueLength == 0) Thread.yield()
        name.get() shouldBe null
        s.release()
        runBlocking { seen.await() } shouldBe "waiter"
        name.get() shouldBe null // the releasing thread's own value is untouched
        s.availablePermits shouldBe 1
    }

    test("a coroutine on Dispatchers.Unconfined resumes on the releasing thread, holding the permit") {
        val s = Semaphore(1)
        s.tryAcquire() shouldBe true
        var resumedOn: Thread? = null
        val job = GlobalScope.launch(Dispatchers.Unconfined, CoroutineStart.UNDISPATCHED) {
            s.acquire()
            resumedOn = Thread.currentThread()
        }
        s.queueLength shouldBe 1
        s.release()
        resumedOn shouldBe Thread.currentThread()
        job.isCompleted shouldBe true
        s.availablePermits shouldBe 0 // held by the coroutine, which returned without releasing
        s.release()
        s.availablePermits shouldBe 1
    }

    test("a Job cancelled after the grant but before the dispatched coroutine runs hands the permit back") {
        runBlocking {
            val s = Semaphore(1)
            s.tryAcquire() shouldBe true
            var acquired = false
            val job = launch { // runBlocking's event loop: the grant's dispatch waits until this block yields
                s.acquire()
                acquired = true
            }
            yield() // job suspends in acquire()
            s.queueLength shouldBe 1
            s.release() // granted and dispatched, not run yet
            s.availablePermits shouldBe 0
            job.cancel()
            job.join()
            acquired shouldBe false
            s.availablePermits shouldBe 1 // W3: handed back, not lost
        }
    }

    /*
     * The offer of a coroutine whose Job is already cancelled (its fast path failed, then the Job was
     * cancelled, so the offer comes after): permits that fit are granted, as the fast path would have,
     * and a request that would have to wait fails at once without standing in line (W2, Suspending.kt).
     * acquireSuspending is the slow path on its own, so the fit at the offer does not need a race.
     */
    test("a coroutine already cancelled gets permits that fit at its offer, and never stands in line for ones that do not") {
        val s = Semaphore(2)
        val pool = s as QueueBackedPool
        val cancelled = Job().apply { cancel() }
        fun offer(n: Int): Result<Unit>? {
            var outcome: Result<Unit>? = null
            suspend { pool.acquireSuspending(n, 0, pool) }.startCoroutine(Continuation(cancelled) { outcome = it })
            return outcome // no interceptor: a coroutine that does not suspend has finished here
        }
        s.tryAcquire() shouldBe true
        offer(1) shouldBe Result.success(Unit) // 1 of 1 free: granted, no CancellationException
        s.availablePermits shouldBe 0
        offer(1)!!.exceptionOrNull().shouldBeInstanceOf<CancellationException>() // would wait: cancelled at once
        s.queueLength shouldBe 0
        s.availablePermits shouldBe 0
        s.release(2)
        s.availablePermits shouldBe 2
        offer(2) shouldBe Result.success(Unit)
        s.availablePermits shouldBe 0
    }

    test("a Lock already cancelled at its offer: taken if free, else cancelled without queueing") {
        val lock = Lock() as LockImpl
        val cancelled = Job().apply { cancel() }
        fun offer(owner: Any): Result<Unit>? {
            var outcome: Result<Unit>? = null
            suspend { lock.waiterQueue.acquireSuspending(1, 0, lock.Hold(owner)) }
                .startCoroutine(Continuation(cancelled) { outcome = it })
            return outcome
        }
        offer("a") shouldBe Result.success(Unit)
        lock.holdsLock("a") shouldBe true
        offer("b")!!.exceptionOrNull().shouldBeInstanceOf<CancellationException>()
        lock.queueLength shouldBe 0
        lock.holdsLock("b") shouldBe false
        lock.unlock("a")
        lock.isLocked shouldBe false
    }
})
