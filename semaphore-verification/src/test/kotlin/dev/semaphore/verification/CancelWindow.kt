/*
 * Deterministic reproduction of the "granted, then cancelled before the wake" window. The waiters that
 * one locked step of the engine fails or grants are woken in one chain, in order, after the lock is
 * released (WaiterQueue.kt, I7). So a raw engine waiter that sits before the coroutine's waiter in the
 * line, and is failed or granted in the same step in which the coroutine's waiter is granted, runs its
 * callback between the coroutine's grant and its wake: the test cancels the coroutine there and
 * observes the primitive. The callback runs on the test thread through the trampoline, outside any
 * kotlinx event loop, so a cancellation that wins completes the coroutine right there (under
 * Dispatchers.Unconfined). On a real machine the same window is opened by preemption between unlock
 * and wake.
 */
package dev.semaphore.verification

import dev.semaphore.internal.Grantee
import dev.semaphore.internal.PermitWaiter

/**
 * A bare engine waiter (it always claims) whose callback runs [inside] (once): onGranted if [granted],
 * else onFailed; the other callback is a test failure.
 */
internal class CallbackWaiter(
    permits: Int,
    grantee: Grantee,
    private val granted: Boolean,
    private val inside: () -> Unit,
) : PermitWaiter(permits, grantee) {
    @Volatile
    var ran = false
        private set

    override fun tryClaim(): Boolean = true

    override fun onGranted() = if (granted) run() else throw AssertionError("this waiter must fail, not be granted")

    override fun onFailed(cause: Throwable) = if (!granted) run() else throw AssertionError("this waiter must be granted", cause)

    private fun run() {
        ran = true
        inside()
    }
}
