/*
 * Scenarios in which Lincheck (or the Lock storm) found the Lock's results wrong on the engine of
 * commit 4af7dc7: the unlock window R1, the fast-path window R2 (then documented as L2), the
 * same-owner race R3, and the cancelled-grant window R4. Each R1-R3 test checks one fixed scenario
 * by model checking (no random scenarios), so it fails deterministically while the window exists;
 * R4 opens its window deterministically with a wake chain (CancelWindow.kt). R1-R4 failed on that
 * engine (R4 in its first form, which deferred the wake with the trampoline); they pass on the core
 * with Lock.kt's L3 spin and the claim at grant (WaiterQueue.kt, W1). R5, the same-owner race of a
 * lock() that must queue, was found later (commit bcc1d58) and is fixed by Lock.kt's L5 (W5).
 *
 * The Lock is exercised with shared owners here (owner 1 and 2 are two objects; 0 is no owner).
 */
package dev.semaphore.verification

import dev.semaphore.Lock
import org.jetbrains.kotlinx.lincheck.annotations.Operation
import org.jetbrains.kotlinx.lincheck.annotations.Param
import org.jetbrains.kotlinx.lincheck.paramgen.IntGen
import kotlinx.coroutines.launch
import org.junit.jupiter.api.Test

/** Every Lock operation with a free choice of owner (as in LockLincheckTest), for the fixed regression scenarios. */
@Param(name = "owner", gen = IntGen::class, conf = "0:2")
class LockAllOwnersOps {
    private val lock = Lock()

    @Operation(cancellableOnSuspension = false) // the fixed scenarios never cancel it (R4 cancels a Job of its own)
    suspend fun lock(@Param(name = "owner") o: Int) = outcome { lock.lock(OWNERS[o]); OK }

    @Operation
    fun tryLock(@Param(name = "owner") o: Int) = outcome { lock.tryLock(OWNERS[o]) }

    @Operation
    fun unlock(@Param(name = "owner") o: Int) = outcome { lock.unlock(OWNERS[o]); OK }

    @Operation
    fun isLocked() = lock.isLocked

    @Operation
    fun holdsLock(@Param(name = "owner") o: Int) = lock.holdsLock(OWNERS[o] ?: OWNERS[1]!!)
}

class LockRegressionTest {
    /**
     * R1, the unlock window: unlock clears the holder (L3) before it releases the permit. Found by
     * Lincheck. Thread 2's unlock(A) has cleared the holder; thread 1's unlock(A) then fails as "not
     * locked" (so thread 2's unlock took effect first), yet thread 1's tryLock(B) still fails because
     * the permit is not back: no sequential order gives (misuse, false) for thread 1 and ok for 2.
     */
    @Test
    fun racingUnlockThenTryLock() = checkOnly(LockAllOwnersOps::class, LOCK_REGRESSION_INVOCATIONS) {
        initial { actor(LockAllOwnersOps::tryLock, 1) }
        parallel {
            thread { actor(LockAllOwnersOps::unlock, 1); actor(LockAllOwnersOps::tryLock, 2) }
            thread { actor(LockAllOwnersOps::unlock, 1) }
        }
    }

    /**
     * R1 without misuse: while unlock(A) is between clearing the holder and releasing the permit,
     * another caller sees holdsLock(A) == false (the unlock happened) and then tryLock(B) == false.
     */
    @Test
    fun holdsLockFalseThenTryLockFails() = checkOnly(LockAllOwnersOps::class, LOCK_REGRESSION_INVOCATIONS) {
        initial { actor(LockAllOwnersOps::tryLock, 1) }
        parallel {
            thread { actor(LockAllOwnersOps::unlock, 1) }
            thread { actor(LockAllOwnersOps::holdsLock, 1); actor(LockAllOwnersOps::tryLock, 2) }
        }
    }

    /**
     * R1 through a legal call: unlock(null) releases whoever holds the lock (allowed: no owner, no
     * check). While it is between clearing the holder and releasing the permit, the holder B's own
     * tryLock(B) returns false; sequentially it either throws (B still holds: not reentrant) or
     * returns true (the unlock is done). Found by LockLincheckTest's model checking.
     */
    @Test
    fun anonymousUnlockRacesHoldersRelock() = checkOnly(LockAllOwnersOps::class, LOCK_REGRESSION_INVOCATIONS) {
        initial { actor(LockAllOwnersOps::tryLock, 2) }
        parallel {
            thread { actor(LockAllOwnersOps::tryLock, 2) }
            thread { actor(LockAllOwnersOps::unlock, 0) }
        }
    }

    /**
     * R4, a cancelled lock() leaves its owner recorded as the holder (found by LockStressTest, K5).
     * lock(A) is queued; a step of the engine grants it under the queue's lock (holder := A), and A's
     * coroutine is cancelled before its wake: on the old engine its cancel handler found the waiter
     * already granted and did nothing, so lock(A) completed as cancelled while A was still the
     * recorded holder. A's next tryLock(A) then threw "already held by owner-1" although A held
     * nothing, and holdsLock(A) was true. Deterministic, not timed: a raw engine waiter x, queued
     * before A, fails in the same step in which A is granted (its request outgrows the total), and its
     * callback runs between A's grant and A's wake (CancelWindow.kt). The step is a reducePermits on
     * the Lock's engine, whose total the test raises first and restores at the end. With those extra
     * permits, A is granted while owner-2 still holds the lock's own permit: A's record replaces
     * owner-2's (a Lock records one holder), so the test returns owner-2's permit through the engine.
     */
    @Test
    fun cancelledLockLeavesOwnerRecordedAsHolder() {
        val lock = dev.semaphore.Lock()
        val queue = (lock as dev.semaphore.LockImpl).waiterQueue
        val a = OWNERS[1]!!
        check(lock.tryLock(OWNERS[2]))
        queue.addPermits(2) // total 3, 2 available
        val scope = kotlinx.coroutines.CoroutineScope(kotlinx.coroutines.Dispatchers.Unconfined)
        var inside: () -> Unit = {}
        val x = CallbackWaiter(3, lock.Hold(null), granted = false) { inside() }
        check(!queue.enqueue(x)) // x queued first: 3 do not fit in 2
        var acquired = false
        val w = scope.launch { lock.lock(a); acquired = true } // A queued behind x
        check(lock.queueLength == 2)
        var observed: String? = null
        var windowOpen = false
        inside = {
            windowOpen = lock.holdsLock(a) && !acquired // granted under the lock, not yet woken
            w.cancel() // cancelled now, inside that window
            // Contract: once the cancelled lock(A) has returned, A holds nothing. (A fixed engine may
            // instead keep lock(A) pending until its wake hands the grant back: then nothing to see here.)
            if (w.isCompleted && !acquired) {
                val held = lock.holdsLock(a) // read before the tryLock below, which may take the lock for A
                val relock = runCatching { lock.tryLock(a) }
                observed = "holdsLock(A)=$held, tryLock(A)=${relock.exceptionOrNull() ?: relock.getOrNull()}"
                if (relock.getOrNull() == true) lock.unlock(a)
            }
        }
        queue.reducePermits(1) // total 2: x (3) fails, A (1 of the 1 free) is granted, in one step
        check(x.ran)
        org.junit.jupiter.api.Assertions.assertTrue(windowOpen, "the window was not opened: A was not granted, or already woken")
        if (observed != null) {
            org.junit.jupiter.api.Assertions.assertEquals("holdsLock(A)=false, tryLock(A)=true", observed,
                "after lock(A) was cancelled and returned, A must hold nothing")
        }
        org.junit.jupiter.api.Assertions.assertTrue(w.isCompleted, "the coroutine must have ended: $w")
        // Either the cancellation won (A holds nothing) or the grant did (lock(A) returned: A holds it;
        // with Dispatchers.Unconfined a claimed resume is delivered even to a cancelled Job).
        org.junit.jupiter.api.Assertions.assertEquals(acquired, lock.holdsLock(a), "acquired=$acquired")
        org.junit.jupiter.api.Assertions.assertEquals(if (acquired) 0 else 1, queue.availablePermits, "acquired=$acquired")
        queue.release(1) // owner-2's permit
        queue.reducePermits(1) // back to the Lock's total of 1
        if (acquired) lock.unlock(a)
        org.junit.jupiter.api.Assertions.assertFalse(lock.isLocked, "$lock")
        org.junit.jupiter.api.Assertions.assertEquals(1, queue.totalPermits)
        org.junit.jupiter.api.Assertions.assertEquals(0, lock.queueLength)
    }

    /**
     * R2, the fast-path window (the old L2): after tryLock(A)'s CAS and before the holder was
     * recorded, another caller saw isLocked == true and holdsLock(A) == false.
     */
    @Test
    fun isLockedTrueButHolderNotYetRecorded() = checkOnly(LockAllOwnersOps::class, LOCK_REGRESSION_INVOCATIONS) {
        parallel {
            thread { actor(LockAllOwnersOps::tryLock, 1) }
            thread { actor(LockAllOwnersOps::isLocked); actor(LockAllOwnersOps::holdsLock, 1) }
        }
    }

    /**
     * R3, a relock by the same owner from two threads: the owner check runs before the acquisition
     * and the holder is recorded after it, so the loser returns false; sequentially it either gets
     * the lock or throws IllegalStateException ("already held by owner-1").
     */
    @Test
    fun sameOwnerTryLockFromTwoThreads() = checkOnly(LockAllOwnersOps::class, LOCK_REGRESSION_INVOCATIONS) {
        parallel {
            thread { actor(LockAllOwnersOps::tryLock, 1) }
            thread { actor(LockAllOwnersOps::tryLock, 1) }
        }
    }

    /**
     * R5, a relock queued behind the owner's own hold (Lock.kt L5): lock(A)'s fast path finds the lock
     * held without owner; the holder unlocks and A takes it with tryLock; lock(A) then queued behind
     * A's own hold, waiting for itself, instead of throwing. Sequentially lock(A) either gets the lock
     * (then tryLock(A) throws) or throws. Found by LockLincheckTest's stress strategy under -Pstress.
     */
    @Test
    fun relockQueuedBehindTheOwnersOwnHold() = checkOnly(LockAllOwnersOps::class, LOCK_REGRESSION_INVOCATIONS) {
        initial { actor(LockAllOwnersOps::tryLock, 0) }
        parallel {
            thread { actor(LockAllOwnersOps::lock, 1) }
            thread { actor(LockAllOwnersOps::unlock, 0); actor(LockAllOwnersOps::tryLock, 1) }
        }
    }
}
