package dev.semaphore.verification.faults

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The fault harness's checker finds each kind of violation in a made-up history, and none in a sound one. */
class HistoryCheckerTest {
    private val ms = 1_000_000L
    private val checker = Checker(mapOf("s" to 2, "l" to 1), minRemainingNanos = 100 * ms, timeoutSlackNanos = 200 * ms)

    /** A call on [sem] for [permits] that got [token] at [grantAt] (ms), with its count ending at [expires], and worked until [endAt]. */
    private fun held(id: String, sem: String, permits: Int, token: Long, callAt: Long, grantAt: Long, expires: Long, endAt: Long?): List<Event> =
        listOfNotNull(
            Event.Call(id, callAt * ms, "acquire", sem, permits, -1),
            Event.Grant(id, grantAt * ms, token, expires * ms),
            endAt?.let { Event.Look(id, it * ms - 1, expires * ms) },
            endAt?.let { Event.End(id, it * ms, "release") },
            endAt?.let { Event.Released(id, it * ms + 1, "ok") },
        )

    private fun check(vararg calls: List<Event>, stopped: List<Stopped> = emptyList()) = checker.check(calls.flatMap { it }.shuffled(), stopped)

    @Test
    fun `a sound history has no violation`() {
        val v = check(
            held("a/1", "s", 1, 10, 0, 1, 1000, 500),
            held("b/1", "s", 1, 11, 0, 2, 1000, 600),
            held("c/1", "s", 2, 12, 550, 601, 2000, 900), // after both ended
            held("d/1", "l", 1, 5, 0, 1, 1000, 100),
            held("e/1", "l", 1, 6, 50, 101, 1000, 200),
        )
        assertTrue(v.ok, v.violations.toString())
        assertEquals(5L, v.figures["grants"])
    }

    @Test
    fun `S1 more permits at work than the total`() {
        val v = check(held("a/1", "l", 1, 5, 0, 1, 1000, 500), held("b/1", "l", 1, 6, 0, 400, 1400, 800))
        assertTrue(v.violations.single().startsWith("S1: l: 2 permits"), v.violations.toString())
    }

    @Test
    fun `S1 a holder whose count ran out is no longer at work, even if it never said so (killed or paused)`() {
        // a's count ended at 300 and it never looked again: b, granted at 400, overlaps nothing.
        val v = check(held("a/1", "l", 1, 5, 0, 1, 300, null), held("b/1", "l", 1, 6, 0, 400, 1400, 800))
        assertTrue(v.ok, v.violations.toString())
    }

    @Test
    fun `S2 a lease handed over with too little left`() {
        val v = check(held("a/1", "l", 1, 5, 0, 100, 150, 120))
        assertTrue(v.violations.single().startsWith("S2:"), v.violations.toString())
    }

    @Test
    fun `S3 a token granted twice, and a lower token to a later call`() {
        val twice = check(held("a/1", "s", 1, 7, 0, 1, 1000, 10), held("b/1", "s", 1, 7, 100, 101, 1000, 110))
        assertTrue(twice.violations.any { it.startsWith("S3: s: tokens granted twice") }, twice.violations.toString())
        val lower = check(held("a/1", "s", 1, 9, 0, 1, 1000, 10), held("b/1", "s", 1, 8, 100, 101, 1000, 110))
        assertTrue(lower.violations.single().startsWith("S3: s: token 8"), lower.violations.toString())
    }

    @Test
    fun `S4 a timed call past its timeout, unless its process was stopped meanwhile`() {
        val late = listOf(Event.Call("w1/1", 0, "tryTimed", "s", 1, 100), Event.None("w1/1", 400 * ms))
        assertTrue(check(late).violations.single().startsWith("S4:"))
        assertTrue(check(late, stopped = listOf(Stopped("w1", 50 * ms, 350 * ms))).ok)
        val onTime = listOf(Event.Call("w1/2", 0, "tryTimed", "s", 1, 100), Event.None("w1/2", 250 * ms))
        assertTrue(check(onTime).ok)
    }

    @Test
    fun `S5 a call that never ended, unless its process was killed`() {
        val pending = listOf(Event.Call("w2/1", 0, "acquire", "s", 1, -1))
        assertTrue(check(pending).violations.single().startsWith("S5:"))
        assertTrue(check(pending, stopped = listOf(Stopped("w2", 10 * ms, Long.MAX_VALUE))).ok)
    }

    @Test
    fun `events survive the worker's line format`() {
        val events = held("w1.2/3.4", "harness-pool", 2, 1795921634469971, 5, 6, 900, 700) +
            listOf(Event.Fail("w1.2/3.5", 7, "QueuedRequestLostException"), Event.None("w1.2/3.6", 8), Event.Look("x/1", 9, -1))
        for (e in events) assertEquals(e, Event.parse(e.line))
    }
}
