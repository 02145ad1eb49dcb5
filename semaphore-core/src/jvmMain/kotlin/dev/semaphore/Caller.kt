package dev.semaphore

import dev.semaphore.internal.Requester
import kotlinx.coroutines.Job

/**
 * Who took a hold or made a request, as fields ([HoldInfo.caller], [WaitInfo.caller], [DeadlockParticipant.caller]):
 * find "your" hold by its [job], [thread] or [owner] instead of matching text. Its `toString` is the text
 * that dumps print (`coroutine "fetch" StandaloneCoroutine{Active}@5e2de80c`, `thread "main"`). How each is
 * decided is in docs/diagnostics.md, "Who holds".
 */
public class Caller internal constructor(private val requester: Requester?, private val text: String) {
    /** What kind of caller this is. */
    public enum class Kind {
        /** A coroutine: a suspending call ([job] and [coroutineName] say which). */
        COROUTINE,

        /** A thread: a blocking call, or a non-suspending call (which cannot see a coroutine). */
        THREAD,

        /** A Java future: the request itself ([thread] is the thread that made it, which does not wait for it). */
        FUTURE,

        /** `drainPermits()`. */
        DRAIN,

        /** A `Lock` created with `locked = true`. */
        CREATED_LOCKED,

        /** Permits whose holder anonymous releases left unknown (docs/diagnostics.md, "Who holds"). */
        UNATTRIBUTED,

        /** A hold taken before the primitive was observed, seen only at its release. */
        BEFORE_OBSERVATION,
    }

    /** The kind of caller. */
    @get:JvmName("kind")
    public val kind: Kind get() = requester?.kind() ?: Kind.BEFORE_OBSERVATION

    /** The launched coroutine's Job (a scope inside it, such as `withContext`, is the same caller), or null. */
    @get:JvmName("job")
    public val job: Job? get() = requester?.job as Job?

    /** The coroutine's `CoroutineName`, or null. */
    @get:JvmName("coroutineName")
    public val coroutineName: String? get() = requester?.coroutineNameOrNull()

    /** The thread the call was made on (for a coroutine: the thread it ran on when it asked), or null. */
    @get:JvmName("thread")
    public val thread: Thread? get() = requester?.thread

    /** A `Lock`'s owner, or null. */
    @get:JvmName("owner")
    public val owner: Any? get() = requester?.owner

    override fun toString(): String = text

    internal companion object {
        fun of(who: Any): Caller = if (who is Requester) Caller(who, who.describe()) else Caller(null, who.toString())
    }
}
