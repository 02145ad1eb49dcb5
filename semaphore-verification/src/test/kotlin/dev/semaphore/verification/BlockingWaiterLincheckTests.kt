/*
 * Lincheck for the blocking kind of waiter (JavaBridge.acquireBlocking / lockBlocking): every
 * interleaving of the engine's grant (W1: claim under the lock, then onGranted) with the waiting
 * thread's steps (W2: give up on a deadline or an interrupt; W3: an interrupt after the claim hands
 * the permits back).
 *
 * The model checker cannot interrupt a parked thread, so the thread's side is driven through
 * BlockingWaiter.settle, the step that BlockingWaiter.await repeats between parks: each Lincheck
 * thread owns one slot (ThreadIdGen) and its request; request(t) queues it as acquireBlocking does,
 * look(t) is the thread waking up and looking, timeout(t) is a wake after the deadline, interrupt(t)
 * a wake with the interrupt flag set. A slot is finished once the thread would have returned or
 * thrown; close(t) releases what it holds, once. The real park/unpark path, interrupts included, is
 * run by semaphore-java-api's tests (BlockingTest, CancellationRaceTest, VirtualThreadTest).
 *
 * At the end (@Validate) every slot still open is settled as a deadline would settle it: after that
 * every permit is back and nobody is queued (a grant is taken by its requester or handed back, never
 * both, never neither). The same scenarios run on a Semaphore(1) and on a Lock, whose grantee is the
 * hold (a Lock records its holder in the grant, W4: a thread that took its claim before that step
 * finished would hand back, or unlock, a hold the lock does not know yet).
 */
package dev.semaphore.verification

import dev.semaphore.Lock
import dev.semaphore.LockImpl
import dev.semaphore.QueueBackedPool
import dev.semaphore.Semaphore
import dev.semaphore.internal.BlockingWaiter
import dev.semaphore.internal.BlockingWaiter.Companion.GAVE_UP_EXPIRED
import dev.semaphore.internal.BlockingWaiter.Companion.HELD
import dev.semaphore.internal.BlockingWaiter.Companion.PENDING
import org.jetbrains.kotlinx.lincheck.annotations.Operation
import org.jetbrains.kotlinx.lincheck.annotations.Param
import org.jetbrains.kotlinx.lincheck.annotations.Validate
import org.jetbrains.kotlinx.lincheck.check
import org.jetbrains.kotlinx.lincheck.paramgen.ThreadIdGen
import org.junit.jupiter.api.Test

@Param(name = "t", gen = ThreadIdGen::class)
abstract class BlockingWaiterScenarios {
    private val waiters = arrayOfNulls<BlockingWaiter>(4)
    private val held = BooleanArray(4)
    private val finished = BooleanArray(4)

    /** Takes the primitive now for slot [t] (true), or returns the waiter to queue for it. */
    internal abstract fun takeNowOrWaiter(t: Int): BlockingWaiter?

    /** Releases what slot [t] holds. */
    protected abstract fun release(t: Int)

    /** 1 if the permit is free, 0 if held. */
    protected abstract fun free(): Int

    protected abstract fun queueLength(): Int

    /** acquireBlocking's queueing step for this thread's slot; true if granted at once. */
    @Operation
    fun request(@Param(name = "t") t: Int): Boolean {
        if (waiters[t] != null || held[t] || finished[t]) return false
        val w = takeNowOrWaiter(t)
        if (w == null) {
            held[t] = true
            finished[t] = true // nothing to settle; close(t) still releases
            return true
        }
        waiters[t] = w
        if (w.queue.enqueue(w)) held[t] = true
        return held[t]
    }

    @Operation
    fun look(@Param(name = "t") t: Int): Int? = step(t, interrupted = false, expired = false)

    @Operation
    fun timeout(@Param(name = "t") t: Int): Int? = step(t, interrupted = false, expired = true)

    @Operation
    fun interrupt(@Param(name = "t") t: Int): Int? = step(t, interrupted = true, expired = false)

    /** Releases what this slot holds, once; false if it holds nothing. */
    @Operation
    fun close(@Param(name = "t") t: Int): Boolean {
        if (!held[t]) return false
        held[t] = false
        finished[t] = true
        release(t)
        return true
    }


    /** One settle of a slot that is still waiting; null if there is nothing to settle. */
    private fun step(t: Int, interrupted: Boolean, expired: Boolean): Int? {
        val w = waiters[t] ?: return null
        if (held[t] || finished[t]) return null
        val outcome = w.settle(interrupted, expired)
        when (outcome) {
            HELD -> held[t] = true
            PENDING -> {}
            else -> finished[t] = true // the thread returned false or threw: nothing held
        }
        return outcome
    }

    protected abstract fun describe(): String

    @Validate
    fun nothingLost() {
        for (t in waiters.indices) {
            if (!held[t] && !finished[t] && waiters[t] != null) {
                val outcome = step(t, interrupted = false, expired = true)
                check(outcome == HELD || outcome == GAVE_UP_EXPIRED) { "slot $t settled as $outcome" }
            }
            if (held[t]) close(t)
        }
        check(free() == 1) { "a permit was lost or counted twice: ${describe()}" }
        check(queueLength() == 0) { "a request given up is still queued: ${describe()}" }
    }

    @Test
    fun modelChecking() = mcOptions().check(this::class)

    @Test
    fun stressStrategy() = stressOptions().check(this::class)

    /** Thread 1 is interrupted while thread 2's release grants it (claim, then delivery): every interleaving. */
    @Test
    fun interruptRacingTheGrant() = checkOnly(this::class, BLOCKING_FIXED_INVOCATIONS) {
        initial { actor(BlockingWaiterScenarios::request, 1) }
        parallel {
            thread { actor(BlockingWaiterScenarios::request, 0); actor(BlockingWaiterScenarios::interrupt, 0) }
            thread { actor(BlockingWaiterScenarios::close, 1) }
        }
    }

    /** The same with the deadline instead of the interrupt. */
    @Test
    fun deadlineRacingTheGrant() = checkOnly(this::class, BLOCKING_FIXED_INVOCATIONS) {
        initial { actor(BlockingWaiterScenarios::request, 1) }
        parallel {
            thread { actor(BlockingWaiterScenarios::request, 0); actor(BlockingWaiterScenarios::timeout, 0) }
            thread { actor(BlockingWaiterScenarios::close, 1) }
        }
    }
}

class BlockingWaiterSemaphoreLincheckTest : BlockingWaiterScenarios() {
    private val s = Semaphore(1)
    private val pool = s as QueueBackedPool

    /**
     * Only for the semaphore: a release hands its permit to the head of the line under the lock, so the
     * count never shows it free. The Lock's isLocked shows the instant of a hand-off between two holds
     * as unlocked (as java.util.concurrent's locks do); here, where the waiter's request and its wake-up
     * are separate operations, that instant is not linearizable. LockLincheckTest checks isLocked with
     * the waiter's lock() as one operation.
     */
    @Operation
    fun availablePermits(): Int = s.availablePermits

    internal override fun takeNowOrWaiter(t: Int): BlockingWaiter? =
        if (s.tryAcquire()) null else BlockingWaiter(1, pool, Thread.currentThread(), null)

    override fun release(t: Int) = s.release()
    override fun free(): Int = s.availablePermits
    override fun queueLength(): Int = s.queueLength
    override fun describe(): String = s.toString()
}

class BlockingWaiterLockLincheckTest : BlockingWaiterScenarios() {
    private val lock = Lock() as LockImpl
    private val holds = arrayOfNulls<LockImpl.Hold>(4)

    internal override fun takeNowOrWaiter(t: Int): BlockingWaiter? {
        val hold = lock.Hold(null)
        holds[t] = hold
        return if (lock.tryTake(null, hold)) null else BlockingWaiter(1, hold, Thread.currentThread(), null)
    }

    override fun release(t: Int) = holds[t]!!.unlock()
    override fun free(): Int = if (lock.isLocked) 0 else 1
    override fun queueLength(): Int = lock.queueLength
    override fun describe(): String = lock.toString()
}
