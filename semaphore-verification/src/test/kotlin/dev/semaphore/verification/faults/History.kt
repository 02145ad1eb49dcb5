package dev.semaphore.verification.faults

import java.util.concurrent.ConcurrentLinkedQueue

/*
 * The history of a fault-harness run and its checker. Every client (a coroutine of this JVM or of a worker JVM)
 * records what its calls did, with System.nanoTime(): on Linux every process of the machine reads the same
 * monotonic clock, so the events of all JVMs can be merged. A worker JVM prints its events as lines
 * (Event.line), which the harness parses back (Event.parse).
 */

/** One event of a call; [call] is unique across the run ("client/n"), [t] is System.nanoTime(). */
sealed class Event {
    abstract val call: String
    abstract val t: Long

    /** A call started: [op] on [semaphore] for [permits]; [timeoutMs] for a timed call, else -1. */
    data class Call(override val call: String, override val t: Long, val op: String, val semaphore: String, val permits: Int, val timeoutMs: Long) : Event()

    /**
     * The call returned a lease (or withPermit's block started with it): [token], and [expiresAt] the end of the
     * lease by the client's count at that moment (nanoTime).
     */
    data class Grant(override val call: String, override val t: Long, val token: Long, val expiresAt: Long) : Event()

    /** The call returned no lease (a try that did not fit, a timeout). */
    data class None(override val call: String, override val t: Long) : Event()

    /** The call threw [error] (a class name). */
    data class Fail(override val call: String, override val t: Long, val error: String) : Event()

    /**
     * The holder looked at its lease before a step of work at [t]: [expiresAt] its end by the client's count, read
     * before [t] (so the lease was live at [t] if [t] < [expiresAt]), or -1 if the client said it is lost. A holder
     * works only after a look that found it live.
     */
    data class Look(override val call: String, override val t: Long, val expiresAt: Long) : Event()

    /** The holder stopped working: [why] "release" (its release starts now) or "lost" (told, or its count ran out). */
    data class End(override val call: String, override val t: Long, val why: String) : Event()

    /** The release returned: [outcome] "ok" or the class name of what it threw. */
    data class Released(override val call: String, override val t: Long, val outcome: String) : Event()

    val line: String
        get() = when (this) {
            is Call -> "E CALL $call $t $op $semaphore $permits $timeoutMs"
            is Grant -> "E GRANT $call $t $token $expiresAt"
            is None -> "E NONE $call $t"
            is Fail -> "E FAIL $call $t $error"
            is Look -> "E LOOK $call $t $expiresAt"
            is End -> "E END $call $t $why"
            is Released -> "E REL $call $t $outcome"
        }

    companion object {
        /** The event of a line printed by [line]; null for another line. */
        fun parse(line: String): Event? {
            val w = line.split(' ')
            if (w.size < 4 || w[0] != "E") return null
            val (call, t) = w[2] to w[3].toLong()
            return when (w[1]) {
                "CALL" -> Call(call, t, w[4], w[5], w[6].toInt(), w[7].toLong())
                "GRANT" -> Grant(call, t, w[4].toLong(), w[5].toLong())
                "NONE" -> None(call, t)
                "FAIL" -> Fail(call, t, w[4])
                "LOOK" -> Look(call, t, w[4].toLong())
                "END" -> End(call, t, w[4])
                "REL" -> Released(call, t, w[4])
                else -> null
            }
        }
    }
}

/** Where the clients of this JVM record their events, and the harness adds those of the worker JVMs. */
class History {
    private val events = ConcurrentLinkedQueue<Event>()

    fun record(e: Event) {
        events += e
    }

    val size: Int get() = events.size

    fun snapshot(): List<Event> = events.toList()
}

/** A time when the process of [client] was stopped (SIGSTOP) or killed: its calls' times then say nothing of the client. */
data class Stopped(val client: String, val from: Long, val to: Long)

/** The figures and the violations the checker found. */
class Verdict(val violations: List<String>, val figures: Map<String, Long>) {
    val ok: Boolean get() = violations.isEmpty()
}

/**
 * Checks a history (every event of every client of one run) against the promises:
 * - S1 never more permits held by holders at work than the total: a holder is at work from the moment its call
 *   returned the lease until the first of its release, the loss it was told of, and the end of the lease by its own
 *   count at its last look (a holder that stopped looking, paused or killed, works no more);
 * - S2 every lease handed over had at least [minRemainingNanos] left by the client's count (H1);
 * - S3 fencing tokens are unique per semaphore, and a grant returned before another call started has the lower token;
 * - S4 every timed call returned within its timeout plus [timeoutSlackNanos], unless its process was stopped meanwhile;
 * - S5 every call ended (the harness checks that it did so in time after each heal; here: no call left without an outcome).
 */
class Checker(
    private val totals: Map<String, Int>,
    private val minRemainingNanos: Long,
    private val timeoutSlackNanos: Long,
) {
    fun check(events: List<Event>, stopped: List<Stopped>): Verdict {
        val violations = mutableListOf<String>()
        val byCall = events.groupBy { it.call }
        val calls = byCall.mapNotNull { (id, es) -> es.filterIsInstance<Event.Call>().firstOrNull()?.let { id to it } }.toMap()
        var grants = 0L
        var looks = 0L
        var timed = 0L
        var worstOverrunNanos = 0L
        val worstByOp = mutableMapOf<String, Long>()
        var overrunsPast100ms = 0L
        val intervals = mutableMapOf<String, MutableList<Interval>>()
        val tokensBySemaphore = mutableMapOf<String, MutableList<Pair<Long, Long>>>() // (returned at, token)
        val firstStops = stopped.groupBy { it.client }

        fun stoppedDuring(call: String, from: Long, to: Long): Boolean =
            firstStops[call.substringBefore('/')].orEmpty().any { it.from < to && it.to > from }

        for ((id, call) in calls) {
            val es = byCall.getValue(id).sortedBy { it.t }
            val grant = es.filterIsInstance<Event.Grant>().firstOrNull()
            val outcome = es.firstOrNull { it is Event.Grant || it is Event.None || it is Event.Fail }
            if (outcome == null) {
                if (!stoppedDuring(id, call.t, Long.MAX_VALUE)) violations += "S5: call $id (${call.op} of ${call.semaphore}) never ended"
                continue
            }
            if (call.timeoutMs >= 0) {
                timed++
                val took = outcome.t - call.t
                val over = took - call.timeoutMs * 1_000_000
                if (!stoppedDuring(id, call.t, outcome.t)) {
                    worstOverrunNanos = maxOf(worstOverrunNanos, over)
                    worstByOp.merge(call.op, over, ::maxOf)
                    if (over > 100_000_000) overrunsPast100ms++
                    if (over > timeoutSlackNanos) {
                        violations += "S4: timed call $id (${call.op}, timeout ${call.timeoutMs} ms) returned after ${took / 1_000_000} ms"
                    }
                }
            }
            if (grant == null) continue
            grants++
            val left = grant.expiresAt - grant.t
            if (left < minRemainingNanos) {
                violations += "S2: call $id (${call.op} of ${call.semaphore}) was handed a lease with ${left / 1_000_000} ms left by its count"
            }
            tokensBySemaphore.getOrPut(call.semaphore) { mutableListOf() } += grant.t to grant.token
            var end = Long.MAX_VALUE
            var expiresAt = grant.expiresAt
            for (e in es) {
                if (e.t < grant.t) continue
                when (e) {
                    is Event.Look -> {
                        looks++
                        if (e.t >= end) continue
                        if (e.expiresAt < 0) end = minOf(end, e.t) else expiresAt = e.expiresAt
                    }
                    is Event.End -> end = minOf(end, e.t)
                    else -> {}
                }
            }
            end = minOf(end, expiresAt)
            intervals.getOrPut(call.semaphore) { mutableListOf() } += Interval(id, grant.token, call.permits, grant.t, end)
        }

        // S1: a sweep over each semaphore's intervals.
        for ((semaphore, list) in intervals) {
            val total = totals.getValue(semaphore)
            val points = list.flatMap { listOf(Triple(it.from, 1, it), Triple(it.to, -1, it)) }
                .sortedWith(compareBy({ it.first }, { it.second })) // an end before a start at the same instant
            val atWork = mutableSetOf<Interval>()
            var held = 0
            for ((_, delta, interval) in points) {
                if (interval.to <= interval.from) continue
                if (delta > 0) {
                    atWork += interval
                    held += interval.permits
                    if (held > total) {
                        violations += "S1: $semaphore: $held permits held by holders at work, of $total: " +
                            atWork.sortedBy { it.from }.joinToString { "${it.call} (token ${it.token}, ${it.permits})" }
                    }
                } else {
                    atWork -= interval
                    held -= interval.permits
                }
            }
        }

        // S3: unique tokens, and increasing with real-time order (grant returned before the other call started).
        for ((semaphore, list) in tokensBySemaphore) {
            val tokens = list.map { it.second }
            val duplicates = tokens.groupingBy { it }.eachCount().filterValues { it > 1 }.keys
            if (duplicates.isNotEmpty()) violations += "S3: $semaphore: tokens granted twice: ${duplicates.take(5)}"
            val returned = list.sortedBy { it.first }
            val started = calls.values.filter { it.semaphore == semaphore }
                .mapNotNull { c -> byCall.getValue(c.call).filterIsInstance<Event.Grant>().firstOrNull()?.let { c.t to it.token } }
                .sortedBy { it.first }
            var i = 0
            var highest = Long.MIN_VALUE
            for ((startedAt, token) in started) {
                while (i < returned.size && returned[i].first < startedAt) highest = maxOf(highest, returned[i++].second)
                if (highest != Long.MIN_VALUE && token <= highest) {
                    violations += "S3: $semaphore: token $token granted to a call that started after token $highest was returned"
                }
            }
        }

        return Verdict(
            violations,
            mapOf(
                "events" to events.size.toLong(), "calls" to calls.size.toLong(), "grants" to grants, "looks" to looks,
                "timed calls" to timed, "worst timed overrun ms" to worstOverrunNanos / 1_000_000,
                "timed calls over by more than 100 ms" to overrunsPast100ms,
            ) + worstByOp.mapKeys { "worst overrun ms, ${it.key}" }.mapValues { it.value / 1_000_000 },
        )
    }

    private class Interval(val call: String, val token: Long, val permits: Int, val from: Long, val to: Long)
}
