/*
 * DEADLOCK DETECTION among the Locks and ReadWriteLocks created with Diagnostics.detectDeadlocksAfter.
 * Those are observed (Observer.kt), so their holds and requests are recorded with who made them. A
 * search builds the wait-for graph over participants (Deadlock.kt says who is one): an edge from the
 * participant of a request in a lock's line to the participant of every hold of that lock that it cannot
 * be granted beside, and of every such request ahead of it in the line (the line is strict FIFO: it
 * waits for them too). Whether two fit beside each other is read in permits: a request of r permits, by a
 * participant already holding o permits of the same lock, fits beside a hold of h permits of another
 * iff r + o + h <= total (so two reads fit, a read and a write do not, an upgrade does not fit beside any
 * other read), and it waits for itself iff r + o > total (a write asked while holding a read; a second
 * lock of a Lock without owner). On a Lock or a ReadWriteLock a request needs every such hold gone, so a
 * cycle is a deadlock; on a Semaphore it is not (any one release may do), which is why only locks take part. Each primitive is
 * read under its own lock, one after the other, so a cycle seen across primitives could be a moment
 * that already passed: a search therefore reads everything twice and reports a cycle only if every
 * request and hold in it is still there the second time. A deadlock does not go away by itself, so it
 * is always confirmed; a cycle that was resolving is not reported.
 * Who a participant is comes from the records (Observer.kt, H1, H2): a hold left UNATTRIBUTED by anonymous
 * releases starts and ends no edge, and a future's request is a participant of its own (the thread that
 * made it does not wait for it), which never both waits and holds, so futures close no cycle.
 * Bounds: one weak entry per detecting primitive alive. A deadlock reported is remembered by a mark on the
 * records of its requests (WaitRecord.reportedInDeadlock), which go when the requests leave the line, so
 * nothing outlives the participants; a new deadlock of the same parties has new requests, and is new.
 */
package dev.semaphore.internal

import dev.semaphore.Deadlock
import dev.semaphore.DeadlockParticipant
import java.util.Collections
import java.util.IdentityHashMap

internal object Deadlocks {
    private val registered = WeakRegistry<WaiterQueue>()

    /** Registers [queue] (observed, of a Lock or ReadWriteLock); its observer's watch asks for searches (Observer.kt, O5). */
    fun register(queue: WaiterQueue) {
        registered.add(queue)
    }

    private val searchAsked = java.util.concurrent.atomic.AtomicBoolean()

    /** Searches started by the watches (for the tests of O5). */
    val searches = java.util.concurrent.atomic.AtomicLong()

    /**
     * O5: a request has waited its lock's deadlock wait: searches once, soon, on the diagnostics thread (asks that
     * come while one is waiting to run share it). One search per request is enough: a cycle is closed by the
     * last of its requests to join a line (a hold that changes hands goes to a request already in line, or
     * makes no new edge), so the search that request starts, after the wait, finds the cycle whole.
     */
    fun requestSearch() {
        if (!searchAsked.compareAndSet(false, true)) return
        DiagnosticsThread.executor.execute {
            searchAsked.set(false)
            searches.incrementAndGet()
            try {
                report(search())
            } catch (t: Throwable) {
                Observer.LOG.log(System.Logger.Level.WARNING, "a deadlock search failed once", t)
            }
        }
    }

    /** [dev.semaphore.Diagnostics.findDeadlocks]. */
    fun find(): List<Deadlock> = search().map { it.deadlock }

    private class Found(val deadlock: Deadlock, val signature: Set<WaitRecord>, val observers: List<Observer>)

    private fun search(): List<Found> {
        val first = read()
        val candidates = cycles(first)
        if (candidates.isEmpty()) return emptyList()
        val second = read()
        val stillWaiting = Collections.newSetFromMap(IdentityHashMap<WaitRecord, Boolean>())
        val stillHeld = Collections.newSetFromMap(IdentityHashMap<HoldRecord, Boolean>())
        for (v in second) {
            stillWaiting.addAll(v.waits)
            stillHeld.addAll(v.holds)
        }
        return candidates.filter { c -> c.all { it.request in stillWaiting && (it.heldBy == null || it.heldBy in stillHeld) } }
            .map { ReportInstant.at { describe(it, first) } }
    }

    /** What one primitive showed, under its lock. */
    private class View(val observer: Observer, val total: Int, val waits: List<WaitRecord>, val holds: List<HoldRecord>)

    private fun read(): List<View> {
        val views = ArrayList<View>()
        for (q in registered.list()) {
            q.withObserver { o, _ -> if (o != null) views += View(o, q.totalPermits, o.waitRecords(), o.holdRecords()) }
        }
        return views
    }

    /** One edge of a cycle: [request] (of the participant) waits on [view]'s primitive for [next]. */
    private class Step(val view: View, val request: WaitRecord, val next: Any, val heldBy: HoldRecord?)

    /** The elementary cycles of the wait-for graph, each once. */
    private fun cycles(views: List<View>): List<List<Step>> {
        val edges = IdentityHashMap<Any, MutableList<Step>>()
        for (v in views) {
            for ((i, w) in v.waits.withIndex()) {
                val from = participant(w.requester)
                val out = edges.getOrPut(from) { ArrayList() }
                val own = v.holds.filter { !it.requester.isUnattributed && participant(it.requester) === from }.sumOf { it.permits.toLong() }
                val need = w.permits + own
                if (need > v.total) out += Step(v, w, from, v.holds.first { !it.requester.isUnattributed && participant(it.requester) === from })
                for (h in v.holds) {
                    if (h.requester.isUnattributed) continue // H2: names nobody, so no edge
                    val by = participant(h.requester)
                    if (by !== from && need + h.permits > v.total) out += Step(v, w, by, h)
                }
                for (j in 0 until i) {
                    val ahead = v.waits[j]
                    val by = participant(ahead.requester)
                    if (by !== from && need + ahead.permits > v.total) out += Step(v, w, by, null)
                }
            }
        }
        val found = ArrayList<List<Step>>()
        val seen = HashSet<Set<Any>>()
        for (start in edges.keys) {
            val path = ArrayList<Step>()
            val onPath = Collections.newSetFromMap(IdentityHashMap<Any, Boolean>())
            fun dfs(node: Any): Boolean {
                for (s in edges[node] ?: return false) {
                    path += s
                    if (s.next === start) {
                        val members = Collections.newSetFromMap(IdentityHashMap<Any, Boolean>())
                        path.forEach { members.add(participant(it.request.requester)) }
                        if (seen.add(members)) found += ArrayList(path)
                        path.removeAt(path.size - 1)
                        return true
                    }
                    if (onPath.add(s.next)) {
                        if (dfs(s.next)) {
                            path.removeAt(path.size - 1)
                            return true
                        }
                    }
                    path.removeAt(path.size - 1)
                }
                return false
            }
            onPath.add(start)
            dfs(start)
        }
        return found
    }

    private fun describe(cycle: List<Step>, views: List<View>): Found {
        val participants = cycle.map { step ->
            val who = participant(step.request.requester)
            val holds = ArrayList<String>()
            for (v in views) for (h in v.holds) {
                if (!h.requester.isUnattributed && participant(h.requester) === who) {
                    val info = v.observer.holdInfoOf(h)
                    holds += v.observer.describePrimitive() + ": " + info.permits + (if (info.permits == 1) " permit" else " permits") +
                        (info.held?.let { " for " + dev.semaphore.formatDuration(it) } ?: "") +
                        info.stack.joinToString("") { "\n    at $it" }
                }
            }
            DeadlockParticipant(
                who = step.request.requester.describe(),
                waitsOn = step.view.observer.describePrimitive(),
                request = step.view.observer.waitInfoOf(step.request),
                holds = holds,
                blockedBecause = if (step.heldBy != null) "held by the next" else "behind the next in line",
            )
        }
        val signature = Collections.newSetFromMap(IdentityHashMap<WaitRecord, Boolean>())
        cycle.forEach { signature.add(it.request) }
        return Found(Deadlock(participants), signature, cycle.map { it.view.observer }.distinct())
    }

    /**
     * Who a request or hold belongs to (Deadlock.kt): the Lock's owner, else the launched coroutine
     * (scope coroutines such as withContext, coroutineScope and withTimeout are their parent's), else the
     * future's request, else the thread (Observer.kt, H1).
     */
    private fun participant(r: Requester): Any = r.key // its Job is the launched coroutine's already (Requester.job)

    private fun report(found: List<Found>) {
        for (f in found) {
            if (!markReported(f.signature)) continue
            Observer.LOG.log(System.Logger.Level.ERROR, f.deadlock.toString())
            Jfr.deadlock(f.deadlock)
            for (o in f.observers) o.tell { o.deadlockFound(f.deadlock) } // O5: not on the watch's thread
        }
    }

    /** Marks the requests of a deadlock as reported; false if they all were already (reported before). */
    private fun markReported(requests: Set<WaitRecord>): Boolean = synchronized(this) {
        var new = false
        for (r in requests) {
            if (!r.reportedInDeadlock) {
                r.reportedInDeadlock = true
                new = true
            }
        }
        new
    }

    /** How many primitives are registered now (for the tests of the bound). */
    fun size(): Int = registered.size()
}
