package dev.semaphore.bridge

/**
 * One hold of a `Lock` or `ReadWriteLock` taken by a caller that is not a coroutine (through
 * [JavaBridge]): [unlock] ends exactly this hold, so a stale handle can never unlock a lock that was
 * re-acquired since. The Java API's `Permit` keeps one.
 */
@InternalSemaphoreApi
public interface LockHold {
    /**
     * Unlocks, if this hold is still the lock's current one; the next waiter in line gets the lock.
     * @throws IllegalStateException if this hold already ended (someone unlocked the lock); nothing changes.
     */
    public fun unlock()

    /**
     * True while the permits of this hold are held through it: not ended (by [unlock], or, for a Lock, by
     * anyone), not spent by an upgrade or downgrade. A handle collected while this is true leaked
     * (internal/Leaks.kt).
     */
    public val isHeld: Boolean
}
