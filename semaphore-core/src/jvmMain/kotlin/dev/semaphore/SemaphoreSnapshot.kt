@file:Suppress("INAPPLICABLE_JVM_NAME")

package dev.semaphore

import java.time.Duration

/**
 * What a primitive looks like at one moment: its counts, its line, and counters since its creation.
 * Taken by [Inspectable.snapshot] (Kotlin and Java alike: Java reads each value by a method of the
 * same name, `snapshot.availablePermits()`), for dashboards, logs and tests.
 *
 * **Cost**: one pass through the primitive's internal lock, like any other slow-path call; nothing
 * is recorded on the acquire and release paths to keep these figures except the counters, which cost
 * a plain (non-atomic) increment on the lock-free paths and are otherwise kept under the lock.
 *
 * **Consistency** (weak): the permit counts, the line and the counters kept under the lock are read
 * at one instant and are exact for it: [totalPermits], [availablePermits], [heldPermits],
 * [queuedRequests], [queuedPermits], [queuedByPriority], [acquiredAfterWait], [timedOut], [cancelled],
 * [failedByClose]. Not exact: [acquired] and [tryRefused] also count calls that took the lock-free path,
 * with a plain increment, so a count can be lost when two threads take that path in the same instant,
 * and they may include calls in progress at the instant or finished just after it; the holds of a [ReadWriteLock]
 * ([readHolds], [writeLocked], [upgradableHeld]) are read just after the instant, and a caller between
 * its two steps (permits taken, hold not yet recorded) shows in [heldPermits] but not yet there.
 *
 * **Permits**: a [Lock] has one permit (held while locked). A [ReadWriteLock] is a semaphore of
 * [totalPermits] = N permits inside (a read hold takes 1, a write hold all N, an upgradable read N/2 + 1),
 * so its permit figures are in those units; [readHolds], [writeLocked] and [upgradableHeld] say it plainly.
 */
public class SemaphoreSnapshot internal constructor(
    /** The kind of primitive: "Semaphore", "PrioritySemaphore", "Lock" or "ReadWriteLock". */
    @get:JvmName("kind") public val kind: String,
    /** The name given at creation ([Diagnostics.name]), or null. */
    @get:JvmName("name") public val name: String?,
    /** Permits that exist: held plus available. */
    @get:JvmName("totalPermits") public val totalPermits: Int,
    /** Permits free now; below zero while a reduction's debt is repaid (see [PermitPool.reducePermits]). */
    @get:JvmName("availablePermits") public val availablePermits: Int,
    /** Requests waiting in line. */
    @get:JvmName("queuedRequests") public val queuedRequests: Int,
    /**
     * The permits those requests ask for, together: a `Long`, because many requests of up to [totalPermits] each
     * can ask for more than an `Int` holds (as [heldPermits] can exceed [totalPermits] while a reduction's debt is
     * repaid). A count of permits that exist or are free is an `Int`, as the primitives take it.
     */
    @get:JvmName("queuedPermits") public val queuedPermits: Long,
    /**
     * Requests waiting per priority, highest priority first, levels with waiters only; empty except for a
     * [PrioritySemaphore].
     */
    @get:JvmName("queuedByPriority") public val queuedByPriority: Map<Int, Int>,
    /** How long the oldest request in line has waited, or null if none waits or waits are not timed. */
    @get:JvmName("oldestWait") public val oldestWait: Duration?,
    /** True after close. */
    @get:JvmName("isClosed") public val isClosed: Boolean,
    /** Acquisitions since creation, with or without waiting (not exact: see the class comment). */
    @get:JvmName("acquired") public val acquired: Long,
    /** Acquisitions since creation that waited in line first. */
    @get:JvmName("acquiredAfterWait") public val acquiredAfterWait: Long,
    /** `tryAcquire`/`tryLock` calls (without a timeout, or with one of zero) that took nothing (not exact: see above). */
    @get:JvmName("tryRefused") public val tryRefused: Long,
    /** Requests that left the line because their timeout passed. */
    @get:JvmName("timedOut") public val timedOut: Long,
    /** Requests that left the line because their caller went away: a cancelled coroutine or future, an interrupted thread. */
    @get:JvmName("cancelled") public val cancelled: Long,
    /** Requests failed by close: those waiting at the close and those made after it. */
    @get:JvmName("failedByClose") public val failedByClose: Long,
    /** Read holds now; 0 except for a [ReadWriteLock]. */
    @get:JvmName("readHolds") public val readHolds: Int,
    /** Whether the write hold is taken; false except for a [ReadWriteLock]. */
    @get:JvmName("writeLocked") public val writeLocked: Boolean,
    /** Whether the upgradable read is taken; false except for a [ReadWriteLock]. */
    @get:JvmName("upgradableHeld") public val upgradableHeld: Boolean,
) {
    /** Permits held now: [totalPermits] minus [availablePermits]; a `Long`, since it exceeds the total while [availablePermits] is below zero. */
    @get:JvmName("heldPermits")
    public val heldPermits: Long get() = totalPermits.toLong() - availablePermits

    /** One line: `Semaphore "db": 3/8 held, 2 waiting (5 permits, oldest 1.2s), acquired 1042 (17 after waiting), ...`. */
    override fun toString(): String = buildString {
        append(kind)
        if (name != null) append(" \"").append(name).append('"')
        append(": ")
        when (kind) {
            "Lock" -> append(if (heldPermits > 0) "locked" else "unlocked")
            "ReadWriteLock" -> {
                append(readHolds).append(" read holds")
                if (writeLocked) append(", write-locked")
                if (upgradableHeld) append(", upgradable read held")
            }
            else -> append(heldPermits).append('/').append(totalPermits).append(" held")
        }
        append(", ").append(queuedRequests).append(" waiting")
        if (queuedRequests > 0) {
            val details = ArrayList<String>(3)
            if (kind == "Semaphore" || kind == "PrioritySemaphore") details += "$queuedPermits permits"
            if (oldestWait != null) details += "oldest ${formatDuration(oldestWait)}"
            if (queuedByPriority.isNotEmpty()) details += "by priority $queuedByPriority"
            if (details.isNotEmpty()) append(details.joinToString(", ", " (", ")"))
        }
        append(", acquired ").append(acquired).append(" (").append(acquiredAfterWait).append(" after waiting)")
        append(", try refused ").append(tryRefused)
        append(", timed out ").append(timedOut)
        append(", cancelled ").append(cancelled)
        append(", failed by close ").append(failedByClose)
        if (isClosed) append(", closed")
    }
}

/** A short human form: 850ms, 1.2s, 3m4s. */
internal fun formatDuration(d: Duration): String {
    val ms = d.toMillis()
    return when {
        ms < 1_000 -> "${ms}ms"
        ms < 60_000 -> "${ms / 1000}.${(ms % 1000) / 100}s"
        else -> "${ms / 60_000}m${(ms % 60_000) / 1000}s"
    }
}
