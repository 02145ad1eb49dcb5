@file:Suppress("INAPPLICABLE_JVM_NAME")

package dev.semaphore

import dev.semaphore.internal.UNKNOWN_NANOS
import dev.semaphore.internal.WallClock
import java.time.Duration
import java.time.Instant

/**
 * Told what happens to a primitive: added with [Inspectable.addListener], from Kotlin or Java (every
 * method has an empty default, so implement only what you need). One interface for every primitive.
 *
 * **When and where it runs.** A primitive with a listener (or with holder tracking, a long-hold
 * threshold or deadlock detection, see [Diagnostics]) is *observed*: all its calls take the internal
 * lock, which is what makes every acquisition visible, and costs about one uncontended lock per call
 * (measured in docs/benchmarks.md). A primitive that is not observed pays one read on its slow paths
 * and nothing on its lock-free paths. The methods run on the thread whose call caused the event, after
 * the primitive's lock is released: a grant made by a release is reported on the releasing thread;
 * a long hold on the library's diagnostics thread. They must be quick and must not block. An exception
 * thrown by a listener is logged (System.Logger "dev.semaphore") and does not reach the caller.
 *
 * What a listener sees is exact for what happened while it was added: a hold taken before is reported
 * at its release with an unknown start ([HoldInfo.since] null).
 */
public interface SemaphoreListener {
    /** [hold] was granted, after waiting [waited] in line ([Duration.ZERO] if granted at once). */
    public fun onAcquired(primitive: Inspectable, hold: HoldInfo, waited: Duration) {}

    /** [hold] ended; [HoldInfo.held] is how long it lasted (null if it began before observation). */
    public fun onReleased(primitive: Inspectable, hold: HoldInfo) {}

    /**
     * A Java `Permit` for [hold] was garbage-collected without being closed, its permits still held
     * through it: a leak, reported once, on the library's leak thread ("semaphore-leaks"). Nothing is
     * given back: code may still end the hold anonymously (`release(n)`, `unlock()`), and giving back
     * first would let a second holder in. [HoldInfo.held] is how long it had been held when found;
     * [HoldInfo.stack] the acquiring stack, if captured. Watched only for permits handed out while the
     * primitive was observed (docs/diagnostics.md, "Leaks").
     */
    public fun onLeak(primitive: Inspectable, hold: HoldInfo) {}

    /** A `try` form (without a timeout, or with one of zero) took nothing. */
    public fun onRefused(primitive: Inspectable, permits: Int) {}

    /** [request] left the line because its timeout passed; [WaitInfo.waited] is how long it waited. */
    public fun onTimedOut(primitive: Inspectable, request: WaitInfo) {}

    /** [request] left the line because its caller went away (a cancelled coroutine or future, an interrupted thread). */
    public fun onCancelled(primitive: Inspectable, request: WaitInfo) {}

    /** The primitive was closed; [failedRequests] requests in line failed with [SemaphoreClosedException]. */
    public fun onClosed(primitive: Inspectable, cause: Throwable?, failedRequests: Int) {}

    /** The total changed (addPermits, reducePermits). */
    public fun onResized(primitive: Inspectable, oldTotal: Int, newTotal: Int) {}

    /** [hold] has lasted longer than the primitive's long-hold threshold; reported once per hold. */
    public fun onLongHold(primitive: Inspectable, hold: HoldInfo) {}

    /** A hold reported by [onLongHold] ended at last, after [HoldInfo.held]. */
    public fun onLongHoldReleased(primitive: Inspectable, hold: HoldInfo) {}

    /**
     * [deadlock] was found by the watch of [Diagnostics.detectDeadlocksAfter], and [primitive] is one of
     * the primitives in its cycle (each of their listeners is told once). Reported once per deadlock,
     * on the library's diagnostics thread.
     */
    public fun onDeadlock(primitive: Inspectable, deadlock: Deadlock) {}
}

/** Stops a listener added by [Inspectable.addListener]; closing twice does nothing. */
public fun interface ListenerRegistration : AutoCloseable {
    override fun close()
}

/**
 * One hold of permits, as inspection, listeners and events show it: who took it, how many, since when.
 * [holder] names the taker as well as it is known: a coroutine (its `CoroutineName` and `Job`), a
 * thread, a future's requesting thread, or a Lock's owner.
 */
public class HoldInfo internal constructor(
    /** Who took it, described when first asked (its toString), so that nothing is formatted under a lock. */
    internal val who: Any,
    /** The Lock's owner object, or null (no owner, or not a Lock). */
    @get:JvmName("owner") public val owner: Any?,
    /** The permits of this hold. */
    @get:JvmName("permits") public val permits: Int,
    /** System.nanoTime() when it was granted, or [UNKNOWN_NANOS]. */
    private val sinceNanos: Long,
    /** How long it had lasted when this was taken, in nanoseconds, or [UNKNOWN_NANOS]. */
    private val heldNanos: Long,
    /** Where it was acquired, if stacks are captured ([Tracking.HOLDERS_AND_STACKS]); else empty. */
    @get:JvmName("stack") public val stack: List<StackTraceElement>,
) {
    // The times are kept as numbers and made into objects when asked: a listener that reads nothing
    // costs no Instant, Duration or String per event.
    private var holderText: String? = null

    /** When it was granted (wall clock), or null if it began before the primitive was observed. */
    @get:JvmName("since")
    public val since: Instant? get() = if (sinceNanos == UNKNOWN_NANOS) null else WallClock.at(sinceNanos)

    /** How long it has lasted (at release: how long it lasted), or null if unknown. */
    @get:JvmName("held")
    public val held: Duration? get() = if (heldNanos == UNKNOWN_NANOS) null else Duration.ofNanos(heldNanos)

    /** Who took the hold, in words: `coroutine "fetch" StandaloneCoroutine{Active}@5e2de80c`, `thread "main"`, `owner alice (...)`. */
    @get:JvmName("holder")
    public val holder: String get() = holderText ?: who.toString().also { holderText = it } // a race formats it twice, harmlessly

    /** Who took the hold, as fields: its kind, coroutine, thread, owner ([Caller]); its text is [holder]. */
    @get:JvmName("caller")
    public val caller: Caller get() = Caller.of(who)

    override fun toString(): String = buildString {
        append(permits).append(if (permits == 1) " permit" else " permits").append(" held by ").append(holder)
        held?.let { append(" for ").append(formatDuration(it)) }
        appendStack(stack)
    }
}

/** One request waiting in line, as inspection, listeners and events show it. */
public class WaitInfo internal constructor(
    /** Who waits, described when first asked (its toString). */
    internal val who: Any,
    /** The Lock's owner object, or null. */
    @get:JvmName("owner") public val owner: Any?,
    /** The permits asked for. */
    @get:JvmName("permits") public val permits: Int,
    /** The priority asked for (0 except on a [PrioritySemaphore]). */
    @get:JvmName("priority") public val priority: Int,
    /** The priority it is served at now, after aging (as [priority] without aging). */
    @get:JvmName("effectivePriority") public val effectivePriority: Int,
    /** System.nanoTime() when it joined the line. */
    private val sinceNanos: Long,
    /** How long it had waited when this was taken, in nanoseconds. */
    private val waitedNanos: Long,
    /** System.nanoTime() when its timeout ends, or [UNKNOWN_NANOS]. */
    private val deadlineNanos: Long,
    /** Where it asked, if stacks are captured; else empty. */
    @get:JvmName("stack") public val stack: List<StackTraceElement>,
) {
    private var requesterText: String? = null

    /** When it joined the line (wall clock). */
    @get:JvmName("since")
    public val since: Instant get() = WallClock.at(sinceNanos)

    /** How long it has waited (at the end of the wait: how long it waited). */
    @get:JvmName("waited")
    public val waited: Duration get() = Duration.ofNanos(waitedNanos)

    /** When its timeout ends, or null if it waits without one (or its timeout is not the library's: a `withTimeout` around `acquire`). */
    @get:JvmName("deadline")
    public val deadline: Instant? get() = if (deadlineNanos == UNKNOWN_NANOS) null else WallClock.at(deadlineNanos)

    /** Who waits, in words (as [HoldInfo.holder]). */
    @get:JvmName("requester")
    public val requester: String get() = requesterText ?: who.toString().also { requesterText = it }

    /** Who waits, as fields: its kind, coroutine, thread, owner ([Caller]); its text is [requester]. */
    @get:JvmName("caller")
    public val caller: Caller get() = Caller.of(who)

    override fun toString(): String = buildString {
        append(requester).append(" waits for ").append(permits).append(if (permits == 1) " permit" else " permits")
        if (priority != 0 || effectivePriority != priority) {
            append(" at priority ").append(priority)
            if (effectivePriority != priority) append(" (now ").append(effectivePriority).append(')')
        }
        append(" since ").append(formatDuration(waited)).append(" ago")
        deadline?.let { append(", until ").append(it) }
        appendStack(stack)
    }
}

private fun StringBuilder.appendStack(stack: List<StackTraceElement>) {
    for (frame in stack) append("\n        at ").append(frame)
}
