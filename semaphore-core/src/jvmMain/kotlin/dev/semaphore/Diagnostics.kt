package dev.semaphore

import dev.semaphore.internal.WeakRegistry
import kotlin.time.Duration
import kotlin.time.TimeSource
import kotlin.time.toJavaDuration
import kotlin.time.toKotlinDuration

/**
 * What a primitive reports about itself, chosen at its creation:
 * `Semaphore(8, Diagnostics(name = "db", tracking = Tracking.HOLDERS, longHoldThreshold = 30.seconds))` in
 * Kotlin, `AsyncSemaphore.create(8, Diagnostics.named("db").withTracking(Tracking.HOLDERS))` in Java.
 * Every primitive keeps its counts and counters ([Inspectable.snapshot]) and can take listeners
 * ([Inspectable.addListener]) whatever this says; the options here add what costs something, and
 * are off by default ([NONE]). The whole story, with the costs measured, is in docs/diagnostics.md.
 *
 * - [name] labels the primitive in its snapshot, dump, metrics and events, and lists it in the
 *   process-wide list of named primitives ([namedPrimitives], [dumpAll]), which holds it weakly: a
 *   primitive nobody else references leaves the list when it is garbage-collected. Names need not be
 *   unique, but metrics are easier to read when they are. Costs nothing per call.
 * - [tracking] records every hold and every request in line, with who asked and since when
 *   ([Inspectable.holders], [Inspectable.waiters], [Inspectable.dump]), and JFR events for its waits and
 *   holds. It makes the primitive *observed*: each call takes its internal lock (see [SemaphoreListener]).
 * - [longHoldThreshold]: a hold that lasts longer is reported once, to the listeners
 *   ([SemaphoreListener.onLongHold]), to JFR (`dev.semaphore.LongHold`) and to the log (System.Logger
 *   "dev.semaphore", WARNING), and again when it ends. Implies tracking of holders.
 * - [detectDeadlocksAfter], for a [Lock] or a [ReadWriteLock] only: when a request has waited this long,
 *   the library looks for a cycle of participants each waiting for what the next holds, among every
 *   lock created with this option ([findDeadlocks] looks on demand). A deadlock found is reported once
 *   to the listeners of each lock in it ([SemaphoreListener.onDeadlock]), to JFR
 *   (`dev.semaphore.Deadlock`) and to the log (ERROR). Implies tracking of holders. [Deadlock] says who
 *   a participant is.
 *
 * @property name the primitive's name: 1 to 200 characters, not blank; null for none.
 * @property tracking what to record about holders and waiters.
 * @property longHoldThreshold the hold time after which a hold is reported, or null for none.
 * - [timeSource]: the clock that the durations of holds and waits are read on (their `since`, `held`, `waited`,
 *   a dump's times): `TimeSource.Monotonic` (null) by default; under kotlinx-coroutines-test pass the test's
 *   virtual clock, `Diagnostics(tracking = Tracking.HOLDERS, timeSource = testScheduler.timeSource)`, so that a
 *   100 ms virtual wait reads 100 ms. The watches (long holds, deadlocks) still wait in real time.
 *
 * @property timeSource the clock of the recorded durations, or null for `TimeSource.Monotonic`.
 */
public class Diagnostics(
    public val name: String? = null,
    public val tracking: Tracking = Tracking.OFF,
    public val longHoldThreshold: Duration? = null,
    public val detectDeadlocksAfter: Duration? = null,
    public val timeSource: TimeSource? = null,
) {
    init {
        if (name != null) {
            require(name.isNotBlank() && name.length <= MAX_NAME) {
                "a name must be 1 to $MAX_NAME characters and not blank, was \"$name\" (${name.length} characters)"
            }
        }
        if (longHoldThreshold != null) {
            require(longHoldThreshold.isPositive() && longHoldThreshold.isFinite()) {
                "longHoldThreshold must be positive and finite, was $longHoldThreshold"
            }
        }
        if (detectDeadlocksAfter != null) {
            require(detectDeadlocksAfter.isPositive() && detectDeadlocksAfter.isFinite()) {
                "detectDeadlocksAfter must be positive and finite, was $detectDeadlocksAfter"
            }
        }
    }

    /** These diagnostics with [tracking] (Java: `Diagnostics.named("db").withTracking(Tracking.HOLDERS)`). */
    public fun withTracking(tracking: Tracking): Diagnostics = Diagnostics(name, tracking, longHoldThreshold, detectDeadlocksAfter, timeSource)

    /** These diagnostics with a long-hold threshold (Java); null for none. */
    public fun withLongHoldThreshold(threshold: java.time.Duration?): Diagnostics =
        Diagnostics(name, tracking, threshold?.toKotlinDuration(), detectDeadlocksAfter, timeSource)

    /** These diagnostics with deadlock detection after [wait] (Java); null for none. See [detectDeadlocksAfter]. */
    public fun withDeadlockDetection(wait: java.time.Duration?): Diagnostics =
        Diagnostics(name, tracking, longHoldThreshold, wait?.toKotlinDuration(), timeSource)

    /** The long-hold threshold as a `java.time.Duration` (Java), or null. */
    public fun longHoldThresholdTime(): java.time.Duration? = longHoldThreshold?.toJavaDuration()

    /** True if a primitive made with these diagnostics is observed from its creation. */
    internal val observesFromCreation: Boolean
        get() = tracking != Tracking.OFF || longHoldThreshold != null || detectDeadlocksAfter != null

    internal fun longHoldThresholdText(): String = longHoldThreshold.toString()

    override fun toString(): String = buildString {
        append("Diagnostics(")
        val parts = ArrayList<String>(3)
        if (name != null) parts += "name=\"$name\""
        if (tracking != Tracking.OFF) parts += "tracking=$tracking"
        if (longHoldThreshold != null) parts += "longHoldThreshold=$longHoldThreshold"
        if (detectDeadlocksAfter != null) parts += "detectDeadlocksAfter=$detectDeadlocksAfter"
        if (timeSource != null) parts += "timeSource=$timeSource"
        append(if (parts.isEmpty()) "none" else parts.joinToString(", "))
        append(')')
    }

    public companion object {
        /** No name, nothing beyond the snapshot: the default of every factory. */
        @JvmField
        public val NONE: Diagnostics = Diagnostics()

        /** The longest name accepted. */
        public const val MAX_NAME: Int = 200

        /** Diagnostics with a [name] and nothing else (Java: `Diagnostics.named("db")`). */
        @JvmStatic
        public fun named(name: String): Diagnostics = Diagnostics(name)

        /** The named primitives alive now, in the order they were created. */
        @JvmStatic
        public fun namedPrimitives(): List<Inspectable> = NamedPrimitives.list()

        /**
         * The deadlocks among the locks created with [detectDeadlocksAfter], now: each cycle once, confirmed
         * by a second look (see [Deadlock]). Empty if there is none.
         */
        @JvmStatic
        public fun findDeadlocks(): List<Deadlock> = dev.semaphore.internal.Deadlocks.find()

        /** The dump ([Inspectable.dump]) of every named primitive alive now, one after the other. */
        @JvmStatic
        public fun dumpAll(): String = namedPrimitives().joinToString("\n") { it.dump() }
    }
}

/** What a primitive records about its holders and waiters ([Diagnostics.tracking]). */
public enum class Tracking {
    /** Nothing beyond counts and counters (unless a listener is added). */
    OFF,

    /** Every hold and every request in line: who, how many, since when, until when. */
    HOLDERS,

    /** As [HOLDERS], plus the stack of each acquisition and request (costly: a stack walk per call). */
    HOLDERS_AND_STACKS,
}

/**
 * The process-wide list of named primitives, held weakly. Its size is the number of named primitives
 * alive, plus those collected since the last registration or listing (purged by both).
 */
internal object NamedPrimitives {
    private val registry = WeakRegistry<Inspectable>()

    fun register(primitive: Inspectable) {
        registry.add(primitive)
        dev.semaphore.internal.Jfr.registerStatistics()
    }

    fun list(): List<Inspectable> = registry.list()

    /** How many entries are kept now (for the tests of the bound). */
    fun size(): Int = registry.size()
}

/**
 * Diagnostics for every primitive of the process, chosen without changing code: the system property
 * `dev.semaphore.diagnostics` (docs/diagnostics.md, "Turning it on for a whole process"), a comma-separated
 * list of `tracking=holders|stacks`, `longHolds=<duration>`, `deadlocks=<duration>` (Locks and ReadWriteLocks
 * only) and `listener=<class name>` (a public class with a public no-argument constructor, made once and
 * added to every primitive). Durations are read by `kotlin.time.Duration.parse`: `30s`, `1m 30s`, `PT0.5S`.
 * Each primitive takes them at its creation, on top of its own [Diagnostics]: the higher tracking, its own
 * threshold and deadlock wait if it has one, else the process's.
 */
internal object ProcessDiagnostics {
    const val PROPERTY: String = "dev.semaphore.diagnostics"

    private class Parsed(
        val text: String,
        val tracking: Tracking,
        val longHolds: Duration?,
        val deadlocks: Duration?,
        val listener: SemaphoreListener?,
    )

    @Volatile
    private var parsed: Parsed? = null

    private fun current(): Parsed? {
        val text = System.getProperty(PROPERTY)?.takeIf { it.isNotBlank() } ?: return null
        parsed?.let { if (it.text == text) return it }
        return parse(text).also { parsed = it }
    }

    /** [config] as a primitive of [kind] takes it, with the process's diagnostics on top. */
    fun apply(config: Diagnostics, kind: String): Diagnostics {
        val p = current() ?: return config
        val tracking = if (p.tracking > config.tracking) p.tracking else config.tracking
        val longHolds = config.longHoldThreshold ?: p.longHolds
        val deadlocks = config.detectDeadlocksAfter ?: if (kind == "Lock" || kind == "ReadWriteLock") p.deadlocks else null
        if (tracking == config.tracking && longHolds == config.longHoldThreshold && deadlocks == config.detectDeadlocksAfter) return config
        return Diagnostics(config.name, tracking, longHolds, deadlocks, config.timeSource)
    }

    /** The process's listener, or null. */
    fun listener(): SemaphoreListener? = current()?.listener

    private fun parse(text: String): Parsed {
        var tracking = Tracking.OFF
        var longHolds: Duration? = null
        var deadlocks: Duration? = null
        var listener: SemaphoreListener? = null
        for (part in text.split(',')) {
            val key = part.substringBefore('=').trim()
            val value = part.substringAfter('=', "").trim()
            fun bad(why: String): Nothing =
                throw IllegalArgumentException("system property $PROPERTY=\"$text\": $why in \"${part.trim()}\" $FORMAT")
            fun duration(): Duration {
                val d = try {
                    Duration.parse(value)
                } catch (e: IllegalArgumentException) {
                    bad("\"$value\" is not a duration")
                }
                if (!d.isPositive() || !d.isFinite()) bad("the duration must be positive and finite")
                return d
            }
            when (key) {
                "tracking" -> tracking = when (value) {
                    "holders" -> Tracking.HOLDERS
                    "stacks" -> Tracking.HOLDERS_AND_STACKS
                    "off" -> Tracking.OFF
                    else -> bad("tracking is holders, stacks or off, not \"$value\"")
                }
                "longHolds" -> longHolds = duration()
                "deadlocks" -> deadlocks = duration()
                "listener" -> listener = try {
                    Class.forName(value).getConstructor().newInstance() as SemaphoreListener
                } catch (e: ReflectiveOperationException) {
                    bad("no public class \"$value\" with a public no-argument constructor (${e.javaClass.simpleName})")
                } catch (e: ClassCastException) {
                    bad("\"$value\" is not a dev.semaphore.SemaphoreListener")
                }
                else -> bad("unknown option \"$key\"")
            }
        }
        return Parsed(text, tracking, longHolds, deadlocks, listener)
    }

    private const val FORMAT = "(options: tracking=holders|stacks, longHolds=<duration>, deadlocks=<duration>, listener=<class name>)"
}
