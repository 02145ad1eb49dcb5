/*
 * Lincheck (model checking and stress) for cancellation through the coroutine's Job: Semaphore(1),
 * Semaphore(2) and Lock with owners.
 *
 * Why it exists: Lincheck's own cancellation (@Operation(cancellableOnSuspension = true)) cancels the
 * CancellableContinuation it finds at the suspension point. The engine's coroutine waiter suspends
 * without one (Suspending.kt): it hooks the coroutine's Job. So the Lincheck tests of this module
 * cancel acquisitions the way an application does, through their Job, cancelled from another thread:
 *  - here, every acquisition runs with a Job() of the test object as its Job, and the operation
 *    cancelJob() (run once) cancels it;
 *  - in SemaphoreLincheckTest, LockLincheckTest, PrioritySemaphoreLincheckTest and
 *    ReadWriteLockLincheckTest, the acquisitions "in Job" run in a SharedJob that the run-once
 *    cancelJob() cancels, beside acquisitions outside any Job of the test.
 * This file adds fixed scenarios for the windows of W2 and W3.
 *
 * An acquisition (inJob) runs acquire()/lock() in the operation's own coroutine, its context plus
 * `job` and a DispatchThroughLincheck, and returns OK if it returned (the permits are held), or
 * CANCELLED if it threw CancellationException (nothing is held); never an exception. Once the Job
 * is cancelled, a later acquisition still succeeds if its permits fit, on the fast path or at its
 * offer (acquire() does not check cancellation when it need not suspend), and one that must wait is
 * cancelled at once, without standing in line (W2). Three simpler designs fail on the current engine, not for a lost
 * permit but because the sequential model (the same code run by Lincheck one operation at a time)
 * cannot produce what a concurrent run legally does, or because the cancellation never arrives:
 *  - withContext(job) { acquire() }: withContext refuses to start in a cancelled Job, but an
 *    acquisition that started just before the cancellation still takes a free permit on the fast
 *    path. Found at once: parallel: cancelJob(): ok, release(): misuse | acquire in the Job: ok.
 *  - Lincheck's own interceptor (the one in the operation's context): it wraps every continuation in
 *    one whose context carries a Job of Lincheck's, which a CancellableContinuation takes as its
 *    parent: cancelling the coroutine's Job never reaches the waiter (the acquisition hangs).
 *  - an interceptor that is not a dispatcher: kotlinx then checks the Job only when a resume beats
 *    the suspension (CancellableContinuationImpl.getResult), not when it comes later, so a grant
 *    followed by the cancellation ends CANCELLED concurrently but OK sequentially:
 *      init: tryAcquire(): true
 *      parallel: acquire in the Job: cancelled, tryAcquire(): true | release(): ok | cancelJob(): ok (after the release)
 *    With a dispatcher kotlinx checks at dispatch too (DispatchedTask.run, prompt cancellation), so
 *    both outcomes exist sequentially, and a Job cancelled between the claim (W1) and the wake is
 *    W3's hand-back. DispatchThroughLincheck hands each dispatched task to the thread that runs the
 *    suspended operation, through Lincheck's interceptor, so every step stays on Lincheck's threads
 *    and a coroutine always resumes on the thread it suspended on (Lincheck's traces need that).
 *
 * Semaphore(2) acquires 1 or 2 permits. On the engine of 818fa37 this test found a window (not a
 * lost permit): a coroutine whose Job was cancelled before it enqueued stood in line for a moment
 * (its cancellation handler was registered after the offer, and removed it at once), and a 2-permit
 * request standing there made a 1-permit newcomer wait (I4), which no sequential order explains:
 *   init: tryAcquire(1): true, cancelJob(): ok
 *   parallel: acquire(1) in the Job: cancelled | acquire(2) in the Job: cancelled
 * Sequentially acquire(1) succeeds on the fast path. Fixed by registering the handler before the
 * offer, and now by the offer's own question (mayQueue, WaiterQueue.kt W2); kept as the fixed
 * scenario semaphore2CancelledBeforeOffer.
 *
 * availablePermits / isLocked are the observers that make a lost or doubled permit visible. At rest
 * (@Validate), besides the checks of the other tests: once the Job is cancelled nothing may be
 * queued (W2); with 1-permit requests a waiter that W2 failed to remove is invisible to the results.
 * Two fixed scenarios (semaphore1HandBack, lockHandBack) model-check the windows of W3: a held permit
 * released while the Job is cancelled and an acquisition waits or is about to.
 *
 * Sizes: jobMcOptions()/jobStressOptions() and JOB_FIXED_INVOCATIONS for each fixed scenario (LincheckSizes.kt):
 * 36 s in all by default on 2 cores at a load average of about 5.
 */
package dev.semaphore.verification

import dev.semaphore.Lock
import dev.semaphore.Semaphore
import dev.semaphore.internal.WaiterQueueOwner
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Job
import org.jetbrains.kotlinx.lincheck.annotations.Operation
import org.jetbrains.kotlinx.lincheck.annotations.Param
import org.jetbrains.kotlinx.lincheck.annotations.Validate
import org.jetbrains.kotlinx.lincheck.check
import org.jetbrains.kotlinx.lincheck.paramgen.IntGen
import org.junit.jupiter.api.Test
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.Continuation
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.coroutines.cancellation.CancellationException
import kotlin.coroutines.intrinsics.startCoroutineUninterceptedOrReturn
import kotlin.coroutines.intrinsics.suspendCoroutineUninterceptedOrReturn
import kotlin.coroutines.resume

/** Result of an acquisition whose Job was cancelled before it acquired: nothing is held. */
const val CANCELLED = "cancelled"

/**
 * A dispatcher that hands every task to the thread of the suspended operation through Lincheck's
 * interceptor [lincheck]: kotlinx resumes through DispatchedTask.run, with its prompt-cancellation
 * check, and the engine wakes the waiter directly (I7), as with any dispatcher.
 */
internal class DispatchThroughLincheck(private val lincheck: ContinuationInterceptor) : CoroutineDispatcher() {
    override fun isDispatchNeeded(context: CoroutineContext): Boolean = true
    override fun dispatch(context: CoroutineContext, block: Runnable) =
        lincheck.interceptContinuation(Continuation<Unit>(context) { block.run() }).resume(Unit)
}

/**
 * Runs [acquire] in the calling operation's coroutine, with [job] as its Job and a
 * DispatchThroughLincheck as its dispatcher. Unlike withContext(job), it neither checks [job] before
 * [acquire] nor throws after it returned: OK if [acquire] returned (held), CANCELLED if it threw
 * CancellationException (nothing held). Misuse propagates (to [outcome]).
 */
internal suspend fun inJob(job: Job, acquire: suspend () -> Unit): Any? = try {
    suspendCoroutineUninterceptedOrReturn { op ->
        // Lincheck's interceptor is missing only in the post part (a plain completion): it runs alone, nothing to hand over.
        val lincheck = op.context[ContinuationInterceptor]
        val context = op.context + job + (lincheck?.let(::DispatchThroughLincheck) ?: EmptyCoroutineContext)
        acquire.startCoroutineUninterceptedOrReturn(Continuation(context) { op.resumeWith(it) })
    }
    OK
} catch (e: CancellationException) {
    CANCELLED
}

/**
 * The Job that a test object's acquisitions in [acquire] run in (inJob), for tests whose other
 * acquisitions run outside it, and the number of those acquisitions not finished yet: the check at
 * rest then sees W2 exactly (once the Job is cancelled, none of them may still wait), where the
 * queue's length cannot tell whose waiters are queued.
 *
 * cancel() is run once per scenario (a second cancel() of the same Job would do nothing). The
 * operations are linearizable because an acquisition decides at one point, its offer, under the
 * queue's lock: whose Job was cancelled between its failed fast path and its offer, it is granted if
 * the permits fit there, and else cancelled without standing in line (Suspending.kt). When such an
 * offer ended CANCELLED with permits free instead (kotlinx's Semaphore does that), -Pstress found
 * runs that no sequential order explains, in PrioritySemaphoreLincheckTest:
 *   init: tryAcquire(0, 1)
 *   parallel: addPermits, addPermits | availablePermits(): 2, cancelJob() | acquire(1, 1), acquireInJob(1, 1): cancelled
 */
class SharedJob {
    private val job = Job()
    private val unfinished = AtomicInteger()

    /** [acquire] in the shared Job: inJob's OK or CANCELLED; misuse propagates. */
    suspend fun acquire(acquire: suspend () -> Unit): Any? {
        unfinished.incrementAndGet()
        try {
            return inJob(job, acquire)
        } finally {
            unfinished.decrementAndGet()
        }
    }

    /** Cancels the Job, from the thread that runs this operation. */
    fun cancel(): Any = job.cancel().let { OK }

    /** W2 at rest: once the Job is cancelled, none of its acquisitions still waits. */
    fun checkAtRest() = check(!job.isCancelled || unfinished.get() == 0) {
        "the Job is cancelled, but ${unfinished.get()} of its acquisitions still wait"
    }
}

/** Semaphore(1), requests of 1 permit; acquisitions in one shared Job. */
class JobSemaphore1 {
    private val s = Semaphore(1)
    private val job = Job()

    @Operation(cancellableOnSuspension = false) // cancelled through the Job only
    suspend fun acquireInJob() = outcome { inJob(job) { s.acquire(1) } }

    @Operation(runOnce = true)
    fun cancelJob() = job.cancel().let { OK }

    @Operation
    fun tryAcquire() = outcome { s.tryAcquire(1) }

    @Operation
    fun release() = outcome { s.release(1); OK }

    @Operation
    fun availablePermits() = s.availablePermits

    /** At rest: available <= total (I1), a queued head never fits (I5), and a cancelled Job left nobody queued (W2). */
    @Validate
    fun atRest() {
        val q = (s as WaiterQueueOwner).waiterQueue
        check(q.availablePermits <= q.totalPermits) { "$q" }
        check(q.queueLength == 0 || q.availablePermits < 1) { "a queued request fits: $q" }
        check(!job.isCancelled || q.queueLength == 0) { "the Job is cancelled, but waiters are still queued: $q" }
    }
}

/**
 * Semaphore(2): acquisitions, tryAcquire and release of 1 or 2 permits, the acquisitions in one
 * shared Job (a release(2) grants two waiters in one step, so their wakes form one chain).
 */
class JobSemaphore2 {
    private val s = Semaphore(2)
    private val job = Job()

    @Operation(cancellableOnSuspension = false) // cancelled through the Job only
    suspend fun acquireInJob(@Param(gen = IntGen::class, conf = "1:2") n: Int) = outcome { inJob(job) { s.acquire(n) } }

    @Operation(runOnce = true)
    fun cancelJob() = job.cancel().let { OK }

    @Operation
    fun tryAcquire(@Param(gen = IntGen::class, conf = "1:2") n: Int) = outcome { s.tryAcquire(n) }

    @Operation
    fun release(@Param(gen = IntGen::class, conf = "1:2") n: Int) = outcome { s.release(n); OK }

    @Operation
    fun availablePermits() = s.availablePermits

    /** At rest: available <= total (I1), no queued head fits (I5: with 2 free), and a cancelled Job left nobody queued (W2). */
    @Validate
    fun atRest() {
        val q = (s as WaiterQueueOwner).waiterQueue
        check(q.availablePermits <= q.totalPermits) { "$q" }
        check(q.queueLength == 0 || q.availablePermits < 2) { "a queued request fits: $q" } // a queued 2-permit head may wait with 1 free
        check(!job.isCancelled || q.queueLength == 0) { "the Job is cancelled, but waiters are still queued: $q" }
    }
}

/** Lock with owners (OWNERS: 0 is no owner, misuse is MISUSE); acquisitions in one shared Job. */
@Param(name = "owner", gen = IntGen::class, conf = "0:2")
class JobLock {
    private val lock = Lock()
    private val job = Job()

    @Operation(cancellableOnSuspension = false) // cancelled through the Job only
    suspend fun lockInJob(@Param(name = "owner") o: Int) = outcome { inJob(job) { lock.lock(OWNERS[o]) } }

    @Operation(runOnce = true)
    fun cancelJob() = job.cancel().let { OK }

    @Operation
    fun tryLock(@Param(name = "owner") o: Int) = outcome { lock.tryLock(OWNERS[o]) }

    @Operation
    fun unlock(@Param(name = "owner") o: Int) = outcome { lock.unlock(OWNERS[o]); OK }

    @Operation
    fun isLocked() = lock.isLocked

    /** At rest: at most one holder, a free lock has nobody queued, and a cancelled Job left nobody queued (W2). */
    @Validate
    fun atRest() {
        val a = lock.holdsLock(OWNERS[1]!!)
        val b = lock.holdsLock(OWNERS[2]!!)
        check(!(a && b)) { "two holders" }
        if (!lock.isLocked) check(lock.queueLength == 0 && !a && !b) { "free lock with queue ${lock.queueLength}, holders A=$a B=$b" }
        check(!job.isCancelled || lock.queueLength == 0) { "the Job is cancelled, but ${lock.queueLength} waiters are still queued" }
    }
}

class JobCancellationLincheckTest {
    @Test
    fun semaphore1ModelChecking() = jobMcOptions().check(JobSemaphore1::class)

    @Test
    fun semaphore1Stress() = jobStressOptions().check(JobSemaphore1::class)

    @Test
    fun semaphore2ModelChecking() = jobMcOptions().check(JobSemaphore2::class)

    @Test
    fun semaphore2Stress() = jobStressOptions().check(JobSemaphore2::class)

    @Test
    fun lockModelChecking() = jobMcOptions().check(JobLock::class)

    @Test
    fun lockStress() = jobStressOptions().check(JobLock::class)

    /*
     * The windows of W3 in fixed scenarios (random ones reach them only now and then): a held permit
     * is released while the Job is cancelled and an acquisition waits or is about to. Model checking
     * explores the grant at enqueue to a coroutine already cancelled, the resume that beats the
     * suspension, and the Job cancelled after the claim but before the dispatched wake runs; the
     * acquiring thread's next operation sees a permit that was neither taken nor handed back.
     * (Lincheck allows no operation after the parallel part of a scenario with suspending operations.)
     */
    @Test
    fun semaphore1HandBack() = checkOnly(JobSemaphore1::class, JOB_FIXED_INVOCATIONS) {
        initial { actor(JobSemaphore1::tryAcquire) }
        parallel {
            thread { actor(JobSemaphore1::acquireInJob); actor(JobSemaphore1::tryAcquire) }
            thread { actor(JobSemaphore1::release) }
            thread { actor(JobSemaphore1::cancelJob) }
        }
    }

    /**
     * The offer decides (see SharedJob): the fast path fails, the permit is released, availablePermits()
     * sees it, then the Job is cancelled, then the offer comes. Ending CANCELLED there would need the
     * acquisition after cancelJob() yet before the release; it must take the permit.
     */
    @Test
    fun semaphore1OfferAfterTheCancellation() = checkOnly(JobSemaphore1::class, JOB_FIXED_INVOCATIONS) {
        initial { actor(JobSemaphore1::tryAcquire) }
        parallel {
            thread { actor(JobSemaphore1::acquireInJob) }
            thread { actor(JobSemaphore1::release) }
            thread { actor(JobSemaphore1::availablePermits); actor(JobSemaphore1::cancelJob) }
        }
    }

    /** The window of 818fa37 (see the file comment): a request of a cancelled Job must never stand in line. */
    @Test
    fun semaphore2CancelledBeforeOffer() = checkOnly(JobSemaphore2::class, JOB_FIXED_INVOCATIONS) {
        initial { actor(JobSemaphore2::tryAcquire, 1); actor(JobSemaphore2::cancelJob) }
        parallel {
            thread { actor(JobSemaphore2::acquireInJob, 1) }
            thread { actor(JobSemaphore2::acquireInJob, 2) }
        }
    }

    @Test
    fun lockHandBack() = checkOnly(JobLock::class, JOB_FIXED_INVOCATIONS) {
        initial { actor(JobLock::tryLock, 1) }
        parallel {
            thread { actor(JobLock::lockInJob, 0); actor(JobLock::isLocked) }
            thread { actor(JobLock::unlock, 1) }
            thread { actor(JobLock::cancelJob) }
        }
    }
}
