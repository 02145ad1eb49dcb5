/*
 * Lincheck for PrioritySemaphore (2 permits, no aging, so the sequential run is deterministic), with
 * two priorities (0 and 1): tryAcquire, suspending acquire (cancellable on suspension, prompt
 * cancellation), multi-permit requests, release (over-release as a result value), addPermits /
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
    fun tryAcquire(@Param(name = "priority") p: Int, @Param(name = "n") n: Int) = outcome { s.tryAcquire(p, n) }

    @Operation(cancellableOnSuspension = true, promptCancellation = true)
    suspend fun acquire(@Param(name = "priority") p: Int, @Param(name = "n") n: Int) = outcome { s.acquire(p, n); OK }

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

    /** At rest: available <= total, and a queued head never fits (engine I1, I5). */
    @Validate
    fun atRest() {
        val q = (s as WaiterQueueOwner).waiterQueue
        check(q.availablePermits <= q.totalPermits) { "$q" }
        check(q.queueLength == 0 || q.availablePermits < 2 || q.isClosed) { "a queued request fits: $q" }
        check(!q.isClosed || q.queueLength == 0) { "closed with waiters: $q" }
    }

    @Test
    fun modelChecking() = mcOptions().check(this::class)

    @Test
    fun stressStrategy() = stressOptions().check(this::class)
}
