package dev.semaphore

import io.kotest.assertions.throwables.shouldThrowAny
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.DelicateCoroutinesApi
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.launch
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.CoroutineContext

/** A dispatcher that runs tasks on Dispatchers.Default until [refuse] is set, then throws from dispatch. */
private class RefusingDispatcher : CoroutineDispatcher() {
    val refuse = AtomicBoolean(false)

    /** Tasks that ran and returned: a launched coroutine's first task returns once it has suspended. */
    val returned = AtomicInteger()

    override fun dispatch(context: CoroutineContext, block: Runnable) {
        if (refuse.get()) throw RejectedExecutionException("refused by the test")
        Dispatchers.Default.dispatch(context, Runnable {
            try {
                block.run()
            } finally {
                returned.incrementAndGet()
            }
        })
    }

    /**
     * Waits until [n] launched coroutines have suspended: past their spin for a grant (Suspending.kt, C5), so a
     * release now has to wake them through this dispatcher rather than find one still spinning.
     */
    fun awaitSuspended(n: Int) {
        while (returned.get() < n) Thread.yield()
    }
}

private fun Throwable.isRefusal(): Boolean = this is RejectedExecutionException || cause?.isRefusal() == true

@OptIn(DelicateCoroutinesApi::class)
class RefusingDispatcherSpec : FunSpec({
    test("a dispatcher that refuses a granted coroutine's wake: release() reports it, and the permit is not lost") {
        val dispatcher = RefusingDispatcher()
        val s = Semaphore(1)
        s.tryAcquire() shouldBe true
        val job = GlobalScope.launch(dispatcher) { s.acquire() }
        while (s.queueLength == 0) Thread.yield()
        dispatcher.awaitSuspended(1)
        dispatcher.refuse.set(true)
        shouldThrowAny { s.release() }.isRefusal() shouldBe true
        s.availablePermits shouldBe 1 // the coroutine can never run on that dispatcher: the grant came back
        s.queueLength shouldBe 0
        job.cancel()
    }

    test("10,000 coroutines of a dispatcher that starts refusing: one release hands them all back in a loop, on a 256 KiB stack") {
        val dispatcher = RefusingDispatcher()
        val s = Semaphore(1)
        s.tryAcquire() shouldBe true
        val n = 10_000
        val jobs = List(n) { GlobalScope.launch(dispatcher) { s.acquire() } }
        while (s.queueLength < n) Thread.yield()
        dispatcher.awaitSuspended(n)
        dispatcher.refuse.set(true)
        val error = onSmallStack { s.release() } // each hand-back grants the next, which is refused too
        (error != null && error.isRefusal()) shouldBe true
        error!!.suppressed.size shouldBe n - 1 // every later refusal is reported with the first
        s.availablePermits shouldBe 1
        s.queueLength shouldBe 0
        jobs.forEach { it.cancel() }
    }

    test("the same for a Lock: the refused holder is cleared, so the lock is free") {
        val dispatcher = RefusingDispatcher()
        val lock = Lock()
        lock.tryLock("main") shouldBe true
        val job = GlobalScope.launch(dispatcher) { lock.lock("refused") }
        while (lock.queueLength == 0) Thread.yield()
        dispatcher.awaitSuspended(1)
        dispatcher.refuse.set(true)
        shouldThrowAny { lock.unlock("main") }.isRefusal() shouldBe true
        lock.isLocked shouldBe false
        lock.holdsLock("refused") shouldBe false
        job.cancel()
    }
})
