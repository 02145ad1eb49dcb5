@file:Suppress("INAPPLICABLE_JVM_NAME")

package dev.semaphore

/**
 * A cycle of participants each waiting for what the next holds, found among the [Lock]s and
 * [ReadWriteLock]s created with [Diagnostics.detectDeadlocksAfter] ([Diagnostics.findDeadlocks], or
 * [SemaphoreListener.onDeadlock]). No participant can go on until one of them gives up: a timeout, a
 * cancellation, or a close.
 *
 * A participant is who holds and who waits, as the library knows it: a Lock's owner if one was given;
 * otherwise the coroutine (its launched coroutine: a `withContext`, `coroutineScope` or `withTimeout`
 * inside it is the same participant); otherwise the thread that blocked or asked for a future. So a
 * chain of futures whose callbacks run on other threads is not followed: a future's request belongs to
 * the thread that made it.
 */
public class Deadlock internal constructor(
    /** The participants, each waiting for something the next one holds or is ahead of it in line for (the last waits for the first). */
    @get:JvmName("participants") public val participants: List<DeadlockParticipant>,
) {
    override fun toString(): String = buildString {
        append("deadlock of ").append(participants.size).append(if (participants.size == 1) " participant:" else " participants:")
        for (p in participants) append("\n  ").append(p.toString().replace("\n", "\n  "))
    }
}

/** One participant of a [Deadlock]: who it is, what it waits for, and what it holds. */
public class DeadlockParticipant internal constructor(
    /** Who, in words: `coroutine "transfer" ...`, `thread "worker-1"`, `owner alice (...)`. */
    @get:JvmName("who") public val who: String,
    /** The primitive it waits on, in words: `Lock "accounts"`. */
    @get:JvmName("waitsOn") public val waitsOn: String,
    /** Its request in that primitive's line. */
    @get:JvmName("request") public val request: WaitInfo,
    /** What it holds, one entry per hold: `Lock "ledger": 1 permit for 2.0s`. */
    @get:JvmName("holds") public val holds: List<String>,
    /** Why it waits for the next participant: `held by the next` or `behind the next in line`. */
    @get:JvmName("blockedBecause") public val blockedBecause: String,
) {
    /** Who, as fields ([Caller]): the caller of its [request]; its text is [who]. */
    @get:JvmName("caller") public val caller: Caller get() = request.caller

    override fun toString(): String = buildString {
        append(who).append("\n  waits on ").append(waitsOn).append(" for ").append(request.permits)
        append(if (request.permits == 1) " permit" else " permits").append(" (").append(blockedBecause).append(")")
        request.waited.let { append(", since ").append(formatDuration(it)).append(" ago") }
        for (frame in request.stack) append("\n      at ").append(frame)
        for (h in holds) append("\n  holds ").append(h.replace("\n", "\n  "))
    }
}
