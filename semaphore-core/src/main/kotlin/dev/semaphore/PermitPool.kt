package dev.semaphore

import dev.semaphore.internal.Grantee
import dev.semaphore.internal.PermitWaiter
import dev.semaphore.internal.WaitOrder
import dev.semaphore.internal.WaiterQueue
import dev.semaphore.internal.WaiterQueueOwner
import dev.semaphore.internal.addListenerFor
import dev.semaphore.internal.attach
import dev.semaphore.internal.dumpOf
import dev.semaphore.internal.holdersNow
import dev.semaphore.internal.waitersNow
import dev.semaphore.internal.toSnapshot
import kotlin.time.TimeSource
import kotlin.jvm.JvmField

/**
 * What [Semaphore] and [PrioritySemaphore] have in common: a count of permits that can be given
 * back, resized, inspected and closed. Acquisition differs (a priority or not), so it lives in the
 * two sub-interfaces.
 *
 * Counts: every `permits` argument must be at least 1, or `IllegalArgumentException` is thrown and
 * nothing changes.
 */
public interface PermitPool : Inspectable {
    /**
     * The permits free right now. It is below zero while [reducePermits] has taken permits that are
     * still held (a debt that releases repay before anyone is granted). A snapshot: it may be stale
     * as soon as it is read.
     */
    public val availablePermits: Int

    /**
     * The permits that exist: held plus available. It changes only by [addPermits] and
     * [reducePermits]; no request for more than this can ever be granted. A snapshot.
     */
    public val totalPermits: Int

    /** The number of waiters queued right now (a snapshot). */
    public val queueLength: Int

    /** True once [close] was called. */
    public val isClosed: Boolean

    /**
     * Gives back [permits] permits. The waiter first in line is granted as soon as its whole request
     * fits, then the next, and so on.
     *
     * ```kotlin
     * semaphore.acquire(2)
     * try { work() } finally { semaphore.release(2) }
     * ```
     * @throws IllegalArgumentException if [permits] < 1.
     * @throws IllegalStateException if more permits would be available than exist (over-release); nothing changes.
     */
    public fun release(permits: Int = 1)

    /**
     * Adds [permits] permits to the total (and to the free count); waiters that now fit are granted.
     * @throws IllegalArgumentException if [permits] < 1 or the total would exceed `Int.MAX_VALUE`.
     */
    public fun addPermits(permits: Int)

    /**
     * Removes [permits] permits from the total, without waiting for holders: [availablePermits] may go
     * below zero, and later releases repay that debt before any waiter is granted. A queued request
     * that no longer fits in the new total fails with `IllegalStateException` when it reaches the
     * head of the line (rather than blocking everyone behind it forever).
     * @throws IllegalArgumentException if [permits] < 1 or greater than the current total.
     */
    public fun reducePermits(permits: Int)

    /** Takes every permit free right now, whoever is waiting, and returns how many (0 if none or in debt). */
    public fun drainPermits(): Int

    /**
     * Closes this semaphore: every queued waiter fails with [SemaphoreClosedException] carrying
     * [cause], and every later acquisition throws it. Holders may still release (and the permit
     * counts stay exact). Calling it again does nothing; the first cause stays.
     */
    public fun close(cause: Throwable? = null)
}

/**
 * Every engine-backed semaphore: the [WaiterQueue] itself, whose members of the same names
 * (availablePermits, totalPermits, queueLength, isClosed, release, addPermits, reducePermits,
 * drainPermits, close) are the [PermitPool] half, so a fast path is one object away from the caller. A semaphore is the
 * grantee of its own waiters (W4): nothing to record at a grant, and a hand-back is a release.
 */
internal abstract class QueueBackedPool(
    permits: Int,
    order: WaitOrder,
    timeSource: TimeSource?,
    private val diagnostics: Diagnostics,
) : WaiterQueue(permits, order, timeSource), PermitPool, WaiterQueueOwner, Grantee {
    final override val name: String? get() = diagnostics.name

    /** The kind a snapshot names ("Semaphore", "PrioritySemaphore"): a constant, read during construction. */
    abstract val kind: String

    /**
     * The hold of one permit of a Java request that carries no Requester (internal/JavaHolds.kt, J1): it names
     * nobody, so one serves them all, and such a request allocates its handle only. Made on first use; a race
     * makes two, either of which serves (its pool and count are final fields; it is never watched for a leak).
     */
    @JvmField
    internal var anonymousPermit: Any? = null

    init {
        attach(this, kind, diagnostics)
    }

    final override fun snapshot(): SemaphoreSnapshot = readCounts { it.toSnapshot(kind, name) }

    final override fun addListener(listener: SemaphoreListener): ListenerRegistration =
        this.addListenerFor(this, kind, diagnostics, listener)

    final override fun holders(): List<HoldInfo> = this.holdersNow()

    final override fun waiters(): List<WaitInfo> = this.waitersNow()

    final override fun dump(): String = dumpOf(this)

    final override val waiterQueue: WaiterQueue get() = this

    final override val queue: WaiterQueue get() = this

    final override fun granted(w: PermitWaiter) {}

    final override fun handBack(w: PermitWaiter) = release(w.permits)

    /** Only permits are counted here, so a coroutine's waiter may serve its next wait (Suspending.kt, C4). */
    final override val reusesWaiters: Boolean get() = true
}
