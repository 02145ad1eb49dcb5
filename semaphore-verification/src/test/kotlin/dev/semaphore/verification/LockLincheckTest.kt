/*
 * Lincheck for Lock: lock (suspending, never cancelled) and lockInJob (in the test's SharedJob, which
 * the run-once cancelJob() cancels from another thread, see JobCancellationLincheckTest.kt), tryLock
 * and unlock with owners, isLocked and holdsLock. Owner 0 is "no owner" (null; unlock(null) releases
 * whoever holds the lock), owners 1 and 2 are two objects, and any owner may be used from any
 * thread at once. Misuse (relock by the holder, unlock by the wrong owner, unlock of a free lock) is
 * caught and returned as the MISUSE result, so its linearizability is checked too.
 *
 * The sequential specification is the Lock itself (run sequentially by Lincheck).
 *
 * History: on the engine before Lock.kt's L3 spin (holder as the truth), Lincheck found the windows
 * kept as fixed scenarios in LockRegressionTest (R1 unlock window, R2 fast-path window of the old
 * L2 with isLocked/holdsLock, R3 same owner from two threads), so this test then confined each owner
 * to one thread and left holdsLock out. With the fix they pass, and the full set is checked here.
 */
package dev.semaphore.verification

import dev.semaphore.Lock
import org.jetbrains.kotlinx.lincheck.annotations.Operation
import org.jetbrains.kotlinx.lincheck.annotations.Param
import org.jetbrains.kotlinx.lincheck.annotations.Validate
import org.jetbrains.kotlinx.lincheck.check
import org.jetbrains.kotlinx.lincheck.paramgen.IntGen
import org.junit.jupiter.api.Test

/** The owners of the Lincheck tests: index 0 is "no owner". */
internal val OWNERS: List<Any?> = listOf(null, "owner-1", "owner-2")

@Param(name = "owner", gen = IntGen::class, conf = "0:2")
class LockLincheckTest {
    private val lock = Lock()

    private val shared = SharedJob()

    @Operation(cancellableOnSuspension = false) // never cancelled
    suspend fun lock(@Param(name = "owner") o: Int) = outcome { lock.lock(OWNERS[o]); OK }

    @Operation(cancellableOnSuspension = false) // cancelled through the shared Job only
    suspend fun lockInJob(@Param(name = "owner") o: Int) = outcome { shared.acquire { lock.lock(OWNERS[o]) } }

    @Operation(runOnce = true)
    fun cancelJob() = shared.cancel()

    @Operation
    fun tryLock(@Param(name = "owner") o: Int) = outcome { lock.tryLock(OWNERS[o]) }

    @Operation
    fun unlock(@Param(name = "owner") o: Int) = outcome { lock.unlock(OWNERS[o]); OK }

    @Operation
    fun isLocked() = lock.isLocked

    @Operation
    fun holdsLock(@Param(name = "owner") o: Int) = lock.holdsLock(OWNERS[o] ?: OWNERS[1]!!)

    /** At rest: at most one holder, a free lock has nobody queued and no holder (I5 for one permit), and no acquisition of the cancelled shared Job still waits (W2). */
    @Validate
    fun atRest() {
        val a = lock.holdsLock(OWNERS[1]!!)
        val b = lock.holdsLock(OWNERS[2]!!)
        check(!(a && b)) { "two holders" }
        if (!lock.isLocked) check(lock.queueLength == 0 && !a && !b) { "free lock with queue ${lock.queueLength}, holders A=$a B=$b" }
        shared.checkAtRest()
    }

    @Test
    fun modelChecking() = jobMcOptions().check(this::class)

    @Test
    fun stressStrategy() = jobStressOptions().check(this::class)
}
