package dev.semaphore.distributed

import java.util.concurrent.ConcurrentHashMap
import kotlin.time.Duration

/**
 * A first-in-first-out lock shared by every JVM on the same Redis server: a [DistributedSemaphore] of one
 * permit (the same name is the same line), whose [Lease] is renewed by the client until [unlock].
 *
 * Like the local `dev.semaphore.Lock`, it is not reentrant, and an [owner][lock] is optional: with
 * one, locking again by the same owner (while this JVM holds the lock for it) throws
 * `IllegalStateException` instead of waiting for itself until its own lease expires, and [holdsLock]
 * answers for it. Owners are compared by identity and known to this JVM only (another JVM's holder
 * is just "locked"); a number or a `Duration` is not an owner (a compile error). Without an owner the
 * [Lease] is the only identity of the hold. Owners are kept by the [DistributedSemaphoreClient]: two clients
 * in one JVM do not see each other's.
 *
 * Do not resize a lock's name through a [DistributedSemaphore] handle: a total above 1 would let several
 * holders in.
 */
public interface DistributedLock {
    public val name: String

    /**
     * Waits in line for the lock; see [DistributedSemaphore.acquire].
     * @throws IllegalStateException if [owner] (not null) already holds it through this JVM's client.
     */
    public suspend fun lock(owner: Any? = null): Lease

    /** Takes the lock now if it is free and nobody is queued; null otherwise. Throws as [lock]. */
    public suspend fun tryLock(owner: Any? = null): Lease?

    /** Waits at most [timeout] for the lock; see [DistributedSemaphore.tryAcquire]. Throws as [lock]. */
    public suspend fun tryLock(timeout: Duration, owner: Any? = null): Lease?

    /** Unlocks; see [DistributedSemaphore.release]. */
    public suspend fun unlock(lease: Lease)

    /** See [DistributedSemaphore.renew]. */
    public suspend fun renew(lease: Lease)

    /** Whether [owner] holds this lock through this JVM's client now (no call to the server). */
    public fun holdsLock(owner: Any): Boolean

    /** Whether anyone, in any JVM, holds the lock now. */
    public suspend fun isLocked(): Boolean

    public suspend fun queueLength(): Int

    /**
     * Who holds this lock (its client's id and name, fencing token, time left, and its owner if this
     * JVM holds it for one) and at most [limit] requests of its line, with the true count; see
     * [DistributedSemaphore.inspect].
     * @throws IllegalArgumentException if [limit] is not between 0 and 1000.
     */
    public suspend fun inspect(limit: Int = 100): LockInspection

    /** See [DistributedSemaphore.delete]. */
    public suspend fun delete()

    /** See [DistributedSemaphore.close]. */
    public fun close()

    /** Not an owner: `lock(5.seconds)` would wait without limit with the Duration as its owner. */
    @Deprecated(DURATION_IS_NOT_AN_OWNER, level = DeprecationLevel.ERROR)
    @JvmSynthetic
    public suspend fun lock(timeout: Duration): Nothing = throw IllegalArgumentException(DURATION_IS_NOT_AN_OWNER)

    /** Not an owner: owners are compared by identity, and a boxed number has none. */
    @Deprecated(NUMBER_IS_NOT_AN_OWNER, level = DeprecationLevel.ERROR)
    @JvmSynthetic
    public suspend fun lock(owner: Number): Nothing = throw IllegalArgumentException(NUMBER_IS_NOT_AN_OWNER)

    /** Not an owner: `tryLock(5000)` would not wait; it would try once with 5000 as its owner. */
    @Deprecated(NUMBER_IS_NOT_AN_OWNER, level = DeprecationLevel.ERROR)
    @JvmSynthetic
    public suspend fun tryLock(owner: Number): Nothing = throw IllegalArgumentException(NUMBER_IS_NOT_AN_OWNER)

    /** Not an owner: `lock(Duration.ofMillis(50))` would wait without limit with the `java.time.Duration` as its owner. */
    @Deprecated(JAVA_DURATION_IS_NOT_AN_OWNER, level = DeprecationLevel.ERROR)
    @JvmSynthetic
    public suspend fun lock(timeout: java.time.Duration): Nothing = throw IllegalArgumentException(JAVA_DURATION_IS_NOT_AN_OWNER)

    /** Not an owner: `tryLock(Duration.ofSeconds(5))` would try once with the `java.time.Duration` as its owner. */
    @Deprecated(JAVA_DURATION_IS_NOT_AN_OWNER, level = DeprecationLevel.ERROR)
    @JvmSynthetic
    public suspend fun tryLock(owner: java.time.Duration): Nothing = throw IllegalArgumentException(JAVA_DURATION_IS_NOT_AN_OWNER)
}

private const val JAVA_DURATION_IS_NOT_AN_OWNER =
    "a java.time.Duration is not an owner, and lock() has no timeout: for a timeout, pass a kotlin.time.Duration, " +
        "tryLock(timeout.toKotlinDuration()), which returns null when the time runs out"

private const val DURATION_IS_NOT_AN_OWNER =
    "lock() has no timeout, and a Duration would be taken for its owner: use tryLock(timeout), which returns null when the time runs out"

private const val NUMBER_IS_NOT_AN_OWNER =
    "a number is not an owner: owners are compared by identity, and a boxed number has none. " +
        "For a timed wait use tryLock(timeout) with a Duration"

/**
 * A [DistributedLock]: a [SemaphoreHandle] of one permit, and the owners that hold it through this
 * client ([owners], shared by every handle on the client, one entry per held lock with an owner).
 */
internal class LockHandle(val semaphore: SemaphoreHandle, private val owners: ConcurrentHashMap<OwnerKey, Any>) : DistributedLock {
    override val name: String get() = semaphore.name

    /** An owner of the lock [name], compared by identity. */
    class OwnerKey(val name: String, val owner: Any) {
        override fun equals(other: Any?): Boolean = other is OwnerKey && other.name == name && other.owner === owner
        override fun hashCode(): Int = name.hashCode() * 31 + System.identityHashCode(owner)
    }

    override suspend fun lock(owner: Any?): Lease = owned(owner) { semaphore.acquire(1) }!!

    override suspend fun tryLock(owner: Any?): Lease? = owned(owner) { semaphore.tryAcquire(1) }

    override suspend fun tryLock(timeout: Duration, owner: Any?): Lease? = owned(owner) { semaphore.tryAcquire(timeout, 1) }

    /**
     * Takes the lock by [take] for [owner]: the owner's entry is reserved first (so that the same owner
     * locking twice at once is refused too), filled with the lease, and removed when the lease ends or
     * if [take] gets none.
     */
    private suspend fun owned(owner: Any?, take: suspend () -> Lease?): Lease? {
        if (owner == null) return take()
        val key = OwnerKey(name, owner)
        check(owners.putIfAbsent(key, RESERVED) == null) {
            "$owner already holds (or is locking) the lock $name through this client: it is not reentrant"
        }
        val lease = try {
            take()
        } catch (e: Throwable) {
            owners.remove(key)
            throw e
        }
        if (lease == null) {
            owners.remove(key)
            return null
        }
        owners[key] = lease
        lease.end.invokeOnCompletion { owners.remove(key, lease) }
        return lease
    }

    override fun holdsLock(owner: Any): Boolean = (owners[OwnerKey(name, owner)] as? Lease)?.end?.isCompleted == false

    private companion object {
        /** The entry of an owner whose lock request is under way. */
        val RESERVED = Any()
    }

    override suspend fun unlock(lease: Lease) = semaphore.release(lease)
    override suspend fun renew(lease: Lease) = semaphore.renew(lease)
    override suspend fun isLocked(): Boolean = semaphore.availablePermits() <= 0
    override suspend fun queueLength(): Int = semaphore.queueLength()

    override suspend fun inspect(limit: Int): LockInspection {
        checkInspectLimit(limit)
        val seen = semaphore.inspect(maxOf(limit, 1)) // the holder is listed even for limit 0
        val holder = seen.holders.firstOrNull()
        val owner = if (holder == null || !holder.isThisClient) {
            null
        } else {
            owners.entries.firstOrNull { (key, value) -> key.name == name && (value as? Lease)?.id == holder.leaseId }?.key?.owner
        }
        return LockInspection(name, seen.exists, holder, owner, seen.line.take(limit), seen.queueLength)
    }
    override suspend fun delete() = semaphore.delete()
    override fun close() = semaphore.close()
    override fun toString(): String = "DistributedLock(name=$name)"
}
