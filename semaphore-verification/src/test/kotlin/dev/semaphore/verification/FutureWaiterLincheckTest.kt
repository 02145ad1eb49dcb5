/*
 * Lincheck for the future kind of waiter (JavaBridge.acquireAsync / lockAsync over the same engine):
 * per-thread futures, with the ways a caller can give one up (cancel, and a timeout, which is
 * completeExceptionally(TimeoutException()) from another thread, exactly what orTimeout's timer does)
 * as operations beside acquiring, closing what a future delivered (a release), and reading the count.
 *
 * Each thread owns one slot (ThreadIdGen): acquire(t) requests a permit into slot t; cancel(t) and
 * timeout(t) give that request up; close(t) releases the permit the request delivered, once. The
 * sequential specification is the same semaphore run sequentially. At the end (@Validate) every
 * request still pending is cancelled, and a cancel that returns false must mean the future holds a
 * permit (it is then released): after that every permit is back and nobody is queued (WaiterQueue.kt,
 * W1..W3: a grant is taken by its requester or handed back, never both, never neither).
 */
@file:OptIn(InternalSemaphoreApi::class)

package dev.semaphore.verification

import dev.semaphore.Semaphore
import dev.semaphore.bridge.InternalSemaphoreApi
import dev.semaphore.bridge.JavaBridge
import org.jetbrains.kotlinx.lincheck.annotations.Operation
import org.jetbrains.kotlinx.lincheck.annotations.Param
import org.jetbrains.kotlinx.lincheck.annotations.Validate
import org.jetbrains.kotlinx.lincheck.check
import org.jetbrains.kotlinx.lincheck.paramgen.ThreadIdGen
import org.junit.jupiter.api.Test
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeoutException

@Param(name = "t", gen = ThreadIdGen::class)
class FutureWaiterLincheckTest {
    private val s = Semaphore(1)
    private val requests = arrayOfNulls<CompletableFuture<Int>>(4)
    private val closed = BooleanArray(4)

    /** Requests one permit into this thread's slot; true if it was granted at once. */
    @Operation
    fun acquire(@Param(name = "t") t: Int): Boolean {
        if (requests[t] != null) return false
        val f = JavaBridge.acquireAsync(s, 1, 0, JavaBridge.NO_TIMEOUT) { it.permits }
        requests[t] = f
        return f.isDone
    }

    @Operation
    fun cancel(@Param(name = "t") t: Int): Boolean? = requests[t]?.cancel(false)

    /** What orTimeout's timer does when the time runs out. */
    @Operation
    fun timeout(@Param(name = "t") t: Int): Boolean? = requests[t]?.completeExceptionally(TimeoutException())

    /** Releases the permit this thread's request delivered, once; false if it delivered none (yet). */
    @Operation
    fun close(@Param(name = "t") t: Int): Boolean {
        val f = requests[t] ?: return false
        if (closed[t] || !f.isDone || f.isCompletedExceptionally) return false
        closed[t] = true
        s.release(f.join())
        return true
    }

    @Operation
    fun availablePermits(): Int = s.availablePermits

    @Validate
    fun nothingLost() {
        for (t in requests.indices) {
            val f = requests[t] ?: continue
            if (closed[t]) continue
            if (!f.cancel(false) && !f.isCompletedExceptionally) s.release(f.join()) // held: give it back
        }
        check(s.availablePermits == 1) { "a permit was lost or counted twice: $s" }
        check(s.queueLength == 0) { "a withdrawn request is still queued: $s" }
    }

    @Test
    fun modelChecking() = mcOptions().check(this::class)

    @Test
    fun stressStrategy() = stressOptions().check(this::class)

    /**
     * The "granted in the same instant" window, every interleaving of it: thread 1's request is
     * granted by thread 2's release and claimed under the lock (W1), and thread 1 gives it up before
     * the grant is delivered; the delivery then fails and must hand the permit back (W3). Slot 1 holds
     * the permit from the start, so that reaching the window takes two thread switches: with the
     * holder's acquire inside the parallel part too, 1,000 invocations did not reach it (removing the
     * hand-back went unnoticed); in this shape they do (the same mutation fails both tests below).
     */
    @Test
    fun cancelRacingTheGrant() = checkOnly(this::class, FUTURE_FIXED_INVOCATIONS) {
        initial { actor(FutureWaiterLincheckTest::acquire, 1) }
        parallel {
            thread { actor(FutureWaiterLincheckTest::acquire, 0); actor(FutureWaiterLincheckTest::cancel, 0) }
            thread { actor(FutureWaiterLincheckTest::close, 1) }
        }
    }

    @Test
    fun timeoutRacingTheGrant() = checkOnly(this::class, FUTURE_FIXED_INVOCATIONS) {
        initial { actor(FutureWaiterLincheckTest::acquire, 1) }
        parallel {
            thread { actor(FutureWaiterLincheckTest::acquire, 0); actor(FutureWaiterLincheckTest::timeout, 0) }
            thread { actor(FutureWaiterLincheckTest::close, 1) }
        }
    }
}
