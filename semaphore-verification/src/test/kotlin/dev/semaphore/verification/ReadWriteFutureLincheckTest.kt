/*
 * Lincheck for ReadWriteLock's JVM bridge (JavaBridge.kt, internal/ReadWriteHold.kt): holds of every
 * kind requested as futures, an upgrade of an upgradable hold as a future, and the ways a Java caller
 * ends them: cancel, a timeout (completeExceptionally(TimeoutException()), what orTimeout's timer
 * does) and closing a hold, the upgradable one included while its upgrade is pending (H3).
 *
 * Each thread owns one slot (ThreadIdGen): request(t, kind) requests a hold into slot t; upgrade(t)
 * upgrades the slot's upgradable hold; cancel(t) and timeout(t) give up the slot's latest future
 * (the upgrade if there is one); close(t) closes what the slot was delivered, each hold once. The
 * sequential specification is the same lock run sequentially. At the end (@Validate) everything is
 * given up and closed as a Java caller would: every future cancelled, then every delivered hold closed
 * (a cancel that loses to the grant leaves the hold in the future), the write hold of an upgrade that
 * completed after its slot's close included: after that nothing is held and nobody is queued, so no interleaving of a grant, an
 * upgrade's hand-back (W3, then H2's upgradeFailed) and a close lost a hold or ended one twice.
 */
@file:OptIn(InternalSemaphoreApi::class)

package dev.semaphore.verification

import dev.semaphore.ReadWriteLock
import dev.semaphore.ReadWriteLockImpl
import dev.semaphore.bridge.HoldKind
import dev.semaphore.bridge.InternalSemaphoreApi
import dev.semaphore.bridge.JavaBridge
import dev.semaphore.bridge.LockHold
import org.jetbrains.kotlinx.lincheck.annotations.Operation
import org.jetbrains.kotlinx.lincheck.annotations.Param
import org.jetbrains.kotlinx.lincheck.annotations.Validate
import org.jetbrains.kotlinx.lincheck.check
import org.jetbrains.kotlinx.lincheck.paramgen.IntGen
import org.jetbrains.kotlinx.lincheck.paramgen.ThreadIdGen
import org.junit.jupiter.api.Test
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeoutException

@Param(name = "t", gen = ThreadIdGen::class)
class ReadWriteFutureLincheckTest {
    private val lock = ReadWriteLock() as ReadWriteLockImpl
    private val requests = arrayOfNulls<CompletableFuture<LockHold>>(4)
    private val upgrades = arrayOfNulls<CompletableFuture<LockHold>>(4)
    private val requestClosed = BooleanArray(4)
    private val writeClosed = BooleanArray(4)

    /** Requests a hold of kind [k] (0 read, 1 write, 2 upgradable read) into this thread's slot; true if granted at once. */
    @Operation
    fun request(@Param(name = "t") t: Int, @Param(gen = IntGen::class, conf = "0:2") k: Int): Boolean {
        if (requests[t] != null) return false
        val f = JavaBridge.lockAsync(lock, HoldKind.entries[k], JavaBridge.NO_TIMEOUT) { it }
        requests[t] = f
        return f.isDone
    }

    /** Upgrades this slot's upgradable hold; true if granted at once, null if there is none to upgrade. */
    @Operation
    fun upgrade(@Param(name = "t") t: Int): Any? {
        val hold = delivered(requests[t]) ?: return null
        if (upgrades[t] != null || requestClosed[t]) return null
        return outcome {
            val f = JavaBridge.upgradeAsync(lock, hold, JavaBridge.NO_TIMEOUT) { it }
            upgrades[t] = f
            f.isDone
        }
    }

    @Operation
    fun cancel(@Param(name = "t") t: Int): Boolean? = latest(t)?.cancel(false)

    /** What orTimeout's timer does when the time runs out. */
    @Operation
    fun timeout(@Param(name = "t") t: Int): Boolean? = latest(t)?.completeExceptionally(TimeoutException())

    /**
     * The timer's timeout without its boolean, for a scenario where another thread withdraws the same
     * future at once: of two racing withdrawers, the one that takes the request out of the line may
     * lose the future's completion to the other (GrantFuture.withdraw, W2), so which of them returns
     * true is not specified; what is checked is the lock's state.
     */
    @Operation
    fun expire(@Param(name = "t") t: Int) {
        latest(t)?.completeExceptionally(TimeoutException())
    }

    /**
     * Closes what this slot was delivered, each hold once: the upgrade's write hold, then the hold it
     * asked for (spent by a done upgrade: nothing; H3 if its upgrade is pending). False if nothing is delivered.
     */
    @Operation
    fun close(@Param(name = "t") t: Int): Any? {
        val hold = delivered(requests[t])
        if (hold == null || requestClosed[t]) return false
        requestClosed[t] = true
        return outcome {
            closeUpgrade(t)
            hold.unlock()
            OK
        }
    }

    /** Closes the write hold this slot's upgrade delivered, once. */
    private fun closeUpgrade(t: Int) {
        val write = delivered(upgrades[t]) ?: return
        if (writeClosed[t]) return
        writeClosed[t] = true
        write.unlock()
    }

    @Operation
    fun readHolds(): Int = lock.readHolds

    @Operation
    fun isWriteLocked(): Boolean = lock.isWriteLocked

    private fun latest(t: Int): CompletableFuture<LockHold>? = upgrades[t] ?: requests[t]

    private fun delivered(f: CompletableFuture<LockHold>?): LockHold? =
        if (f != null && f.isDone && !f.isCompletedExceptionally) f.join() else null

    @Validate
    fun nothingLost() {
        for (t in requests.indices) {
            upgrades[t]?.cancel(false)
            requests[t]?.cancel(false)
        }
        for (t in requests.indices) {
            close(t)
            closeUpgrade(t) // an upgrade that completed after its slot's close: the future holds the write hold
        }
        val available = lock.waiterQueue.availablePermits
        check(lock.readHolds == 0 && !lock.isWriteLocked && lock.queueLength == 0 && available == lock.total) {
            "a hold was lost or ended twice: $lock, ${lock.total - available} permits out"
        }
    }

    @Test
    fun modelChecking() = mcOptions().check(this::class)

    @Test
    fun stressStrategy() = stressOptions().check(this::class)

    /** Slot 0's upgrade is granted by slot 1's close and given up in the same instant, then slot 0 closes its upgradable hold. */
    @Test
    fun upgradeGivenUpAsItIsGranted() = checkOnly(this::class, RW_FUTURE_FIXED_INVOCATIONS) {
        initial {
            actor(ReadWriteFutureLincheckTest::request, 0, 2)
            actor(ReadWriteFutureLincheckTest::request, 1, 0)
            actor(ReadWriteFutureLincheckTest::upgrade, 0)
        }
        parallel {
            thread { actor(ReadWriteFutureLincheckTest::cancel, 0); actor(ReadWriteFutureLincheckTest::close, 0) }
            thread { actor(ReadWriteFutureLincheckTest::close, 1); actor(ReadWriteFutureLincheckTest::readHolds) }
        }
    }

    /** The same with the timeout, and the upgradable hold closed while the upgrade may still be pending. */
    @Test
    fun upgradableClosedAsItsUpgradeTimesOut() = checkOnly(this::class, RW_FUTURE_FIXED_INVOCATIONS) {
        initial {
            actor(ReadWriteFutureLincheckTest::request, 0, 2)
            actor(ReadWriteFutureLincheckTest::request, 1, 0)
            actor(ReadWriteFutureLincheckTest::upgrade, 0)
        }
        parallel {
            thread { actor(ReadWriteFutureLincheckTest::expire, 0) }
            thread { actor(ReadWriteFutureLincheckTest::close, 0) }
            thread { actor(ReadWriteFutureLincheckTest::close, 1); actor(ReadWriteFutureLincheckTest::isWriteLocked) }
        }
    }
}
