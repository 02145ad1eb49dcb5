/*
 * ReadWriteHold: one hold of a ReadWriteLock taken by a JVM caller (JavaBridge.kt), with an identity
 * of its own, so that a stale handle can never end a hold it does not own. The lock's holds are
 * anonymous counts (ReadWriteLock.kt, RW4); this object adds, on top of them and without new rules
 * for the lock, a state of its own:
 * H1  LIVE -> ENDED (unlock: then, and only then, it ends one hold of its kind) or LIVE -> SPENT
 *     (an upgrade or downgrade through it took the hold over). Each is one CAS, so of two racing
 *     operations on one handle only one acts; the other throws (unlock of an ENDED hold, upgrade or
 *     downgrade of a hold that is not LIVE) or does nothing (unlock of a SPENT hold).
 * H2  SPENT -> LIVE only when the lock refused the upgrade or downgrade that spent it (Kotlin code
 *     ended the anonymous hold meanwhile, or is upgrading it): the call throws and nothing changed.
 * Grants record in the lock's holds word through the lock's own grantees (RW2, W4).
 */
package dev.semaphore.internal

import dev.semaphore.HoldKind
import dev.semaphore.LockHold
import dev.semaphore.ReadWriteLockImpl
import java.util.concurrent.atomic.AtomicInteger

internal class ReadWriteHold(private val lock: ReadWriteLockImpl, private val kind: HoldKind) : LockHold {
    private val state = AtomicInteger(LIVE)

    override val owner: Any? get() = null

    fun permits(): Int = when (kind) {
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
    fun tryTake(): Boolean = when (kind) {
        HoldKind.READ -> lock.tryLockRead()
        HoldKind.WRITE -> lock.tryLockWrite()
        HoldKind.UPGRADABLE_READ -> lock.tryLockUpgradableRead()
    }

    override fun unlock() {
        if (!state.compareAndSet(LIVE, ENDED)) {
            check(state.get() == SPENT) { "this $kind hold of the lock has already ended" }
            return // H1: upgraded or downgraded through this handle; that hold is another handle's now
        }
        when (kind) {
            HoldKind.READ -> lock.unlockRead()
            HoldKind.WRITE -> lock.unlockWrite()
            HoldKind.UPGRADABLE_READ -> lock.unlockUpgradableRead()
        }
    }

    /** H2. */
    fun unspend() {
        state.compareAndSet(SPENT, LIVE)
    }

    override fun toString(): String = "ReadWriteLockHold($kind, ${STATES[state.get()]})"

    companion object {
        private const val LIVE = 0
        private const val ENDED = 1
        private const val SPENT = 2
        private val STATES = arrayOf("held", "ended", "spent by an upgrade or downgrade")

        /** H1: spends [hold], which must be a LIVE hold of [kind] of [lock], for [operation]; throws otherwise, changing nothing. */
        fun spend(lock: ReadWriteLockImpl, hold: LockHold?, kind: HoldKind, operation: String): ReadWriteHold {
            require(hold is ReadWriteHold && hold.lock === lock && hold.kind == kind) {
                "$operation needs a $kind hold of this lock, got ${hold ?: "no lock hold (permits of a semaphore?)"}"
            }
            check(hold.state.compareAndSet(LIVE, SPENT)) { "$operation of a $kind hold that was already ${STATES[hold.state.get()]}" }
            return hold
        }

        /** Spends [upgradable] and marks the lock's upgrade in progress (RW5); the request keeps no upgradable read on a hand-back. */
        fun beginUpgrade(lock: ReadWriteLockImpl, upgradable: LockHold?): ReadWriteLockImpl.UpgradeRequest {
            val from = spend(lock, upgradable, HoldKind.UPGRADABLE_READ, "upgrade")
            try {
                lock.beginUpgrade("upgrade")
            } catch (e: IllegalStateException) {
                from.unspend()
                throw e
            }
            return lock.UpgradeRequest(keepUpgradable = false)
        }
    }
}
