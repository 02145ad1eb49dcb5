package dev.semaphore.bridge

/**
 * One hold taken by a caller that is not a coroutine (through `JavaBridge`): a hold of a `Lock` or
 * `ReadWriteLock`, or permits of a semaphore. [unlock] ends exactly this hold, so a stale handle can never
 * unlock a lock that was re-acquired since. The Java API's `Permit` keeps one; where a hold begins, ends, is
 * observed and is watched for a leak is written in one place, internal/JavaHolds.kt (J1-J4).
 */
@InternalSemaphoreApi
public interface LockHold {
    /**
     * Unlocks, if this hold is still the lock's current one; the next waiter in line gets the lock.
     * @throws IllegalStateException if this hold already ended (someone unlocked the lock); nothing changes.
     */
    public fun unlock()

    /** The permits its handle states: the count for a semaphore's permits, 1 for any hold of a lock. */
    public val permits: Int

    /**
     * True while the permits of this hold are held through it: not ended (by [unlock], or, for a Lock, by
     * anyone), not spent by an upgrade or downgrade. A handle collected while this is true leaked
     * (internal/JavaHolds.kt, J4).
     */
    public val isHeld: Boolean
}
