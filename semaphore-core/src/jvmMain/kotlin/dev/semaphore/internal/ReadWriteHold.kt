/*
 * ReadWriteHold: one hold of a ReadWriteLock taken by a JVM caller (bridge/JavaBridge.kt), with an identity
 * of its own, so that a stale handle can never end a hold it does not own. The lock's holds are
 * anonymous counts (ReadWriteLockImpl.kt, RW4); this object adds, on top of them and without new rules
 * for the lock, a state of its own. Each step is one CAS, so of two racing operations on one handle
 * only one acts:
 * H1  LIVE -> ENDED (unlock: then, and only then, it ends one hold of its kind); unlock of an ENDED
 *     hold throws. LIVE -> SPENT by a downgrade through it (the read hold is another handle's now;
 *     unlock then does nothing); SPENT -> LIVE only if the lock refused the downgrade (Kotlin code
 *     ended the anonymous write hold): the call throws and nothing changed.
 * H2  An upgradable read being upgraded is UPGRADING from the start of the upgrade. The upgrade either
 *     happens (the write hold is delivered: the upgradable read is gone into it; a blocking upgrade
 *     then marks this handle SPENT, a future's stays UPGRADING and its unlock finds the future done,
 *     H3) or fails: timed out, withdrawn, interrupted, or granted and handed back (W3). A failed
 *     upgrade gives the lock's upgradable read back first (RW5: the UPGRADING bit cleared, or the
 *     write hold turned back by undoUpgrade) and then calls upgradeFailed: UPGRADING -> LIVE, so the
 *     caller still holds the upgradable read, as a Kotlin caller does after a failed upgrade().
 * H3  unlock of an UPGRADING handle (the caller is done with it while its upgrade is pending or has
 *     just failed): UPGRADING -> CLOSING, then the upgrade's future is withdrawn. If the future holds
 *     the write hold, the handle is spent (CLOSING -> SPENT); otherwise the failure's upgradeFailed,
 *     however late it runs, finds CLOSING and ends the upgradable read (CLOSING -> ENDED). So no
 *     interleaving of a close with a failing upgrade leaves the upgradable read without an owner.
 * Grants record in the lock's holds word through the lock's own grantees (RW2, W4).
 */
@file:OptIn(InternalSemaphoreApi::class)

package dev.semaphore.internal

import dev.semaphore.ReadWriteLockImpl
import dev.semaphore.bridge.HoldKind
import dev.semaphore.bridge.InternalSemaphoreApi
import dev.semaphore.bridge.LockHold
import java.util.concurrent.CompletableFuture
import java.util.concurrent.atomic.AtomicInteger

internal class ReadWriteHold(
    private val lock: ReadWriteLockImpl,
    private val kind: HoldKind,
    /** Who asked, while the lock was observed when they did (JavaHolds.kt, J2); null otherwise. */
    val who: Requester?,
) : LockHold {
    private val state = AtomicInteger(LIVE)

    /** The lock's permits this hold takes (ReadWriteLockImpl.kt, RW1). */
    fun queuePermits(): Int = when (kind) {
        HoldKind.READ -> 1
        HoldKind.WRITE -> lock.total
        HoldKind.UPGRADABLE_READ -> lock.upgradablePermits
    }

    fun grantee(): Grantee = when (kind) {
        HoldKind.READ -> lock.readRequests
        HoldKind.WRITE -> lock.writeRequests
        HoldKind.UPGRADABLE_READ -> lock.upgradableRequests
    }

    /** The fast path (RW2, RW3): the lock's own try form. */
    fun tryTake(asker: Any? = null): Boolean = when (kind) {
        HoldKind.READ -> lock.tryTakeRead(asker)
        HoldKind.WRITE -> lock.tryTakeWrite(asker)
        HoldKind.UPGRADABLE_READ -> lock.tryTakeUpgradableRead(asker)
    }

    /** A Java handle states 1 for any hold of a lock. */
    override val permits: Int get() = 1

    /** The upgrade's future, while this upgradable read is UPGRADING through a future (H3). */
    @Volatile
    var upgrade: CompletableFuture<*>? = null

    override fun unlock() {
        while (true) {
            when (state.get()) {
                LIVE -> if (state.compareAndSet(LIVE, ENDED)) break
                UPGRADING -> if (state.compareAndSet(UPGRADING, CLOSING)) { // H3
                    val f = upgrade ?: return
                    f.cancel(false)
                    if (!f.isCompletedExceptionally) state.compareAndSet(CLOSING, SPENT)
                    return
                }
                ENDED -> throw IllegalStateException("this $kind hold of the lock has already ended")
                else -> return // SPENT or CLOSING (H1, H3): this hold is another handle's, or being ended
            }
        }
        when (kind) {
            HoldKind.READ -> lock.unlockRead(who) // names its hold (Observer.kt, H2; JavaHolds.kt, J3)
            HoldKind.WRITE -> lock.unlockWrite()
            HoldKind.UPGRADABLE_READ -> lock.unlockUpgradableRead()
        }
    }

    /** Only LIVE: an ended or spent hold is another's or nobody's; an UPGRADING one is the upgrade's to settle (H2, H3). */
    override val isHeld: Boolean get() = state.get() == LIVE

    /** H1. */
    fun unspend() {
        state.compareAndSet(SPENT, LIVE)
    }

    /** H2: the upgrade happened; the upgradable read is gone into the write hold. */
    fun upgraded() {
        if (!state.compareAndSet(UPGRADING, SPENT)) state.compareAndSet(CLOSING, SPENT)
    }

    /** H2, H3: the upgrade failed and the lock's upgradable read is back; it is this handle's again, or ends. */
    fun upgradeFailed() {
        if (state.compareAndSet(UPGRADING, LIVE)) return
        if (state.compareAndSet(CLOSING, ENDED)) lock.unlockUpgradableRead()
    }

    override fun toString(): String = "ReadWriteLockHold($kind, ${STATES[state.get()]})"

    companion object {
        private const val LIVE = 0
        private const val ENDED = 1
        private const val SPENT = 2
        private const val UPGRADING = 3
        private const val CLOSING = 4
        private val STATES = arrayOf("held", "ended", "spent by an upgrade or downgrade", "upgraded or being upgraded", "being ended")

        /** H1: spends [hold], which must be a LIVE hold of [kind] of [lock], for [operation]; throws otherwise, changing nothing. */
        fun spend(lock: ReadWriteLockImpl, hold: LockHold?, kind: HoldKind, operation: String, to: Int = SPENT): ReadWriteHold {
            require(hold is ReadWriteHold && hold.lock === lock && hold.kind == kind) {
                "$operation needs a $kind hold of this lock, got ${hold?.takeIf { it !is PermitHold } ?: "no lock hold (permits of a semaphore?)"}"
            }
            check(hold.state.compareAndSet(LIVE, to)) { "$operation of a $kind hold that was already ${STATES[hold.state.get()]}" }
            return hold
        }

        /** H2: marks [upgradable] UPGRADING and the lock's upgrade in progress (RW5), or throws, changing nothing. */
        fun beginUpgrade(lock: ReadWriteLockImpl, upgradable: LockHold?): ReadWriteHold {
            val from = spend(lock, upgradable, HoldKind.UPGRADABLE_READ, "upgrade", UPGRADING)
            try {
                lock.beginUpgrade("upgrade")
            } catch (e: IllegalStateException) {
                from.state.set(LIVE)
                throw e
            }
            return from
        }
    }
}
