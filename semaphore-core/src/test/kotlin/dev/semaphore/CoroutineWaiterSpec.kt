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
})
