/*
 * The Semaphore side of LockRegressionTest R4. It failed on the engine of commit 4af7dc7 and passes
 * with the claim at grant (WaiterQueue.kt, W1). A queued acquire is granted under the queue's lock, its coroutine is cancelled before
 * the granting thread wakes it (the wake runs after the lock is released), the cancel handler finds
 * the waiter granted and does nothing, and acquire() completes as cancelled while its permits are
 * still counted as held; they come back only when the granting thread's wake hands them back.
 *
 * Lincheck model checking first showed it, with availablePermits among the operations:
 *   init: tryAcquire(2): true
 *   parallel: release(2): ok | acquire(1) + cancel: CANCELLED | availablePermits(): 1
 * (no sequential order explains 1). A fixed-scenario Lincheck run with the reader after the cancelled
 * acquire did not report it within 2000 invocations (Lincheck's sequential model of "resumed, then
 * cancelled" seems to keep the permits too), so this regression test opens the window
 * deterministically and asserts on the plain API: one release grants two queued acquires in one
 * step, so their wakes form one chain, delivered in order after the lock is released. Under
 * Dispatchers.Unconfined the first woken coroutine runs inside that delivery, before the second's
 * wake, and cancels the second there: between its grant and its wake.
 */
package dev.semaphore.verification

import dev.semaphore.Semaphore
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class SemaphoreRegressionTest {
    @Test
    fun cancelledAcquireStillHoldsPermitsAfterReturning() {
        val s = Semaphore(2)
        check(s.tryAcquire(2))
        val scope = CoroutineScope(Dispatchers.Unconfined)
        lateinit var second: Job
        var secondAcquired = false
        var observed: Int? = null
        var firstRanBeforeSecondWake = false
        val first = scope.launch {
            s.acquire(1)
            firstRanBeforeSecondWake = !second.isCompleted && !secondAcquired
            second.cancel() // granted with the first, not yet woken: cancelled in between
            // Contract: once the cancelled acquire has returned, it holds nothing. (A fixed engine may
            // instead keep it pending until its wake hands the grant back: nothing to see then.)
            if (second.isCompleted && !secondAcquired) observed = s.availablePermits
        }
        second = scope.launch { s.acquire(1); secondAcquired = true }
        check(s.queueLength == 2)
        s.release(2) // grants both in one step; the first's wake runs the block above, then the second's
        assertTrue(first.isCompleted, "the first coroutine must have ended: $first")
        assertTrue(firstRanBeforeSecondWake, "the window was not opened: the second was woken first")
        // The first holds 1 and the test none, so 1 is free unless the second holds it.
        if (observed != null) assertEquals(1, observed, "after acquire(1) was cancelled and returned, its permit must be free")
        assertTrue(second.isCompleted, "the second coroutine must have ended: $second")
        // Either the cancellation won (nothing held by the second) or the grant did (acquire returned: it
        // holds 1; with Dispatchers.Unconfined a claimed resume is delivered even to a cancelled Job).
        // Never neither: the permit is not lost, and never both: it is not counted twice.
        assertEquals(if (secondAcquired) 0 else 1, s.availablePermits, "secondAcquired=$secondAcquired")
        s.release(if (secondAcquired) 2 else 1)
        assertEquals(2, s.availablePermits)
        assertEquals(0, s.queueLength)
    }
}
