/*
 * JFR events of the library, named dev.semaphore.* under the category "Semaphore". jdk.jfr is optional
 * (module-info: requires static): the event classes below are touched only through Jfr, and only when
 * the jdk.jfr module is present, so the core loads and works on a runtime without it.
 */
package dev.semaphore.internal

import dev.semaphore.HoldInfo
import dev.semaphore.WaitInfo
import jdk.jfr.Category
import jdk.jfr.Description
import jdk.jfr.Enabled
import jdk.jfr.Event
import jdk.jfr.EventType
import jdk.jfr.FlightRecorder
import jdk.jfr.Label
import jdk.jfr.Name
import jdk.jfr.Period
import jdk.jfr.StackTrace
import jdk.jfr.Threshold
import jdk.jfr.Timespan

/** The library's one door to JFR: every method is a no-op when jdk.jfr is absent. */
internal object Jfr {
    /** True if the jdk.jfr module is present (checked once, without loading an event class). */
    val available: Boolean = try {
        Class.forName("jdk.jfr.FlightRecorder", false, Jfr::class.java.classLoader)
        FlightRecorder.isAvailable()
        true
    } catch (_: Throwable) {
        false
    }

    /** A wait event begun now, or null if JFR is absent or the event is not enabled. */
    fun beginWait(): Any? = if (available) JfrEvents.beginWait() else null

    /** A hold event begun now, or null. */
    fun beginHold(): Any? = if (available) JfrEvents.beginHold() else null

    /** Commits what [e] ends or reports, after the engine's lock (O2). */
    fun record(o: Observer, e: Pending) {
        if (available) JfrEvents.record(o, e)
    }

    /** A Java handle leaked (JavaHolds.kt, J4): one event, on the leak thread. */
    fun leaked(primitive: String?, kind: String, hold: HoldInfo) {
        if (available) JfrEvents.leaked(primitive, kind, hold)
    }

    /** Records a deadlock found by the watch. */
    fun deadlock(d: dev.semaphore.Deadlock) {
        if (available) JfrEvents.deadlock(d)
    }

    /** Registers the periodic statistics event for the named primitives (once). */
    fun registerStatistics() {
        if (available) JfrEvents.registerStatistics
    }
}

/** Touched only when [Jfr.available]. */
private object JfrEvents {
    // Whether a recording wants the event now: a volatile read, no event object allocated when not.
    private val waitType = EventType.getEventType(WaitEvent::class.java)
    private val holdType = EventType.getEventType(HoldEvent::class.java)

    fun beginWait(): Any? {
        if (!waitType.isEnabled) return null
        val e = WaitEvent()
        e.begin()
        return e
    }

    fun beginHold(): Any? {
        if (!holdType.isEnabled) return null
        val e = HoldEvent()
        e.begin()
        return e
    }

    fun record(o: Observer, e: Pending) {
        when (e) {
            is Pending.Acquired -> (e.jfr as WaitEvent?)?.commit(o, e.request, "granted")
            is Pending.LeftLine -> (e.jfr as WaitEvent?)?.commit(o, e.request, if (e.timedOut) "timed out" else "cancelled")
            is Pending.Failed -> (e.jfr as WaitEvent?)?.commit(o, e.request, "failed")
            is Pending.Released -> (e.jfr as HoldEvent?)?.let { ev ->
                ev.end()
                if (ev.shouldCommit()) {
                    ev.fill(o, e.hold)
                    ev.commit()
                }
            }
            is Pending.LongHold -> {
                val ev = LongHoldEvent()
                if (ev.isEnabled) {
                    ev.primitive = o.name
                    ev.kind = o.kind
                    ev.holder = e.hold.holder
                    ev.permits = e.hold.permits
                    ev.heldFor = e.hold.held?.toNanos() ?: 0L
                    ev.acquiredAt = e.hold.stack.joinToString("\n")
                    ev.commit()
                }
            }
            else -> {}
        }
    }

    fun leaked(primitive: String?, kind: String, hold: HoldInfo) {
        val ev = LeakEvent()
        if (!ev.isEnabled) return
        ev.primitive = primitive
        ev.kind = kind
        ev.holder = hold.holder
        ev.permits = hold.permits
        ev.heldFor = hold.held?.toNanos() ?: 0L
        ev.acquiredAt = hold.stack.joinToString("\n")
        ev.commit()
    }

    fun deadlock(d: dev.semaphore.Deadlock) {
        val ev = DeadlockEvent()
        if (!ev.isEnabled) return
        ev.participants = d.participants.size
        ev.primitives = d.participants.joinToString(", ") { it.waitsOn }
        ev.description = d.toString()
        ev.commit()
    }

    private fun WaitEvent.commit(o: Observer, request: WaitInfo?, outcome: String) {
        end()
        if (!shouldCommit()) return
        primitive = o.name
        kind = o.kind
        this.outcome = outcome
        if (request != null) {
            requester = request.requester
            permits = request.permits
            priority = request.priority
            requestedOn = (request.who as? Requester)?.thread
        }
        commit()
    }

    private fun HoldEvent.fill(o: Observer, hold: HoldInfo) {
        primitive = o.name
        kind = o.kind
        holder = hold.holder
        permits = hold.permits
        takenOn = (hold.who as? Requester)?.thread
    }

    val registerStatistics: Unit by lazy {
        FlightRecorder.addPeriodicEvent(StatisticsEvent::class.java) {
            for (p in dev.semaphore.Diagnostics.namedPrimitives()) {
                val ev = StatisticsEvent()
                if (!ev.isEnabled) return@addPeriodicEvent
                val s = p.snapshot()
                ev.primitive = s.name
                ev.kind = s.kind
                ev.totalPermits = s.totalPermits
                ev.availablePermits = s.availablePermits
                ev.queuedRequests = s.queuedRequests
                ev.acquired = s.acquired
                ev.acquiredAfterWait = s.acquiredAfterWait
                ev.timedOut = s.timedOut
                ev.cancelled = s.cancelled
                ev.commit()
            }
        }
    }
}

@Name("dev.semaphore.Wait")
@Label("Semaphore Wait")
@Category("Semaphore")
@Description(
    "A request that waited in line for permits or a lock: from joining the line to its grant, timeout, cancellation or " +
        "failure. Committed by the thread that ended the wait (which granted, cancelled or timed it out): Requested On is the thread that asked",
)
@Threshold("10 ms")
@StackTrace(false)
internal class WaitEvent : Event() {
    @Label("Primitive") @Description("The primitive's name, if it has one") @JvmField var primitive: String? = null
    @Label("Kind") @JvmField var kind: String? = null
    @Label("Requester") @Description("Who waited: a coroutine, a thread, a future's requesting thread, a Lock's owner") @JvmField var requester: String? = null
    @Label("Permits") @JvmField var permits: Int = 0
    @Label("Priority") @JvmField var priority: Int = 0
    @Label("Outcome") @Description("granted, timed out, cancelled or failed") @JvmField var outcome: String? = null
    @Label("Requested On") @Description("The thread that made the request (a coroutine's: the thread it ran on when it asked)") @JvmField var requestedOn: Thread? = null
}

@Name("dev.semaphore.Hold")
@Label("Semaphore Hold")
@Category("Semaphore")
@Description(
    "Permits or a lock held: from the grant to the release. Committed by the thread that released: Taken On is the thread that took the hold",
)
@Threshold("20 ms")
@StackTrace(false)
internal class HoldEvent : Event() {
    @Label("Primitive") @JvmField var primitive: String? = null
    @Label("Kind") @JvmField var kind: String? = null
    @Label("Holder") @JvmField var holder: String? = null
    @Label("Permits") @JvmField var permits: Int = 0
    @Label("Taken On") @Description("The thread that took the hold (a coroutine's: the thread it ran on when it asked)") @JvmField var takenOn: Thread? = null
}

@Name("dev.semaphore.LongHold")
@Label("Semaphore Long Hold")
@Category("Semaphore")
@Description("A hold that has lasted longer than its primitive's long-hold threshold; reported once per hold")
@StackTrace(false)
internal class LongHoldEvent : Event() {
    @Label("Primitive") @JvmField var primitive: String? = null
    @Label("Kind") @JvmField var kind: String? = null
    @Label("Holder") @JvmField var holder: String? = null
    @Label("Permits") @JvmField var permits: Int = 0
    @Label("Held For") @Timespan(Timespan.NANOSECONDS) @JvmField var heldFor: Long = 0
    @Label("Acquired At") @Description("The acquiring stack, if captured") @JvmField var acquiredAt: String? = null
}

@Name("dev.semaphore.Leak")
@Label("Semaphore Leak")
@Category("Semaphore")
@Description("A Java Permit garbage-collected without being closed, its permits still held through it; they are not given back")
@StackTrace(false)
internal class LeakEvent : Event() {
    @Label("Primitive") @JvmField var primitive: String? = null
    @Label("Kind") @JvmField var kind: String? = null
    @Label("Holder") @Description("Who took the permits: a future's requesting thread, a thread") @JvmField var holder: String? = null
    @Label("Permits") @JvmField var permits: Int = 0
    @Label("Held For") @Description("From the grant to the leak's discovery") @Timespan(Timespan.NANOSECONDS) @JvmField var heldFor: Long = 0
    @Label("Acquired At") @Description("The acquiring stack, if captured") @JvmField var acquiredAt: String? = null
}

@Name("dev.semaphore.Deadlock")
@Label("Semaphore Deadlock")
@Category("Semaphore")
@Description("A cycle of coroutines, threads or owners each waiting for a lock the next one holds, found by the deadlock watch")
@StackTrace(false)
internal class DeadlockEvent : Event() {
    @Label("Participants") @JvmField var participants: Int = 0
    @Label("Primitives") @Description("The locks waited on, in the cycle's order") @JvmField var primitives: String? = null
    @Label("Description") @Description("Who waits on what, and what each holds") @JvmField var description: String? = null
}

@Name("dev.semaphore.Statistics")
@Label("Semaphore Statistics")
@Category("Semaphore")
@Description("The snapshot of every named primitive, periodically")
@Period("1 s")
@Enabled(true)
@StackTrace(false)
internal class StatisticsEvent : Event() {
    @Label("Primitive") @JvmField var primitive: String? = null
    @Label("Kind") @JvmField var kind: String? = null
    @Label("Total Permits") @JvmField var totalPermits: Int = 0
    @Label("Available Permits") @JvmField var availablePermits: Int = 0
    @Label("Queued Requests") @JvmField var queuedRequests: Int = 0
    @Label("Acquired") @JvmField var acquired: Long = 0
    @Label("Acquired After Wait") @JvmField var acquiredAfterWait: Long = 0
    @Label("Timed Out") @JvmField var timedOut: Long = 0
    @Label("Cancelled") @JvmField var cancelled: Long = 0
}
