/*
 * Lincheck for PrioritySemaphore (2 permits, no aging, so the sequential run is deterministic), with
 * two priorities (0 and 1): tryAcquire, suspending acquire (never cancelled) and acquireInJob (in the
 * test's SharedJob, which the run-once cancelJob() cancels from another thread, see JobCancellationLincheckTest.kt),
 * multi-permit requests, release (over-release as a result value), addPermits /
 * reducePermits and close (run once). The sequential specification is the PrioritySemaphore itself.
 * availablePermits is a concurrent operation; queueLength is checked at rest (@Validate), for the
 * reasons given in SemaphoreLincheckTest.kt.
 */
package dev.semaphore.verification

import dev.semaphore.PrioritySemaphore
import dev.semaphore.internal.WaiterQueueOwner
import org.jetbrains.kotlinx.lincheck.annotations.Operation
import org.jetbrains.kotlinx.lincheck.annotations.Param
import org.jetbrains.kotlinx.lincheck.annotations.Validate
import org.jetbrains.kotlinx.lincheck.check
import org.jetbrains.kotlinx.lincheck.paramgen.IntGen
import org.junit.jupiter.api.Test

@Param(name = "n", gen = IntGen::class, conf = "1:2")
@Param(name = "priority", gen = IntGen::class, conf = "0:1")
class PrioritySemaphoreLincheckTest {
    private val s = PrioritySemaphore(2)

    @Operation
    fun tryAcquire(@Param(name = "priority") p: Int, @Param(name = "n") n: Int) = outcome { s.tryAcquire(n, priority = p) }

    private val shared = SharedJob()

    @Operation(cancellableOnSuspension = false) // never cancelled
    suspend fun acquire(@Param(name = "priority") p: Int, @Param(name = "n") n: Int) = outcome { s.acquire(n, priority = p); OK }

    @Operation(cancellableOnSuspension = false) // cancelled through the shared Job only
    suspend fun acquireInJob(@Param(name = "priority") p: Int, @Param(name = "n") n: Int) =
        outcome { shared.acquire { s.acquire(n, priority = p) } }

    @Operation(runOnce = true)
    fun cancelJob() = shared.cancel()

    @Operation
    fun release(@Param(name = "n") n: Int) = outcome { s.release(n); OK }

    @Operation
    fun addPermits() = outcome { s.addPermits(1); OK }

    @Operation
    fun reducePermits() = outcome { s.reducePermits(1); OK }

    @Operation(runOnce = true)
    fun close() = outcome { s.close(); OK }

    @Operation
    fun availablePermits() = s.availablePermits

    /** At rest: available <= total, a queued head never fits (engine I1, I5), and no acquisition of the cancelled shared Job still waits (W2). */
    @Validate
    fun atRest() {
        val q = (s as WaiterQueueOwner).waiterQueue
        check(q.availablePermits <= q.totalPermits) { "$q" }
        check(q.queueLength == 0 || q.availablePermits < 2 || q.isClosed) { "a queued request fits: $q" }
        check(!q.isClosed || q.queueLength == 0) { "closed with waiters: $q" }
        shared.checkAtRest()
    }

    @Test
    fun modelChecking() = jobMcOptions().check(this::class)

    @Test
    fun stressStrategy() = jobStressOptions().check(this::class)

    /** W2 with priorities: a high-priority head whose Job is cancelled lets the lower request behind it in. */
    @Test
    fun cancelledHeadLetsTheLowerPriorityIn() = checkOnly(PrioritySemaphoreLincheckTest::class, JOB_FIXED_INVOCATIONS) {
        initial { actor(PrioritySemaphoreLincheckTest::tryAcquire, 0, 2) }
        parallel {
            thread { actor(PrioritySemaphoreLincheckTest::acquireInJob, 1, 2) }
            thread { actor(PrioritySemaphoreLincheckTest::acquire, 0, 1); actor(PrioritySemaphoreLincheckTest::availablePermits) }
            thread { actor(PrioritySemaphoreLincheckTest::release, 1); actor(PrioritySemaphoreLincheckTest::cancelJob) }
        }
    }

    /** W3 with priorities: a grant to a request whose Job is cancelled before it runs is handed back. */
    @Test
    fun grantHandedBackWhenTheJobIsCancelled() = checkOnly(PrioritySemaphoreLincheckTest::class, JOB_FIXED_INVOCATIONS) {
        initial { actor(PrioritySemaphoreLincheckTest::tryAcquire, 0, 2) }
        parallel {
            thread { actor(PrioritySemaphoreLincheckTest::acquireInJob, 1, 1); actor(PrioritySemaphoreLincheckTest::availablePermits) }
            thread { actor(PrioritySemaphoreLincheckTest::release, 1) }
            thread { actor(PrioritySemaphoreLincheckTest::cancelJob) }
        }
    }
}
