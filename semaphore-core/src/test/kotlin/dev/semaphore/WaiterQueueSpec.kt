package dev.semaphore

import dev.semaphore.internal.Grantee
import dev.semaphore.internal.PermitWaiter
import dev.semaphore.internal.WaiterQueue
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicInteger
import kotlin.concurrent.thread
import kotlin.coroutines.Continuation
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.coroutines.startCoroutine
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.cancel
import kotlinx.coroutines.launch

/**
 * A bare waiter of the engine: it always claims, and records its callbacks. Its grantee is by default the
 * semaphore [q] is (nothing to record, and a hand-back is a release).
 */
private class RecordingWaiter(
    q: WaiterQueue,
    permits: Int,
    grantee: Grantee = q as QueueBackedPool,
    val onGrant: (RecordingWaiter) -> Unit = {},
) : PermitWaiter(permits, grantee) {
    var granted = 0
    var failed: Throwable? = null
    /** W2: the requester is gone (mayQueue() answers false). */
    var gone = false
    override fun tryClaim(): Boolean = true
    override fun mayQueue(): Boolean = !gone
    override fun onGranted() {
        granted++
        onGrant(this)
    }
    override fun onFailed(cause: Throwable) {
        failed = cause
    }
}

private fun queueOf(permits: Int): WaiterQueue = (Semaphore(permits) as QueueBackedPool).waiterQueue

/** Runs [block] on a thread with a 256 KiB stack; returns what it threw, or null. */
internal fun onSmallStack(block: () -> Unit): Throwable? {
    var error: Throwable? = null
    val small = Thread(null, {
        try {
            block()
        } catch (e: Throwable) {
            error = e
        }
    }, "small-stack", 256L * 1024)
    small.start()
    small.join()
    return error
}

/** The engine's waiter interface (WaiterQueue.kt, W1..W4), with a bare waiter. */
class WaiterQueueSpec : FunSpec({
    /** Holds [q]'s engine lock on a thread (a grantee told of its grant under the lock) until the returned latch opens. */
    fun holdEngineLock(q: WaiterQueue): Pair<Thread, CountDownLatch> {
        val inside = CountDownLatch(1)
        val leave = CountDownLatch(1)
        val holding = object : Grantee {
            override val queue: WaiterQueue get() = q

            override fun granted(w: PermitWaiter) {
                inside.countDown()
                leave.await()
            }
            override fun handBack(w: PermitWaiter) = w.queue.release(w.permits)
        }
        val holder = thread(isDaemon = true) { q.enqueue(RecordingWaiter(q, 1, grantee = holding)) }
        inside.await()
        return holder to leave
    }

    fun awaitParked(vararg threads: Thread) {
        val deadline = System.nanoTime() + 10_000_000_000L
        while (threads.any { it.state != Thread.State.WAITING } && System.nanoTime() < deadline) Thread.sleep(1)
        threads.map { it.state }.toSet() shouldBe setOf(Thread.State.WAITING)
    }

    test("a thread that finds the engine locked parks, and the unlock wakes it (I3)") {
        val q = queueOf(1)
        val (holder, leave) = holdEngineLock(q)
        val drained = AtomicInteger(-1)
        val other = thread(isDaemon = true) { drained.set(q.drainPermits()) } // needs the lock
        awaitParked(other) // parked, not spinning
        drained.get() shouldBe -1
        leave.countDown()
        holder.join(10_000)
        other.join(10_000)
        other.isAlive shouldBe false
        drained.get() shouldBe 0 // the holder's grant took the only permit
        q.availablePermits shouldBe 0
        q.release(1)
        q.availablePermits shouldBe 1
    }

    test("each unlock wakes one parked thread, and every parked thread gets the lock in turn (Platform.kt P1-P3)") {
        val q = queueOf(4)
        val (holder, leave) = holdEngineLock(q)
        val done = AtomicInteger()
        val others = List(6) { thread(isDaemon = true) { q.readLocked { _, _ -> done.incrementAndGet() } } }
        awaitParked(*others.toTypedArray())
        done.get() shouldBe 0
        leave.countDown()
        holder.join(10_000)
        others.forEach { it.join(10_000) }
        others.count { it.isAlive } shouldBe 0
        done.get() shouldBe 6
        q.availablePermits shouldBe 3
    }

    test("an interrupted thread parks on the engine's lock like the others and keeps its interrupt (Platform.kt P4)") {
        val q = queueOf(1)
        val (holder, leave) = holdEngineLock(q)
        val stillInterrupted = AtomicInteger(-1)
        val interrupted = thread(isDaemon = true) {
            Thread.currentThread().interrupt()
            q.readLocked { _, _ -> }
            stillInterrupted.set(if (Thread.currentThread().isInterrupted) 1 else 0)
        }
        awaitParked(interrupted) // parked, not spinning with its interrupt set
        leave.countDown()
        holder.join(10_000)
        interrupted.join(10_000)
        interrupted.isAlive shouldBe false
        stillInterrupted.get() shouldBe 1
    }

    test("enqueue grants at once when free and nobody waits (no callback), else queues") {
        val q = queueOf(2)
        val a = RecordingWaiter(q, 2)
        q.enqueue(a) shouldBe true
        a.granted shouldBe 0 // the caller holds the permits; no callback
        a.status shouldBe PermitWaiter.GRANTED
        val b = RecordingWaiter(q, 1)
        q.enqueue(b) shouldBe false
        q.queueLength shouldBe 1
        q.release(2)
        b.granted shouldBe 1
        q.availablePermits shouldBe 1
    }

    test("a waiter whose requester is gone at its offer is granted if the permits fit, else neither queued nor called back (W2)") {
        val q = queueOf(2)
        q.tryAcquirePermits(1) shouldBe true
        val early = RecordingWaiter(q, 2)
        q.cancel(early) shouldBe false // not offered yet: left to its offer
        early.status shouldBe PermitWaiter.NEW
        val left = RecordingWaiter(q, 2).apply { gone = true }
        q.enqueue(left) shouldBe false
        left.status shouldBe PermitWaiter.CANCELLED
        q.queueLength shouldBe 0 // it never stood in line, so a 1-permit newcomer is not held back (I4)
        q.tryAcquirePermits(1) shouldBe true
        q.release(2)
        left.granted shouldBe 0
        left.failed shouldBe null
        q.availablePermits shouldBe 2
        q.cancel(left) shouldBe false // dropped once
        shouldThrow<IllegalStateException> { q.enqueue(left) }.message shouldBe "this waiter was already offered to a queue"
        val fits = RecordingWaiter(q, 1).apply { gone = true }
        q.enqueue(fits) shouldBe true // the permit fits at once: granted, as a fast path would have
        fits.status shouldBe PermitWaiter.GRANTED
        q.availablePermits shouldBe 1
        q.release(1)
        q.availablePermits shouldBe 2
    }

    test("the state word at its limits: FAST and SLOW shapes, a full Int.MAX_VALUE total, debt") {
        val max = Int.MAX_VALUE
        val q = queueOf(max)
        q.tryAcquirePermits(max) shouldBe true // FAST: available 0, held MAX
        q.availablePermits shouldBe 0
        q.tryAcquirePermits(1) shouldBe false
        q.release(max) // back to available MAX, held 0
        q.availablePermits shouldBe max
        shouldThrow<IllegalStateException> { q.release(1) }.message shouldBe
            "cannot release 1 permits: $max of $max are available, so at most 0 are held"
        q.tryAcquirePermits(max - 1) shouldBe true
        q.release(max - 2)
        q.availablePermits shouldBe max - 1 // held 1
        shouldThrow<IllegalStateException> { q.release(2) }.message shouldBe
            "cannot release 2 permits: ${max - 1} of $max are available, so at most 1 are held"
        q.release(1)
        // Debt makes the word SLOW with a negative available count; releases repay it, then it is FAST again.
        q.tryAcquirePermits(3) shouldBe true
        q.reducePermits(max - 1) // total 1, held 3: available -2
        q.availablePermits shouldBe -2
        q.totalPermits shouldBe 1
        shouldThrow<IllegalArgumentException> { q.tryAcquirePermits(2) }.message shouldBe
            "a request for 2 permits can never be granted: the semaphore has only 1 permits in total"
        q.tryAcquirePermits(1) shouldBe false
        q.release(2)
        q.availablePermits shouldBe 0
        shouldThrow<IllegalStateException> { q.release(2) }.message shouldBe
            "cannot release 2 permits: 0 of 1 are available, so at most 1 are held"
        q.release(1)
        q.availablePermits shouldBe 1
        q.tryAcquirePermits(1) shouldBe true // the fast path works again
        q.release(1)
        q.addPermits(max - 1)
        q.totalPermits shouldBe max
        q.availablePermits shouldBe max
        shouldThrow<IllegalArgumentException> { q.addPermits(1) }
        q.availablePermits shouldBe max
    }

    test("I12: whatever the hint holds, a take takes exactly what is free") {
        // The hint is only the expected value of the take's first CAS: a wrong, stale or impossible one may cost
        // a failed CAS, never a permit. Each guess below is set before every take: the word as it would be with
        // other counts or another total, SLOW, locked, unsettled by an add, and values no word has.
        val guesses = listOf(
            WaiterQueue.packFast(3, 3), WaiterQueue.packFast(2, 3), WaiterQueue.packFast(1, 3), WaiterQueue.packFast(0, 3),
            WaiterQueue.packFast(5, 5), WaiterQueue.packFast(8, 3), WaiterQueue.packFast(1, 1),
            WaiterQueue.packSlow(3, -(1 shl 29)), WaiterQueue.packSlow(3, -(1 shl 30)),
            0L, -1L, Long.MAX_VALUE, Long.MIN_VALUE,
        )
        for (guess in guesses) {
            val q = queueOf(3)
            q.tryAcquirePermits(1) shouldBe true // 2 free of 3
            var taken = 0
            while (true) {
                q.hint = guess
                if (!q.tryAcquirePermits(1)) break
                taken++
            }
            taken shouldBe 2
            q.availablePermits shouldBe 0
            q.hint = guess
            q.tryAcquirePermits(2) shouldBe false
            q.hint = guess
            shouldThrow<IllegalArgumentException> { q.tryAcquirePermits(4) } // more than the total, whatever the guess
            q.addPermits(2) // now 2 free of 5
            q.hint = guess
            q.tryAcquirePermits(3) shouldBe false
            q.hint = guess
            q.tryAcquirePermits(2) shouldBe true
            repeat(5) { q.release(1) }
            shouldThrow<IllegalStateException> { q.release(1) } // every permit free: an over-release
            q.availablePermits shouldBe 5
            q.totalPermits shouldBe 5
        }
    }

    test("I12: after a missed guess takes read first, and guessing comes back within 1,024 takes") {
        val q = withoutProcessDiagnostics { queueOf(3) } // the lock-free path (I12), which observation turns off (O1)
        val idle = WaiterQueue.packFast(3, 3)
        q.hint shouldBe idle // from construction: the word with every permit free
        q.hint = WaiterQueue.packFast(2, 3) // a guess that misses: the word is idle
        q.tryAcquirePermits(1) shouldBe true
        q.hint shouldBe -1L // NO_GUESS: the miss turned guessing off
        q.release(1)
        var cycles = 0
        while (q.hint == -1L) {
            q.tryAcquirePermits(1) shouldBe true
            q.release(1)
            cycles++
            check(cycles <= 1024) { "guessing did not come back in 1,024 takes" }
        }
        q.hint shouldBe idle // the word those takes found
        q.availablePermits shouldBe 3
        // From the idle word again, every take is on the guess: the hint stays.
        repeat(100) {
            q.tryAcquirePermits(1) shouldBe true
            q.release(1)
        }
        q.hint shouldBe idle
    }

    test("I11: a release's add is kept only with a permit held, however many fail at once") {
        // Takers and givers-back of one permit race releasers that hold nothing (over-releases, whose adds land on
        // a word with every permit free and are taken back), with a slow-path step now and then (addPermits and
        // reducePermits under the lock, so adds land on the locked word too). Counting: every release that did
        // not throw gave back a permit that some take had taken, so at the end the two counts agree and every
        // permit is free; a kept add that should have failed would leave more releases than takes, or more
        // free permits than the total.
        val total = 2
        val q = queueOf(total)
        val takes = AtomicInteger()
        val releases = AtomicInteger()
        val overReleases = AtomicInteger()
        val start = CountDownLatch(1)
        val rounds = 20_000
        val takers = List(2) {
            thread {
                start.await()
                repeat(rounds) {
                    if (q.tryAcquirePermits(1)) {
                        takes.incrementAndGet()
                        try {
                            q.release(1)
                            releases.incrementAndGet()
                        } catch (e: IllegalStateException) {
                            overReleases.incrementAndGet() // an over-releaser gave this permit back first
                        }
                    }
                }
            }
        }
        val overReleasers = List(2) {
            thread {
                start.await()
                repeat(rounds) {
                    try {
                        q.release(1)
                        releases.incrementAndGet()
                    } catch (e: IllegalStateException) {
                        overReleases.incrementAndGet()
                    }
                    if (it % 64 == 0) {
                        q.addPermits(1)
                        q.reducePermits(1)
                    }
                }
            }
        }
        start.countDown()
        (takers + overReleasers).forEach { it.join() }
        releases.get() shouldBe takes.get()
        q.availablePermits shouldBe total
        q.totalPermits shouldBe total
        q.tryAcquirePermits(total) shouldBe true // and the word is FAST and settled: the fast path works
        q.release(total)
        (overReleases.get() > 0) shouldBe true // the over-releases did race (the test is not vacuous)
    }

    test("a waiter is used once") {
        val q = queueOf(1)
        val a = RecordingWaiter(q, 1)
        q.enqueue(a)
        shouldThrow<IllegalStateException> { q.enqueue(a) }
    }

    test("cancel: true while queued, false once granted, and then a hand-back returns the permits") {
        val q = queueOf(1)
        q.tryAcquirePermits(1, 0) shouldBe true
        val a = RecordingWaiter(q, 1)
        val b = RecordingWaiter(q, 1)
        q.enqueue(a) shouldBe false
        q.enqueue(b) shouldBe false
        q.cancel(b) shouldBe true
        q.cancel(b) shouldBe false
        q.release(1) // grants a
        q.cancel(a) shouldBe false // the grant won
        a.granted shouldBe 1
        b.granted shouldBe 0
        a.handBack()
        q.availablePermits shouldBe 1
        q.queueLength shouldBe 0
        shouldThrow<IllegalStateException> { b.handBack() } // never granted
    }

    test("close fails queued waiters through onFailed, outside the lock") {
        val q = queueOf(1)
        q.tryAcquirePermits(1, 0)
        val a = RecordingWaiter(q, 1)
        q.enqueue(a)
        q.close(null)
        (a.failed is SemaphoreClosedException) shouldBe true
        a.status shouldBe PermitWaiter.FAILED
    }

    test("stack safety: 100,000 waiters each releasing from its own grant callback, on a 256 KiB stack") {
        val q = queueOf(1)
        q.tryAcquirePermits(1, 0) shouldBe true
        val n = 100_000
        val granted = AtomicInteger()
        val waiters = List(n) { RecordingWaiter(q, 1) { w -> granted.incrementAndGet(); q.release(w.permits) } }
        waiters.forEach { q.enqueue(it) shouldBe false }
        onSmallStack { q.release(1) } shouldBe null // grants the first; its callback releases, which grants the next, ...
        granted.get() shouldBe n
        q.availablePermits shouldBe 1
        q.queueLength shouldBe 0
    }

    test("stack safety: 100,000 coroutines with no dispatcher (resumed inline), each releasing, on a 256 KiB stack") {
        // Without a CoroutineDispatcher kotlinx resumes a continuation inline, with no event loop to
        // flatten nested resumes: those wakes must go through the trampoline (I7).
        val s = Semaphore(1)
        s.tryAcquire() shouldBe true
        val n = 100_000
        val finished = AtomicInteger()
        repeat(n) {
            suspend {
                s.acquire()
                s.release()
            }.startCoroutine(Continuation(EmptyCoroutineContext) { r -> r.getOrThrow(); finished.incrementAndGet() })
        }
        s.queueLength shouldBe n
        onSmallStack { s.release() } shouldBe null // resumes the first inline; it releases, which resumes the next, ...
        finished.get() shouldBe n
        s.availablePermits shouldBe 1
        s.queueLength shouldBe 0
    }

    test("stack safety: 100,000 coroutines on Dispatchers.Unconfined (resumed in place), each releasing, on a 256 KiB stack") {
        // A grant to an unconfined coroutine resumes it in place (Suspending.kt, C2), not through kotlinx's unconfined
        // event loop: those wakes must go through the trampoline (I7).
        val s = Semaphore(1)
        s.tryAcquire() shouldBe true
        val n = 100_000
        val finished = AtomicInteger()
        val scope = CoroutineScope(Dispatchers.Unconfined + Job())
        repeat(n) {
            scope.launch {
                s.acquire()
                s.release()
                finished.incrementAndGet()
            }
        }
        s.queueLength shouldBe n
        onSmallStack { s.release() } shouldBe null // resumes the first in place; it releases, which resumes the next, ...
        finished.get() shouldBe n
        s.availablePermits shouldBe 1
        s.queueLength shouldBe 0
        scope.cancel()
    }

    test("callbacks run outside the lock: a callback may use the queue (tryAcquire, queueLength)") {
        val q = queueOf(2)
        q.tryAcquirePermits(2, 0)
        var seen = -1
        val a = RecordingWaiter(q, 1) { seen = q.queueLength; q.tryAcquirePermits(1, 0) shouldBe false }
        val b = RecordingWaiter(q, 2)
        q.enqueue(a)
        q.enqueue(b)
        q.release(1)
        seen shouldBe 1 // b still queued
        q.release(1) // 1 free, b wants 2
        q.queueLength shouldBe 1
        q.release(1) // a releases: 2 free -> b
        b.granted shouldBe 1
    }

    test("the count of lock-free takes is laid out in the 8 bytes after the word (Platform.kt), and counts") {
        // Its write should land on the cache line the take's CAS took: docs/profiles.md, "The Java rows with 8 permits".
        val unsafe = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe").apply { isAccessible = true }.get(null)
        val offsetOf = unsafe.javaClass.getMethod("objectFieldOffset", java.lang.reflect.Field::class.java)
        val cell = Class.forName("dev.semaphore.internal.AtomicStateCell")
        val word = offsetOf.invoke(unsafe, cell.getDeclaredField("word")) as Long
        val count = offsetOf.invoke(unsafe, cell.getDeclaredField("freeAcquired")) as Long
        (count - word) shouldBe 8L
        val s = Semaphore(2)
        repeat(5) {
            s.tryAcquire() shouldBe true
            s.release()
        }
        s.snapshot().acquired shouldBe 5L
    }

    test("concurrent enqueue, cancel and release on real threads conserve permits") {
        val q = queueOf(3)
        val threads = List(4) { t ->
            thread {
                val rnd = java.util.Random(t.toLong())
                repeat(20_000) {
                    val w = RecordingWaiter(q, 1 + rnd.nextInt(3)) { it2 -> q.release(it2.permits) }
                    if (q.enqueue(w)) {
                        q.release(w.permits)
                    } else if (rnd.nextBoolean()) {
                        // Either removed (nothing held) or granted (its callback released): both leave nothing.
                        q.cancel(w)
                    }
                }
            }
        }
        threads.forEach { it.join() }
        // Waiters left queued are granted by the releases of the others; at quiescence nobody waits.
        q.queueLength shouldBe 0
        q.availablePermits shouldBe 3
    }
})
