/*
 * Deterministic reproduction of the "granted, then cancelled before the wake" window, using the
 * engine's wake trampoline (WaiterQueue invariant I7): code that runs inside a waiter's onGranted
 * callback and releases permits gets its grants queued behind the current callback instead of
 * delivered at once. So, inside the callback of a raw SPI waiter, a release grants the coroutine's
 * waiter under the queue's lock and its wake is deferred; the test cancels that coroutine right
 * there and observes the primitive after the cancelled call has returned, before the deferred wake
 * runs. On a real machine the same window is opened by preemption between unlock and wake.
 */
package dev.semaphore.verification

import dev.semaphore.internal.Grantee
import dev.semaphore.internal.PermitWaiter
import dev.semaphore.internal.WaiterQueue

/** A bare engine waiter (it always claims) whose onGranted runs [inside] (once). */
internal class CallbackWaiter(
    queue: WaiterQueue,
    permits: Int,
    grantee: Grantee,
    private val inside: () -> Unit,
) : PermitWaiter(queue, permits, 0, grantee) {
    @Volatile
    var ran = false
        private set

    override fun tryClaim(): Boolean = true

    override fun onGranted() {
        ran = true
        inside()
    }

    override fun onFailed(cause: Throwable) = throw AssertionError("unexpected failure", cause)
}
