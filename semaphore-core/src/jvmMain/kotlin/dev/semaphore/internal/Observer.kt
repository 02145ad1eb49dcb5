/*
 * OBSERVATION: what a primitive records about its holds and waits while it is observed (a listener, or
 * tracking or a long-hold threshold chosen at creation; see Diagnostics). The engine (WaiterQueue.kt)
 * calls the hooks below under its lock, with the one waiter protocol unchanged; this file adds no rule
 * to the engine's, only these:
 * O1  While an Observer is installed, the engine never stores a FAST word (its I3 gains one condition),
 *     so every acquisition and release takes the locked path and passes through a hook here. Installing
 *     one is a locked step, so a call on the lock-free path either finished before it or takes the lock.
 * O2  Records (waits and holds) are read and written only under the engine's lock; events are collected
 *     there and handed out by the unlock (takePending), then delivered by the thread that unlocked, after
 *     its wakes, to listeners and JFR. A listener's exception is logged, never thrown to the caller.
 * O3  A hold that began before observation is unknown here: its release is reported with an unknown
 *     start, and ends no record.
 * H1  Who takes a hold is the requester of the call that took it, whatever path granted it (the lock-free
 *     path is off while observed, O1): a suspending call names its coroutine, through its waiter or, for a
 *     try granted at once, through the CoroutineContext it passes (`asker`); a Java future names the
 *     request itself (Requester.FUTURE: the thread that made it does not wait for it); a blocking call and
 *     a non-suspending call name the thread (a non-suspending call cannot see a coroutine), and a Lock's
 *     owner is added to each. [Requester.key] is that identity.
 * H2  Which hold a release ends is never guessed. A release that names its hold (`key`: a scoped form in
 *     a coroutine, withPermit, withLock, withReadLock..., names its coroutine's Job; a Java handle names
 *     its request; a ReadWriteLock's unlockWrite and unlockUpgradableRead name the one hold of their size,
 *     RELEASE_BY_SIZE) ends the latest hold of that key with the permits released. An anonymous release
 *     (release(n), unlock(), unlockRead()) ends a hold when every hold it could end has one key (a Lock's
 *     one hold, a semaphore used by one coroutine): the latest of exactly n permits, else the oldest, in
 *     part. Otherwise it is not known whose permits came back: the holds it could have ended become one
 *     UNATTRIBUTED hold of the permits still held among them, named by nobody, which no wait-for edge of
 *     Deadlocks.kt starts or ends at, and whose permits later releases (named or not) end first when the
 *     hold they name is not found. The permits held stay exact; only the names are given up.
 * O4  The writers' line of a ReadWriteLock with ReadWritePolicy.WRITERS_LINE (ReadWriteLockImpl.kt, WL1) is
 *     a queue of its own, observed by an Observer of its own ([writersLineOf] > 0) when the lock is observed
 *     from creation. It records the writers waiting there (shown as requests of the write hold: waiters()
 *     merges them into the lock's) and its one hold, the writer on its way, which is never shown as a hold
 *     of the lock but is what Deadlocks.kt needs to see a writer wait for the one ahead of it. It has no
 *     listeners and tells JFR nothing: the lock's own Observer reports the write's wait and hold.
 * O5  Watches follow records, not time: a primitive with a long-hold threshold or deadlock detection has one
 *     look armed on the diagnostics thread while a record is to come due: armed when a hold or a request is
 *     recorded and no look is due by its own due time (a request's deadlock wait may be shorter than the
 *     long-hold threshold of the hold that armed the look), the latest look doing the work and earlier ones
 *     nothing; when it runs it reports what is due and arms itself for the next record to come due, or not at
 *     all. A primitive with nothing held or waiting costs no timer. Each request
 *     starts at most one deadlock search, when it has waited that long (Deadlocks.kt says why once suffices).
 *     What a watch finds is told to listeners on another thread (DiagnosticsThread.events), so a slow listener
 *     delays only its own primitive's events, never a watch.
 * Bounds: one record per waiter in line and per hold alive, and the events of one locked step.
 */
package dev.semaphore.internal

import dev.semaphore.Diagnostics
import dev.semaphore.HoldInfo
import dev.semaphore.Inspectable
import dev.semaphore.ListenerRegistration
import dev.semaphore.SemaphoreListener
import dev.semaphore.Tracking
import dev.semaphore.WaitInfo
import java.time.Duration
import java.time.Instant
import java.util.concurrent.atomic.AtomicBoolean

/** Who asked: captured on the requester's thread, described only when someone looks. */
internal class Requester(
    private val what: Int,
    val thread: Thread?,
    coroutineName: String?,
    job: Any?,
    /** A Lock's owner, or null. */
    val owner: Any?,
) {
    /**
     * The coroutine's Job, or null: the launched coroutine's, read when it asks, since a scope inside it
     * (withContext, coroutineScope, withTimeout) is the same participant and leaves its parent when it ends.
     */
    val job: Any? = launchedJob(job)

    /** The launched coroutine's CoroutineName, else the one where it asked (a scope inside may name a section of it). */
    private val coroutineName: String? =
        if (this.job === job) coroutineName
        else (this.job as? kotlinx.coroutines.CoroutineScope)?.coroutineContext?.get(kotlinx.coroutines.CoroutineName)?.name ?: coroutineName

    fun describe(): String = buildString {
        if (owner != null) append("owner ").append(owner).append(" (")
        when (what) {
            COROUTINE -> {
                append("coroutine")
                // A name is enough, and its Job's text would repeat it (under kotlinx's debug mode) with a hash code:
                // the Job is in Caller.job for whoever needs it. Without a name the Job's text is all there is.
                if (coroutineName != null) append(" \"").append(coroutineName).append('"') else if (job != null) append(' ').append(job)
            }
            FUTURE -> append("future requested on thread \"").append(thread?.name).append('"')
            THREAD -> append("thread \"").append(thread?.name).append('"')
            UNATTRIBUTED -> append("unattributed (anonymous releases left it unknown whose permits these are)")
            CREATED -> append("the lock's creation with locked = true, on thread \"").append(thread?.name).append('"')
            else -> append("drainPermits() on thread \"").append(thread?.name).append('"')
        }
        if (owner != null) append(')')
    }

    override fun toString(): String = describe()

    /** H1: the identity of who asked: the Lock's owner, else the coroutine's Job, else the request (a future, a drain, an unattributed hold), else the thread. */
    val key: Any get() = owner ?: job ?: if (what == THREAD) thread ?: this else this

    val isUnattributed: Boolean get() = what == UNATTRIBUTED

    /** The public kind ([dev.semaphore.Caller]). */
    fun kind(): dev.semaphore.Caller.Kind = when (what) {
        COROUTINE -> dev.semaphore.Caller.Kind.COROUTINE
        FUTURE -> dev.semaphore.Caller.Kind.FUTURE
        DRAIN -> dev.semaphore.Caller.Kind.DRAIN
        UNATTRIBUTED -> dev.semaphore.Caller.Kind.UNATTRIBUTED
        CREATED -> dev.semaphore.Caller.Kind.CREATED_LOCKED
        else -> dev.semaphore.Caller.Kind.THREAD
    }

    fun coroutineNameOrNull(): String? = coroutineName

    companion object {
        const val THREAD = 0
        const val COROUTINE = 1
        const val FUTURE = 2
        const val DRAIN = 3
        const val UNATTRIBUTED = 4
        const val CREATED = 5

        /** The `asker` of the hold of a Lock created locked. */
        val CREATED_LOCKED: Any = Any()

        /** The `asker` of a Java future's try (H1). */
        val FUTURE_ASKER: Any = Any()

        fun ofThread(owner: Any?, what: Int = THREAD): Requester = Requester(what, Thread.currentThread(), null, null, owner)

        /**
         * H1: who asks, from a try's `asker` (null: the thread; a CoroutineContext: its coroutine; [FUTURE_ASKER]; a
         * Requester made before the request, JavaHolds.kt J2: itself).
         */
        fun of(asker: Any?, owner: Any?): Requester = when (asker) {
            null -> ofThread(owner)
            is Requester -> asker
            is kotlin.coroutines.CoroutineContext -> Requester(
                COROUTINE,
                Thread.currentThread(),
                asker[kotlinx.coroutines.CoroutineName]?.name,
                asker[kotlinx.coroutines.Job],
                owner,
            )
            FUTURE_ASKER -> ofThread(owner, FUTURE)
            CREATED_LOCKED -> ofThread(owner, CREATED)
            else -> ofThread(owner)
        }
    }
}

internal class WaitRecord(
    val requester: Requester,
    val permits: Int,
    val priority: Int,
    val sinceNanos: Long,
    val deadlineNanos: Long,
    val stack: CapturedStack?,
) {
    var jfr: Any? = null

    /** O5: this request has started its deadlock search (once). Under the engine's lock. */
    var searched = false

    /** Part of a deadlock already reported (Deadlocks.kt): goes with this record. */
    @Volatile
    var reportedInDeadlock = false
}

internal class HoldRecord(
    val requester: Requester,
    var permits: Int,
    val sinceNanos: Long,
    val stack: CapturedStack?,
) {
    var reportedLong = false
    var jfr: Any? = null
}

/** An event collected under the engine's lock (O2), delivered after it. */
internal sealed class Pending(
    /** The JFR event that this one ends (a wait or a hold begun earlier), or null. */
    val jfr: Any?,
) {
    class Acquired(val hold: HoldInfo, val waited: Duration, jfrWait: Any?, val request: WaitInfo?) : Pending(jfrWait)
    class Released(val hold: HoldInfo, val wasLong: Boolean, jfr: Any?) : Pending(jfr)
    class LeftLine(val request: WaitInfo, val timedOut: Boolean, jfr: Any?) : Pending(jfr)
    class Failed(val request: WaitInfo, jfr: Any?) : Pending(jfr)
    class Closed(val cause: Throwable?, val failed: Int) : Pending(null)
    class Resized(val oldTotal: Int, val newTotal: Int) : Pending(null)
    class LongHold(val hold: HoldInfo) : Pending(null)
}

internal class Observer(
    val primitive: Inspectable,
    private val queue: WaiterQueue,
    /** The primitive's kind, as its snapshot names it. */
    val kind: String,
    private val config: Diagnostics,
    /** O4: a ReadWriteLock's writers' line, whose requests are shown as requests of this many permits; 0 otherwise. */
    private val writersLineOf: Int = 0,
) {
    @Volatile
    private var listeners: Array<SemaphoreListener> = NO_LISTENERS

    private val waits = LinkedHashMap<PermitWaiter, WaitRecord>()
    private val holds = ArrayList<HoldRecord>()
    /** The events of this locked step: null, one [Pending], or an ArrayList of them (most steps have one). */
    private var pending: Any? = null
    private val captureStacks = config.tracking == Tracking.HOLDERS_AND_STACKS

    /**
     * The clock of the recorded durations (Diagnostics.timeSource): null for System.nanoTime; else readings on that
     * source, placed on System.nanoTime's scale at this observer's creation, so that WallClock turns them into times
     * of day as it does the others.
     */
    private val clockBase: Long = System.nanoTime()
    private val clockMark: kotlin.time.TimeMark? = config.timeSource?.markNow()

    /** Now, on this primitive's clock. */
    fun clockNow(): Long = if (clockMark == null) System.nanoTime() else clockBase + clockMark.elapsedNow().inWholeNanoseconds

    /** Now for a report: the report's one instant (ReportInstant) on the monotonic clock, else this primitive's clock. */
    private fun reportNow(): Long = if (clockMark == null) ReportInstant.now() else clockNow()

    /** O5: the long-hold threshold and the deadlock wait, in nanoseconds; 0 for none. */
    private val longHoldNanos = config.longHoldThreshold?.inWholeNanoseconds ?: 0L
    private val deadlockNanos = config.detectDeadlocksAfter?.inWholeNanoseconds ?: 0L

    /** O5: a watch timer is pending, due at [armedAt] (System.nanoTime). Under the engine's lock. */
    private var watchArmed = false
    private var armedAt = 0L

    /** Whether it must stay installed: a listener, or the primitive's [Diagnostics] ask for observation. */
    val needed: Boolean get() = listeners.isNotEmpty() || config.observesFromCreation

    val name: String? get() = primitive.name

    // ---- hooks, under the engine's lock (O2) ----

    fun acquiredNow(permits: Int, requester: Requester) {
        val now = clockNow()
        val rec = HoldRecord(requester, permits, now, stackIfCaptured())
        rec.jfr = if (writersLineOf == 0) Jfr.beginHold() else null // O4
        holds.add(rec)
        if (longHoldNanos > 0) armBy(longHoldNanos) // O5
        if (listeners.isNotEmpty()) add(Pending.Acquired(holdInfo(rec, now), Duration.ZERO, null, null))
    }

    fun queued(w: PermitWaiter, priority: Int) {
        val deadline = announcedDeadline.get()
        if (deadline != null) announcedDeadline.remove()
        val rec = WaitRecord(w.requester(), w.permits, priority, clockNow(), deadline ?: UNKNOWN_NANOS, stackIfCaptured())
        rec.jfr = if (writersLineOf == 0) Jfr.beginWait() else null // O4
        waits[w] = rec
        if (deadlockNanos > 0) armBy(deadlockNanos) // O5
    }

    fun grantedAfterWait(w: PermitWaiter) {
        val now = clockNow()
        val wait = waits.remove(w)
        val requester = wait?.requester ?: w.requester()
        val rec = HoldRecord(requester, w.permits, now, wait?.stack)
        rec.jfr = if (writersLineOf == 0) Jfr.beginHold() else null // O4
        holds.add(rec)
        if (longHoldNanos > 0) armBy(longHoldNanos) // O5
        if (listeners.isEmpty() && wait?.jfr == null) return // nobody to tell (the records above are kept)
        val waited = if (wait == null) Duration.ZERO else Duration.ofNanos(now - wait.sinceNanos)
        add(Pending.Acquired(holdInfo(rec, now), waited, wait?.jfr, wait?.let { waitInfo(it, now, null) }))
    }

    fun leftLine(w: PermitWaiter, timedOut: Boolean) {
        val rec = waits.remove(w) ?: return
        if (listeners.isEmpty() && rec.jfr == null) return
        add(Pending.LeftLine(waitInfo(rec, clockNow(), null), timedOut, rec.jfr))
    }

    fun failed(w: PermitWaiter) {
        val rec = waits.remove(w) ?: return
        if (rec.jfr == null) return // only JFR hears of a failure one by one (listeners hear onClosed)
        add(Pending.Failed(waitInfo(rec, clockNow(), null), rec.jfr))
    }

    fun closed(cause: Throwable?, failed: Int) {
        if (listeners.isNotEmpty()) add(Pending.Closed(cause, failed))
    }

    fun resized(oldTotal: Int, newTotal: Int) {
        if (listeners.isNotEmpty()) add(Pending.Resized(oldTotal, newTotal))
    }

    /** H2: ends the hold that a release of [permits] ends, named by [key] (or null: anonymous). */
    fun released(permits: Int, key: Any?) {
        if (key === RELEASE_BY_SIZE) { // the one hold of its size (a ReadWriteLock's write or upgradable read)
            var found = -1
            for (j in holds.indices) {
                if (holds[j].permits == permits && !holds[j].requester.isUnattributed) {
                    if (found >= 0) { found = -2; break }
                    found = j
                }
            }
            if (found >= 0) {
                end(holds.removeAt(found), permits)
                return
            }
        } else if (key != null) {
            var i = holds.size - 1 // indexed loops: no iterator per release
            if (key is Requester) { // a Java hold names its own request (JavaHolds.kt, J3), not its thread's latest hold
                while (i >= 0 && !(holds[i].permits == permits && holds[i].requester === key)) i--
            } else {
                val k = launchedJob(key) ?: key // a scoped form names its scope's Job; holds name the launched coroutine's
                while (i >= 0 && !(holds[i].permits == permits && holds[i].requester.key === k)) i--
            }
            if (i >= 0) {
                end(holds.removeAt(i), permits)
                return
            }
            if (takeUnattributed(permits)) return // its hold was made unattributed by an anonymous release
            return unknownEnded(permits) // its hold was not recorded (O3): never another caller's
        }
        if (holds.isEmpty()) return unknownEnded(permits) // O3
        val first = holds[0].requester.key
        var oneKey = true
        for (j in 1 until holds.size) if (holds[j].requester.key !== first) { oneKey = false; break }
        if (oneKey && !holds[0].requester.isUnattributed) {
            var i = holds.size - 1
            while (i >= 0 && holds[i].permits != permits) i--
            if (i >= 0) {
                end(holds.removeAt(i), permits)
                return
            }
            var left = permits
            while (left > 0 && holds.isNotEmpty()) {
                val rec = holds[0]
                val take = minOf(left, rec.permits)
                if (take == rec.permits) holds.removeAt(0) else rec.permits -= take
                end(rec, take)
                left -= take
            }
            if (left > 0) unknownEnded(left)
            return
        }
        // Not known whose permits came back: every hold is a candidate; what is left of them is unattributed.
        var held = 0L
        for (rec in holds) held += rec.permits
        holds.clear()
        if (held > permits) holds.add(unattributed((held - permits).toInt()))
        if (listeners.isNotEmpty()) {
            add(Pending.Released(HoldInfo(UNATTRIBUTED_REQUESTER, null, permits, UNKNOWN_NANOS, UNKNOWN_NANOS, emptyList()), false, null))
        }
    }

    /** H2: ends [permits] of the unattributed hold, if it has that many. */
    private fun takeUnattributed(permits: Int): Boolean {
        val i = holds.indexOfFirst { it.requester.isUnattributed }
        if (i < 0 || holds[i].permits < permits) return false
        val rec = holds[i]
        if (rec.permits == permits) holds.removeAt(i) else rec.permits -= permits
        if (listeners.isNotEmpty()) {
            add(Pending.Released(HoldInfo(UNATTRIBUTED_REQUESTER, null, permits, UNKNOWN_NANOS, UNKNOWN_NANOS, emptyList()), false, null))
        }
        return true
    }

    private fun unknownEnded(permits: Int) {
        if (listeners.isNotEmpty()) { // holds taken before observation (O3)
            add(Pending.Released(HoldInfo(UNKNOWN_HOLDER, null, permits, UNKNOWN_NANOS, UNKNOWN_NANOS, emptyList()), false, null))
        }
    }

    private fun unattributed(permits: Int) = HoldRecord(UNATTRIBUTED_REQUESTER, permits, UNKNOWN_NANOS, null).also { it.reportedLong = true }

    /** Reports the end of [permits] of [rec], reading the clock only if someone is told. */
    private fun end(rec: HoldRecord, permits: Int) {
        if (listeners.isEmpty() && rec.jfr == null && !rec.reportedLong) return
        val now = clockNow()
        val info = HoldInfo(rec.requester, rec.requester.owner, permits, rec.sinceNanos, now - rec.sinceNanos, rec.stack.frames())
        add(Pending.Released(info, rec.reportedLong, rec.jfr))
    }

    /**
     * O5: under the lock, makes sure this primitive's watch looks within [delayNanos] from now: schedules a look unless
     * one is due by then (a record's threshold may be shorter than what the pending look was armed for: a request's
     * deadlock wait behind a hold's long-hold threshold). A look that is no longer the latest armed does nothing.
     */
    private fun armBy(delayNanos: Long) {
        val at = System.nanoTime() + delayNanos
        if (watchArmed && armedAt - at <= 0) return
        watchArmed = true
        armedAt = at
        DiagnosticsThread.watchOnce(queue, delayNanos, at)
    }

    /**
     * O5: the watch, under the lock, on the diagnostics thread: the long holds now due (to be delivered by the
     * caller, off this lock and off the diagnostics thread), and whether a request came due for its deadlock
     * search. Arms the next look, if any record is still to come due.
     */
    fun watchNow(armed: Long, found: (longHolds: List<Pending.LongHold>, searchDeadlocks: Boolean) -> Unit) {
        if (!watchArmed || armed != armedAt) return // a look armed before a nearer one: that one does this work
        watchArmed = false
        val now = clockNow()
        var next = Long.MAX_VALUE
        var due: ArrayList<Pending.LongHold>? = null
        if (longHoldNanos > 0) {
            for (rec in holds) {
                if (rec.reportedLong) continue
                val at = rec.sinceNanos + longHoldNanos
                if (at - now <= 0) {
                    rec.reportedLong = true
                    (due ?: ArrayList<Pending.LongHold>().also { due = it }).add(Pending.LongHold(holdInfo(rec, now)))
                } else if (at - now < next) {
                    next = at - now
                }
            }
        }
        var search = false
        if (deadlockNanos > 0) {
            for (rec in waits.values) {
                if (rec.searched) continue
                val at = rec.sinceNanos + deadlockNanos
                if (at - now <= 0) {
                    rec.searched = true
                    search = true
                } else if (at - now < next) {
                    next = at - now
                }
            }
        }
        if (next != Long.MAX_VALUE) armBy(next)
        found(due ?: emptyList(), search)
    }

    fun holdInfos(): List<HoldInfo> {
        val now = reportNow()
        return holds.map { holdInfo(it, now) }
    }

    fun waitInfos(order: WaitOrder): List<WaitInfo> {
        val now = reportNow()
        val clock = queue.clockNow()
        return waits.map { (w, rec) -> waitInfo(rec, now, order.effectivePriority(w, rec.priority, clock)) }
    }

    /** Under the lock: the holds alive, oldest first (Deadlocks.kt reads them). */
    fun holdRecords(): List<HoldRecord> = ArrayList(holds)

    /** Under the lock: the requests in line, in the order they came (Deadlocks.kt reads them). */
    fun waitRecords(): List<WaitRecord> = ArrayList(waits.values)

    fun holdInfoOf(rec: HoldRecord): HoldInfo = holdInfo(rec, reportNow())

    fun waitInfoOf(rec: WaitRecord): WaitInfo = waitInfo(rec, reportNow(), null)

    /** O5: what the watches found for this primitive, told in order, on a thread of its own while it is told. */
    private val lane = ArrayDeque<() -> Unit>()
    private var laneRunning = false

    /**
     * O5: runs [task] (a delivery to this primitive's listeners) after the ones before it, off the watch's thread:
     * on a thread that tells this primitive only, so a slow listener delays only its own primitive's events.
     */
    fun tell(task: () -> Unit) {
        synchronized(lane) {
            lane.addLast(task)
            if (laneRunning) return
            laneRunning = true
        }
        DiagnosticsThread.events.execute {
            while (true) {
                val next = synchronized(lane) {
                    lane.removeFirstOrNull() ?: run {
                        laneRunning = false
                        null
                    }
                } ?: break
                try {
                    next()
                } catch (t: Throwable) {
                    LOG.log(System.Logger.Level.WARNING, "a diagnostics event of ${describePrimitive()} could not be delivered", t)
                }
            }
        }
    }

    /** Tells the listeners of a deadlock found by the watch, on the events thread (O5, Deadlocks.kt). */
    fun deadlockFound(deadlock: dev.semaphore.Deadlock) {
        for (l in listeners) {
            try {
                l.onDeadlock(primitive, deadlock)
            } catch (t: Throwable) {
                reportListenerError(l, t)
            }
        }
    }

    /** How long the oldest request in line has waited, in nanoseconds on this primitive's clock, or null. */
    fun oldestWaitNanos(): Long? = waits.values.minOfOrNull { it.sinceNanos }?.let { reportNow() - it }

    /** The events of the locked step ending, for [deliver]: null if none. */
    fun takePending(): Any? {
        val p = pending ?: return null
        pending = null
        return p
    }

    // ---- delivery, after the unlock (O2) ----

    /** Delivers what [takePending] returned. */
    fun deliver(events: Any) {
        if (events is Pending) {
            deliverOne(events)
        } else {
            @Suppress("UNCHECKED_CAST")
            for (e in events as List<Pending>) deliverOne(e)
        }
    }

    private fun deliverOne(e: Pending) {
        val ls = listeners
        if (e.jfr != null || e is Pending.LongHold) Jfr.record(this, e)
        for (l in ls) {
            try {
                when (e) {
                    is Pending.Acquired -> l.onAcquired(primitive, e.hold, e.waited)
                    is Pending.Released -> {
                        l.onReleased(primitive, e.hold)
                        if (e.wasLong) l.onLongHoldReleased(primitive, e.hold)
                    }
                    is Pending.LeftLine -> if (e.timedOut) l.onTimedOut(primitive, e.request) else l.onCancelled(primitive, e.request)
                    is Pending.Failed -> {}
                    is Pending.Closed -> l.onClosed(primitive, e.cause, e.failed)
                    is Pending.Resized -> l.onResized(primitive, e.oldTotal, e.newTotal)
                    is Pending.LongHold -> l.onLongHold(primitive, e.hold)
                }
            } catch (t: Throwable) {
                reportListenerError(l, t)
            }
        }
        if (e is Pending.LongHold) {
            LOG.log(System.Logger.Level.WARNING, "${describePrimitive()}: a hold has lasted longer than ${config.longHoldThresholdText()}: ${e.hold}")
        } else if (e is Pending.Released && e.wasLong) {
            LOG.log(System.Logger.Level.INFO, "${describePrimitive()}: a long hold reported before has ended: ${e.hold}")
        }
    }

    /** A `try` took nothing: not under the lock, delivered at once. */
    fun refused(permits: Int) {
        for (l in listeners) {
            try {
                l.onRefused(primitive, permits)
            } catch (t: Throwable) {
                reportListenerError(l, t)
            }
        }
    }

    /** Under the engine's lock: the hold alive that [who] took, for a Java handle's leak watch (JavaHolds.kt, J4). */
    fun holdOf(who: Requester): HoldRecord? = holds.lastOrNull { it.requester === who }

    /** A handle leaked (JavaHolds.kt, J4): not under the lock, delivered at once, on the leak thread. */
    fun leaked(hold: HoldInfo) {
        for (l in listeners) {
            try {
                l.onLeak(primitive, hold)
            } catch (t: Throwable) {
                reportListenerError(l, t)
            }
        }
    }

    /** Under the engine's lock, so that a removal cannot race with an addition (see [needed]). */
    fun addListener(listener: SemaphoreListener): ListenerRegistration {
        listeners = listeners + listener
        return object : ListenerRegistration {
            private val open = AtomicBoolean(true)

            override fun close() {
                if (!open.compareAndSet(true, false)) return
                queue.withObserver { _, _ ->
                    val i = listeners.indexOf(listener)
                    if (i >= 0) listeners = listeners.filterIndexed { j, _ -> j != i }.toTypedArray()
                }
                queue.observerMayGo(this@Observer)
            }

            override fun toString(): String = "registration of $listener on ${describePrimitive()}"
        }
    }

    fun describePrimitive(): String = kind + (primitive.name?.let { " \"$it\"" } ?: "")

    // ---- helpers ----

    private fun add(e: Pending) {
        when (val p = pending) {
            null -> pending = e
            is Pending -> pending = arrayListOf(p, e)
            else -> @Suppress("UNCHECKED_CAST") (p as ArrayList<Pending>).add(e)
        }
    }

    private fun stackIfCaptured(): CapturedStack? = if (captureStacks) CapturedStack() else null

    private fun holdInfo(rec: HoldRecord, now: Long) = HoldInfo(
        rec.requester,
        rec.requester.owner,
        rec.permits,
        rec.sinceNanos,
        if (rec.sinceNanos == UNKNOWN_NANOS) UNKNOWN_NANOS else now - rec.sinceNanos,
        rec.stack.frames(),
    )

    private fun waitInfo(rec: WaitRecord, now: Long, effective: Int?) = WaitInfo(
        rec.requester,
        rec.requester.owner,
        if (writersLineOf > 0) writersLineOf else rec.permits, // O4
        rec.priority,
        effective ?: rec.priority,
        rec.sinceNanos,
        now - rec.sinceNanos,
        rec.deadlineNanos,
        rec.stack.frames(),
    )

    private fun reportListenerError(l: SemaphoreListener, t: Throwable) =
        LOG.log(System.Logger.Level.WARNING, "listener $l of ${describePrimitive()} threw; the primitive is unaffected", t)

    companion object {
        private val NO_LISTENERS = emptyArray<SemaphoreListener>()
        private const val UNKNOWN_HOLDER = "a holder from before observation began"
        private val UNATTRIBUTED_REQUESTER = Requester(Requester.UNATTRIBUTED, null, null, null, null)
        val LOG: System.Logger = System.getLogger("dev.semaphore")

        /**
         * A deadline (System.nanoTime) a timed request announces on its own thread just before its offer;
         * a queued offer takes it, and the announcer clears it after its offer (granted at once, or refused).
         */
        val announcedDeadline = ThreadLocal<Long?>()

        /** The frames of [this], made when first read (CapturedStack), or none. */
        private fun CapturedStack?.frames(): List<StackTraceElement> = if (this == null) emptyList() else LazyFrames(this)

        /** The frames a captured stack keeps at most (docs/diagnostics.md). */
        const val STACK_FRAMES = 32

        fun isLibraryFrame(c: String): Boolean =
            LIBRARY_PREFIXES.any { c.startsWith(it) } || c.startsWith("kotlinx.coroutines.") || c.startsWith("kotlin.coroutines.") ||
                c.startsWith(JAVA_FACADE_PACKAGE) && c.substring(JAVA_FACADE_PACKAGE.length).substringBefore('$') in JAVA_FACADE

        /** The Java facade's classes (and their nested and lambda classes), not its package: its tests live there. */
        private const val JAVA_FACADE_PACKAGE = "dev.semaphore.async."
        private val JAVA_FACADE = setOf("AsyncPermitPool", "AsyncSemaphore", "AsyncPrioritySemaphore", "AsyncLock", "AsyncReadWriteLock", "Permit", "Waits")

        /** The library's own classes: its engine, bridge and the front-ends' implementations. */
        private val LIBRARY_PREFIXES = listOf(
            "dev.semaphore.internal.", "dev.semaphore.bridge.",
            "dev.semaphore.SemaphoreImpl", "dev.semaphore.PrioritySemaphoreImpl", "dev.semaphore.LockImpl",
            "dev.semaphore.ReadWriteLockImpl", "dev.semaphore.QueueBackedPool",
        )
    }
}

/**
 * For a timed request about to be offered on this thread: announces its deadline, [timeoutNanos] from
 * now, if [this] queue is observed (the offer's hook takes it), and returns the thread to clear it on
 * after the offer ([clearDeadline]); null, and nothing done, if the queue is not observed.
 */
internal fun WaiterQueue.announceDeadline(timeoutNanos: Long): Thread? {
    val now = (observer ?: return null).clockNow()
    Observer.announcedDeadline.set(if (timeoutNanos > Long.MAX_VALUE - now) Long.MAX_VALUE else now + timeoutNanos)
    return Thread.currentThread()
}

/** Clears an announcement that no offer took (granted at once, or refused by an exception), on its own thread. */
internal fun clearDeadline(announcer: Thread) {
    if (Thread.currentThread() === announcer) Observer.announcedDeadline.remove()
}

/**
 * The coroutine a [job] stands for (H1): [job] itself, or for a scope coroutine (withContext, coroutineScope,
 * withTimeout: kotlinx's ScopeCoroutine and its subclasses) the launched coroutine it runs in. Anything that
 * is not a Job is returned as it is. Read while the scope is active (it leaves its parent when it ends).
 */
@OptIn(kotlinx.coroutines.ExperimentalCoroutinesApi::class)
internal fun launchedJob(job: Any?): Any? {
    if (job !is kotlinx.coroutines.Job) return job
    var j: kotlinx.coroutines.Job = job
    while (IS_SCOPE.get(j.javaClass)) j = j.parent ?: break
    return j
}

private val IS_SCOPE = object : ClassValue<Boolean>() {
    override fun computeValue(type: Class<*>): Boolean {
        var c: Class<*>? = type
        while (c != null) {
            if (c.name == "kotlinx.coroutines.internal.ScopeCoroutine") return true
            c = c.superclass
        }
        return false
    }
}

/**
 * The instant a report is read at: a dump (its snapshot's line, its holders and its waiters) and a deadlock's
 * description each read every duration against one reading of the clock, so that what they print agrees with
 * itself however long the reading of its parts takes (class loading alone took 7 ms between two parts of a
 * first dump, which then said a request waited longer than the hold taken before it had lasted).
 */
internal object ReportInstant {
    private val pinned = ThreadLocal<Long?>()

    /** The pinned instant of the report being read on this thread, else System.nanoTime(). */
    fun now(): Long = pinned.get() ?: System.nanoTime()

    /** Runs [read] with one instant for every duration it reads (the outer one, if already pinned). */
    inline fun <T> at(read: () -> T): T {
        if (pinnedNow() != null) return read()
        set(System.nanoTime())
        try {
            return read()
        } finally {
            set(null)
        }
    }

    fun pinnedNow(): Long? = pinned.get()

    fun set(now: Long?) = if (now == null) pinned.remove() else pinned.set(now)
}

/**
 * The stack of a call, captured when a hold or request is recorded with Tracking.HOLDERS_AND_STACKS: the JVM's
 * backtrace only (what creating a Throwable records, no frame objects), made into frames when first read
 * ([frames]: the caller's, without the library's own at the top, at most Observer.STACK_FRAMES), since most
 * records are never looked at. Read eagerly, a whole stack cost about 200 us a capture in a deep caller.
 */
internal class CapturedStack : Throwable(null, null, false, true) {
    val frames: List<StackTraceElement> by lazy(LazyThreadSafetyMode.PUBLICATION) {
        val all = stackTrace
        var i = 0
        while (i < all.size && Observer.isLibraryFrame(all[i].className)) i++
        all.copyOfRange(i, minOf(all.size, i + Observer.STACK_FRAMES)).asList()
    }
}

/** A captured stack's frames as a list that makes them when first read (a HoldInfo nobody reads costs no frames). */
private class LazyFrames(private val captured: CapturedStack) : AbstractList<StackTraceElement>() {
    override val size: Int get() = captured.frames.size

    override fun get(index: Int): StackTraceElement = captured.frames[index]
}

/** A time on System.nanoTime's clock that is not known (a hold from before observation), or no deadline. */
internal const val UNKNOWN_NANOS: Long = Long.MIN_VALUE

internal fun currentThread(): Thread = Thread.currentThread()

/**
 * Wall-clock times of System.nanoTime readings, from one pair of readings taken once, so that no event
 * reads the wall clock (a time of day is for people; the durations come from nanoTime). It ignores
 * later adjustments of the wall clock, as a time shown next to a duration may.
 */
internal object WallClock {
    private val epoch: Instant = Instant.now()
    private val epochNanos: Long = System.nanoTime()

    fun at(nanos: Long): Instant = epoch.plusNanos(nanos - epochNanos)
}
