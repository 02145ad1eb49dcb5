package dev.semaphore

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.Job
import kotlinx.coroutines.delay
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import java.lang.ref.WeakReference
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong
import kotlin.coroutines.Continuation
import kotlin.coroutines.startCoroutine
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * A coroutine's waiter serving its next waits on a Semaphore (internal/Suspending.kt, C4): every wait below after the
 * first one of a coroutine on its thread takes the waiter of the wait before, so these check what C4's rules protect.
 * A cancellation between two waits, during one, or while the next one starts; a Job shared by two coroutines; many
 * coroutines cancelled at random while they wait again and again; and that a thread's kept waiter does not keep a
 * finished coroutine's Job.
 */
@OptIn(ExperimentalCoroutinesApi::class)
class ReusedWaiterSpec : FunSpec({
    test("a coroutine cancelled while it waits again is woken with its cancellation, and the permit goes to the next") {
        runBlocking {
            val s = Semaphore(1)
            s.acquire()
            val grants = AtomicInteger()
            val waiter = launch {
                while (true) {
                    s.acquire() // every wait after the first takes the waiter of the one before
                    grants.incrementAndGet()
                }
            }
            yield()
            repeat(3) { i ->
                s.queueLength shouldBe 1
                s.release()
                while (grants.get() <= i) yield()
            }
            s.queueLength shouldBe 1 // the fourth wait, with the reused waiter
            waiter.cancel()
            waiter.join()
            waiter.isCancelled shouldBe true
            s.queueLength shouldBe 0
            // Each of the body's 3 releases was handed to the waiter, which never released: none is free.
            s.availablePermits shouldBe 0
            s.release()
            s.availablePermits shouldBe 1
            s.tryAcquire() shouldBe true
            s.release()
        }
    }

    test("cancelled between two waits: the next wait fails without queueing, the permits stay right") {
        runBlocking {
            val s = Semaphore(1)
            s.acquire()
            var step = ""
            var queuedWhenFailed = -1
            val job = launch {
                s.acquire() // 1st wait: queued, then granted by the body's release; its waiter is kept for this Job
                s.acquire() // 2nd wait: queued again (no permit is free), with the same waiter
                step = "granted twice"
                try {
                    delay(Long.MAX_VALUE) // cancelled here, between waits
                } finally {
                    s.release()
                    s.acquire() // the permit is free: taken at once, with no check for cancellation
                    step = "took the free permit while cancelled"
                    s.tryAcquire() shouldBe false
                    try {
                        s.acquire() // 4th: must wait, and the Job is cancelled: fails at once, never queued
                        step = "wrong: granted"
                    } catch (e: CancellationException) {
                        queuedWhenFailed = s.queueLength
                        step = "4th wait failed"
                    }
                    s.release()
                }
            }
            yield()
            s.queueLength shouldBe 1
            s.release() // 1st grant
            while (s.queueLength == 0) yield() // the 2nd wait
            s.release() // 2nd grant
            while (step != "granted twice") yield()
            job.cancel()
            job.join()
            step shouldBe "4th wait failed"
            queuedWhenFailed shouldBe 0
            s.queueLength shouldBe 0
            s.availablePermits shouldBe 1
        }
    }

    test("two coroutines that share one Job on one thread each get a waiter of their own, and its cancellation wakes both") {
        val s = Semaphore(2)
        s.tryAcquire(2) shouldBe true
        val shared = Job()
        val results = arrayOfNulls<Result<Unit>>(2)
        val rounds = AtomicInteger()
        // No dispatcher: each coroutine runs on the thread that resumes it (this one), as two raw coroutines.
        for (i in 0..1) {
            suspend {
                s.acquire() // the first: made and kept for `shared`; the second: the kept one is in use, so its own
                rounds.incrementAndGet()
                s.acquire() // both wait again: the first takes the kept waiter, the second cannot (in use)
                Unit
            }.startCoroutine(Continuation(shared) { results[i] = it })
        }
        s.queueLength shouldBe 2
        s.release(2) // both granted, in order; each resumes here and waits again
        rounds.get() shouldBe 2
        s.queueLength shouldBe 2
        results[0] shouldBe null
        results[1] shouldBe null
        s.release(2)
        s.queueLength shouldBe 0
        results[0] shouldBe Result.success(Unit)
        results[1] shouldBe Result.success(Unit)
        s.availablePermits shouldBe 0
        s.release(2)
        // A third round that waits, cancelled by the shared Job.
        for (i in 0..1) {
            results[i] = null
            s.tryAcquire() shouldBe true
        }
        for (i in 0..1) {
            suspend { s.acquire() }.startCoroutine(Continuation(shared) { results[i] = it })
        }
        s.queueLength shouldBe 2
        shared.cancel()
        s.queueLength shouldBe 0
        results[0]!!.exceptionOrNull().shouldBeInstanceOf<CancellationException>()
        results[1]!!.exceptionOrNull().shouldBeInstanceOf<CancellationException>()
        s.availablePermits shouldBe 0
        s.release(2)
        s.availablePermits shouldBe 2
    }

    /*
     * A storm per primitive whose waits reuse waiters: a Semaphore of 1-3 permits, a Lock without owner, and a
     * ReadWriteLock's reads and writes (a coroutine alternates, so its cached waiter is often replaced too). 24
     * coroutines wait again and again, some through a timed try (its own Job per call), while the body cancels
     * some of them at random; on Unconfined, runBlocking's loop and Default. A checker counts who is inside.
     */
    for (kind in listOf("semaphore", "lock", "readWrite")) {
        test("$kind: coroutines that wait again and again while others cancel them at random: never too many inside, nothing lost") {
            for (seed in 1L..6L) storm(kind, seed)
        }
    }

    test("the waiter a thread keeps does not keep the Job of a coroutine that finished") {
        val s = Semaphore(1)
        var jobRef: WeakReference<Job>? = null
        runBlocking {
            s.acquire()
            val job = launch(start = CoroutineStart.UNDISPATCHED) {
                s.acquire() // made and kept by this thread's cache, registered on this Job
                s.release()
            }
            jobRef = WeakReference(job)
            s.release()
            job.join()
        }
        // The coroutine finished: its Job's handler retired the kept waiter (dropped its Job and continuation).
        isCollectedSoon(jobRef!!) shouldBe true
        s.availablePermits shouldBe 1
    }

    test("the waiter a thread keeps does not keep the Job of a coroutine cancelled during its wait") {
        val s = Semaphore(1)
        var jobRef: WeakReference<Job>? = null
        runBlocking {
            s.acquire()
            val job = launch(start = CoroutineStart.UNDISPATCHED) {
                s.acquire() // waits on this thread's kept waiter, registered on this Job
                error("not granted: cancelled first")
            }
            jobRef = WeakReference(job)
            job.cancel() // the handler runs during the wait: the waiter is not idle then, so it is not retired there
            job.join()
            s.release()
        }
        // The wait's end saw its Job no longer active and retired the waiter itself.
        isCollectedSoon(jobRef!!) shouldBe true
        s.availablePermits shouldBe 1
        s.queueLength shouldBe 0
    }
})

/** Rounds per coroutine of a storm: 100 in the default build, more with -Pstress (stress.scale 5: 500). */
private val rounds = 100 * stressScale

/** One storm of ReusedWaiterSpec: [kind] is "semaphore", "lock" or "readWrite". */

private fun storm(kind: String, seed: Long) {
    val random = Random(seed)
    val permits = if (kind == "semaphore") 1 + (seed % 3).toInt() else 1
    val s = Semaphore(permits)
    val lock = Lock()
    val rw = ReadWriteLock()
    val inside = AtomicInteger()
    val writers = AtomicInteger()
    val most = AtomicInteger()
    val grants = AtomicLong()
    val context = when (seed % 3) {
        0L -> Dispatchers.Default
        1L -> Dispatchers.Unconfined
        else -> kotlin.coroutines.EmptyCoroutineContext // runBlocking's own loop
    }
    runBlocking {
        withTimeout(60.seconds) {
            val workers = List(24) { w ->
                launch(context) {
                    val r = Random(seed * 100 + w)
                    repeat(rounds) {
                        val timed = r.nextInt(4) == 0
                        val write = kind == "readWrite" && r.nextInt(3) == 0
                        val got = when (kind) {
                            "semaphore" -> if (timed) s.tryAcquire(20.milliseconds) else { s.acquire(); true }
                            "lock" -> if (timed) lock.tryLock(20.milliseconds) else { lock.lock(); true }
                            else -> if (write) { rw.lockWrite(); true } else if (timed) rw.tryLockRead(20.milliseconds) else { rw.lockRead(); true }
                        }
                        if (!got) return@repeat
                        try {
                            val now = inside.incrementAndGet()
                            if (write) writers.incrementAndGet()
                            if (kind != "readWrite") most.accumulateAndGet(now) { x, y -> maxOf(x, y) }
                            if (writers.get() > 0 && inside.get() > 1) most.set(Int.MAX_VALUE) // a writer is not alone
                            grants.incrementAndGet()
                            // Unconfined's yield() may not suspend; a delay does, so the others queue
                            if (r.nextInt(4) == 0) delay(1) else yield()
                        } finally {
                            if (write) writers.decrementAndGet()
                            inside.decrementAndGet()
                            when (kind) {
                                "semaphore" -> s.release()
                                "lock" -> lock.unlock()
                                else -> if (write) rw.unlockWrite() else rw.unlockRead()
                            }
                        }
                    }
                }
            }
            repeat(200) {
                yield()
                val victim = workers[random.nextInt(workers.size)]
                if (random.nextInt(8) == 0) victim.cancel()
                if (random.nextInt(20) == 0) delay(1)
            }
            workers.joinAll() // each ends after its rounds, or cancelled: a wait that never ends fails here
        }
    }
    most.get() shouldBeLessThanOrEqual permits
    (grants.get() > 0) shouldBe true
    when (kind) {
        "semaphore" -> {
            s.queueLength shouldBe 0
            s.availablePermits shouldBe permits
        }
        "lock" -> {
            lock.queueLength shouldBe 0
            lock.isLocked shouldBe false
        }
        else -> {
            rw.queueLength shouldBe 0
            rw.tryLockWrite() shouldBe true // nothing is held
            rw.unlockWrite()
        }
    }
}

/** True once [ref]'s object is collected: up to 50 collections, 20 ms apart. */
private fun isCollectedSoon(ref: WeakReference<*>): Boolean {
    repeat(50) {
        System.gc()
        if (ref.get() == null) return true
        Thread.sleep(20)
    }
    return false
}
