/*
 * The misuse table: every way to call the primitives wrongly (and the edge values that are valid),
 * one row each. For an invalid call the row names the exception type and the text its message must
 * contain (the bad value), and the test checks that the primitive's observable state
 * (availablePermits, queueLength, isClosed / isLocked, holders) is the same after the call as before.
 * For a valid edge value the row states the outcome it must have.
 *
 * Invariant under test: I9 of WaiterQueue.kt (bad input throws before anything changes).
 */
package dev.semaphore.verification

import dev.semaphore.Lock
import dev.semaphore.PrioritySemaphore
import dev.semaphore.Semaphore
import dev.semaphore.SemaphoreClosedException
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.Arguments
import org.junit.jupiter.params.provider.MethodSource
import kotlin.time.Duration
import kotlin.time.Duration.Companion.INFINITE
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TestTimeSource

/** What a row expects: an exception whose message contains every fragment, or a valid result. */
sealed class Expect {
    /** The call throws [type] (exactly that class) with a message containing each of [fragments]. */
    data class Throws(val type: Class<out Throwable>, val fragments: List<String>) : Expect()

    /** The call returns [value]; the state checks still apply unless [changesState]. */
    data class Returns(val value: Any?, val changesState: Boolean = false) : Expect()
}

/** The observable state of a primitive, compared before and after each row's call. */
data class Snapshot(val available: Int?, val queued: Int, val closed: Boolean?, val locked: Boolean?, val extra: Any?)

/** A primitive under test, built fresh for one row, with its snapshot. */
class Subject(val target: Any, val snap: () -> Snapshot)

/** One row: a [build]er for a fresh subject in the row's starting state, the [call], and what to [expect]. */
class Row(val name: String, val build: () -> Subject, val expect: Expect, val call: suspend (Any) -> Any?) {
    override fun toString() = name
}

private fun sem(permits: Int = 2, setup: Semaphore.() -> Unit = {}) = {
    val s = Semaphore(permits).apply(setup)
    Subject(s) { Snapshot(s.availablePermits, s.queueLength, s.isClosed, null, null) }
}

private fun prio(permits: Int = 2, setup: PrioritySemaphore.() -> Unit = {}) = {
    val s = PrioritySemaphore(permits).apply(setup)
    Subject(s) { Snapshot(s.availablePermits, s.queueLength, s.isClosed, null, null) }
}

private val A = object : Any() { override fun toString() = "ownerA" }
private val B = object : Any() { override fun toString() = "ownerB" }

private fun lock(setup: Lock.() -> Unit = {}) = {
    val l = Lock().apply(setup)
    Subject(l) { Snapshot(null, l.queueLength, null, l.isLocked, listOf(l.holdsLock(A), l.holdsLock(B))) }
}

private fun iae(vararg f: String) = Expect.Throws(IllegalArgumentException::class.java, f.toList())
private fun ise(vararg f: String) = Expect.Throws(IllegalStateException::class.java, f.toList())
private fun closed(vararg f: String) = Expect.Throws(SemaphoreClosedException::class.java, f.toList())

class MisuseTableTest {
    companion object {
        private val badCounts = listOf(0, -1, Int.MIN_VALUE)

        @JvmStatic
        fun rows(): List<Arguments> {
            val r = mutableListOf<Row>()
            // ---- bad counts, every entry point that takes a count ----
            for (n in badCounts) {
                val msg = "was $n"
                r += Row("Semaphore.acquire($n)", sem(), iae(msg)) { (it as Semaphore).acquire(n) }
                r += Row("Semaphore.tryAcquire($n)", sem(), iae(msg)) { (it as Semaphore).tryAcquire(n) }
                r += Row("Semaphore.tryAcquire(1s, $n)", sem(), iae(msg)) { (it as Semaphore).tryAcquire(1.seconds, n) }
                r += Row("Semaphore.release($n)", sem { tryAcquire(2) }, iae(msg)) { (it as Semaphore).release(n) }
                r += Row("Semaphore.addPermits($n)", sem(), iae(msg)) { (it as Semaphore).addPermits(n) }
                r += Row("Semaphore.reducePermits($n)", sem(), iae(msg)) { (it as Semaphore).reducePermits(n) }
                r += Row("PrioritySemaphore.acquire($n, priority = 0)", prio(), iae(msg)) { (it as PrioritySemaphore).acquire(n, priority = 0) }
                r += Row("PrioritySemaphore.tryAcquire($n, priority = 0)", prio(), iae(msg)) { (it as PrioritySemaphore).tryAcquire(n, priority = 0) }
                r += Row("PrioritySemaphore.tryAcquire(1s, $n, priority = 0)", prio(), iae(msg)) {
                    (it as PrioritySemaphore).tryAcquire(1.seconds, n, priority = 0)
                }
                r += Row("PrioritySemaphore.release($n)", prio { tryAcquire(2) }, iae(msg)) { (it as PrioritySemaphore).release(n) }
                r += Row("PrioritySemaphore.addPermits($n)", prio(), iae(msg)) { (it as PrioritySemaphore).addPermits(n) }
                r += Row("PrioritySemaphore.reducePermits($n)", prio(), iae(msg)) { (it as PrioritySemaphore).reducePermits(n) }
            }
            // ---- more than the total ----
            val tooMany = arrayOf("3 permits", "only 2 permits in total")
            r += Row("Semaphore(2).acquire(3)", sem(), iae(*tooMany)) { (it as Semaphore).acquire(3) }
            r += Row("Semaphore(2).tryAcquire(3)", sem(), iae(*tooMany)) { (it as Semaphore).tryAcquire(3) }
            r += Row("Semaphore(2) held.tryAcquire(3)", sem { tryAcquire(2) }, iae(*tooMany)) { (it as Semaphore).tryAcquire(3) }
            r += Row("Semaphore(2).tryAcquire(1s, 3)", sem(), iae(*tooMany)) { (it as Semaphore).tryAcquire(1.seconds, 3) }
            r += Row("Semaphore(2).acquire(Int.MAX_VALUE)", sem(), iae("${Int.MAX_VALUE} permits")) {
                (it as Semaphore).acquire(Int.MAX_VALUE)
            }
            r += Row("PrioritySemaphore(2).acquire(3, priority = 5)", prio(), iae(*tooMany)) { (it as PrioritySemaphore).acquire(3, priority = 5) }
            r += Row("PrioritySemaphore(2).tryAcquire(3, priority = 5)", prio(), iae(*tooMany)) { (it as PrioritySemaphore).tryAcquire(3, priority = 5) }
            r += Row("PrioritySemaphore(2).acquire(3)", prio(), iae(*tooMany)) { (it as PrioritySemaphore).acquire(3) } // a positional Int is permits
            r += Row("Semaphore(2).reducePermits(3)", sem(), iae("reduce by 3", "only 2")) { (it as Semaphore).reducePermits(3) }
            r += Row("Semaphore(2).addPermits(Int.MAX_VALUE)", sem(), iae("add ${Int.MAX_VALUE} permits", "total of 2")) {
                (it as Semaphore).addPermits(Int.MAX_VALUE)
            }
            // ---- over-release ----
            r += Row("Semaphore(2) free.release(1)", sem(), ise("release 1 permits", "2 of 2 are available")) {
                (it as Semaphore).release(1)
            }
            r += Row("Semaphore(2) one held.release(2)", sem { tryAcquire(1) }, ise("release 2 permits", "1 of 2", "at most 1")) {
                (it as Semaphore).release(2)
            }
            r += Row("Semaphore(0)+addPermits(2).release(1)", sem(0) { addPermits(2) }, ise("release 1 permits", "2 of 2")) {
                (it as Semaphore).release(1)
            }
            r += Row("PrioritySemaphore(2) free.release(1)", prio(), ise("release 1 permits", "2 of 2")) {
                (it as PrioritySemaphore).release(1)
            }
            // ---- after close ----
            val cause = RuntimeException("shutdown-cause")
            for ((label, c) in listOf("no cause" to null, "with cause" to cause)) {
                val frag = if (c == null) arrayOf("closed") else arrayOf("closed", "shutdown-cause")
                r += Row("closed Semaphore ($label).acquire()", sem { close(c) }, closed(*frag)) { (it as Semaphore).acquire() }
                r += Row("closed Semaphore ($label).tryAcquire()", sem { close(c) }, closed(*frag)) { (it as Semaphore).tryAcquire() }
                r += Row("closed Semaphore ($label).tryAcquire(1s, 1)", sem { close(c) }, closed(*frag)) {
                    (it as Semaphore).tryAcquire(1.seconds, 1)
                }
                r += Row("closed PrioritySemaphore ($label).acquire(priority = 7)", prio { close(c) }, closed(*frag)) {
                    (it as PrioritySemaphore).acquire(priority = 7)
                }
                r += Row("closed PrioritySemaphore ($label).tryAcquire(priority = 7)", prio { close(c) }, closed(*frag)) {
                    (it as PrioritySemaphore).tryAcquire(priority = 7)
                }
                r += Row("closed Lock ($label).lock()", lock { close(c) }, closed(*frag)) { (it as Lock).lock() }
                r += Row("closed Lock ($label) free.tryLock()", lock { close(c) }, closed(*frag)) { (it as Lock).tryLock() }
                r += Row("closed Lock ($label) held.tryLock(ownerB)", lock { tryLock(A); close(c) }, closed(*frag)) {
                    (it as Lock).tryLock(B)
                }
                r += Row("closed Lock ($label) held.tryLock(1s)", lock { tryLock(A); close(c) }, closed(*frag)) {
                    (it as Lock).tryLock(1.seconds)
                }
            }
            r += Row("closed Semaphore.release() of a held permit still works", sem { tryAcquire(1); close() },
                Expect.Returns(Unit, changesState = true)) { (it as Semaphore).release(1) }
            r += Row("closed Semaphore.close() again is a no-op", sem { close() }, Expect.Returns(Unit)) { (it as Semaphore).close() }
            r += Row("closed Lock.unlock(ownerA) of its holder still works", lock { tryLock(A); close() },
                Expect.Returns(Unit, changesState = true)) { (it as Lock).unlock(A) }
            // ---- Lock misuse ----
            r += Row("Lock free.unlock()", lock(), ise("not locked")) { (it as Lock).unlock() }
            r += Row("Lock free.unlock(ownerA)", lock(), ise("not locked", "ownerA")) { (it as Lock).unlock(A) }
            r += Row("Lock double unlock(ownerA)", lock { tryLock(A); unlock(A) }, ise("not locked", "ownerA")) { (it as Lock).unlock(A) }
            r += Row("Lock held by A.unlock(ownerB)", lock { tryLock(A) }, ise("held by ownerA", "not by ownerB")) {
                (it as Lock).unlock(B)
            }
            r += Row("Lock held without owner.unlock(ownerB)", lock { tryLock() }, ise("without owner", "not by ownerB")) {
                (it as Lock).unlock(B)
            }
            r += Row("Lock held by A.tryLock(ownerA)", lock { tryLock(A) }, ise("already held by ownerA", "not reentrant")) {
                (it as Lock).tryLock(A)
            }
            r += Row("Lock held by A.lock(ownerA)", lock { tryLock(A) }, ise("already held by ownerA")) { (it as Lock).lock(A) }
            r += Row("Lock held by A.tryLock(1s, ownerA)", lock { tryLock(A) }, ise("already held by ownerA")) {
                (it as Lock).tryLock(1.seconds, A)
            }
            r += Row("Lock held by A.tryLock(ownerB)", lock { tryLock(A) }, Expect.Returns(false)) { (it as Lock).tryLock(B) }
            r += Row("Lock(locked=true).unlock(ownerA)", { Lock(locked = true).let { l -> Subject(l) { Snapshot(null, l.queueLength, null, l.isLocked, null) } } },
                ise("without owner", "not by ownerA")) { (it as Lock).unlock(A) }
            // ---- negative initial permits, aging ----
            for (n in listOf(-1, Int.MIN_VALUE)) {
                r += Row("Semaphore($n)", { Subject(Unit) { Snapshot(null, 0, null, null, null) } }, iae("was $n")) { Semaphore(n) }
                r += Row("PrioritySemaphore($n)", { Subject(Unit) { Snapshot(null, 0, null, null, null) } }, iae("was $n")) {
                    PrioritySemaphore(n)
                }
            }
            for (aging in listOf(Duration.ZERO, (-1).seconds, INFINITE)) {
                r += Row("PrioritySemaphore(1, aging=$aging)", { Subject(Unit) { Snapshot(null, 0, null, null, null) } },
                    iae("aging", "was $aging")) { PrioritySemaphore(1, aging = aging) }
            }
            // ---- durations at zero / negative: try now, nothing waits ----
            for (d in listOf(Duration.ZERO, (-5).seconds, -INFINITE)) {
                r += Row("Semaphore none free.tryAcquire($d, 1) -> false", sem { tryAcquire(2) }, Expect.Returns(false)) {
                    (it as Semaphore).tryAcquire(d, 1)
                }
                r += Row("Semaphore free.tryAcquire($d, 1) -> true", sem(), Expect.Returns(true, changesState = true)) {
                    (it as Semaphore).tryAcquire(d, 1)
                }
                r += Row("PrioritySemaphore none free.tryAcquire($d, 1, priority = 9) -> false", prio { tryAcquire(2) }, Expect.Returns(false)) {
                    (it as PrioritySemaphore).tryAcquire(d, 1, priority = 9)
                }
                r += Row("Lock held.tryLock($d, ownerB) -> false", lock { tryLock(A) }, Expect.Returns(false)) {
                    (it as Lock).tryLock(d, B)
                }
                r += Row("Lock free.tryLock($d, ownerB) -> true", lock(), Expect.Returns(true, changesState = true)) {
                    (it as Lock).tryLock(d, B)
                }
            }
            r += Row("Semaphore free.tryAcquire(INFINITE, 2) -> true", sem(), Expect.Returns(true, changesState = true)) {
                (it as Semaphore).tryAcquire(INFINITE, 2)
            }
            return r.map { Arguments.of(it) }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    fun misuse(row: Row) = runBlocking {
        val subject = row.build()
        val before = subject.snap()
        when (val e = row.expect) {
            is Expect.Throws -> {
                val thrown = runCatching { row.call(subject.target) }.exceptionOrNull()
                    ?: throw AssertionError("${row.name}: expected ${e.type.simpleName}, but the call returned normally")
                assertEquals(e.type, thrown.javaClass, "${row.name}: wrong exception type: $thrown")
                for (f in e.fragments) {
                    assertTrue(thrown.message?.contains(f) == true, "${row.name}: message '${thrown.message}' does not name '$f'")
                }
                assertEquals(before, subject.snap(), "${row.name}: state changed by a rejected call")
            }
            is Expect.Returns -> {
                assertEquals(e.value, row.call(subject.target), row.name)
                if (!e.changesState) assertEquals(before, subject.snap(), "${row.name}: state changed")
            }
        }
    }

    /** The table itself is complete: every kind of misuse named in the verification brief has rows. */
    @Test
    fun tableCoversEveryKind() {
        val names = rows().map { it.get()[0].toString() }
        for (kind in listOf("(0", "(-1", "(-2147483648", ".acquire(3)", "release(1)", "double unlock", "unlock(ownerB)",
            "tryLock(ownerA)", "closed Semaphore", "closed PrioritySemaphore", "closed Lock", "Semaphore(-1)", "aging=0s", "aging=-1s",
            "aging=Infinity", "(0s, 1) -> false", "(-5s, 1) -> false", "(0s, ownerB) -> false", "INFINITE")) {
            assertTrue(names.any { kind in it }, "no row for $kind")
        }
    }

    // ---- valid edge values that need more than one call to show their outcome ----

    /** Int.MIN_VALUE and Int.MAX_VALUE are valid priorities and are served highest first, FIFO within one. */
    @Test
    fun extremePrioritiesWorkAndOrder() = runBlocking {
        for (aging in listOf<Duration?>(null, 1.milliseconds, 1.seconds)) {
            val clock = TestTimeSource()
            val s = PrioritySemaphore(1, aging, clock)
            assertTrue(s.tryAcquire(priority = Int.MIN_VALUE)) // hold the only permit; MIN_VALUE is a valid priority
            val order = mutableListOf<String>()
            val prios = listOf(Int.MIN_VALUE to "min1", 0 to "zero", Int.MAX_VALUE to "max1", Int.MIN_VALUE to "min2", Int.MAX_VALUE to "max2")
            val jobs = prios.map { (p, name) -> launch(start = CoroutineStart.UNDISPATCHED) { s.acquire(priority = p); order += name } }
            assertEquals(5, s.queueLength)
            assertEquals(2, s.queueLength(Int.MIN_VALUE))
            assertEquals(2, s.queueLength(Int.MAX_VALUE))
            repeat(5) {
                s.release(1)
                yield()
            }
            jobs.forEach { it.join() }
            assertEquals(listOf("max1", "max2", "zero", "min1", "min2"), order, "aging=$aging")
            assertEquals(0, s.availablePermits)
            assertEquals(0, s.queueLength)
        }
    }

    /** With aging, a waiter at Int.MIN_VALUE eventually outranks a younger one at Int.MAX_VALUE (no overflow). */
    @Test
    fun agingLiftsMinValueAboveYoungMaxValue() = runBlocking {
        val clock = TestTimeSource()
        val s = PrioritySemaphore(1, aging = 1.milliseconds, timeSource = clock)
        assertTrue(s.tryAcquire(priority = Int.MAX_VALUE))
        val order = mutableListOf<String>()
        val old = launch(start = CoroutineStart.UNDISPATCHED) { s.acquire(priority = Int.MIN_VALUE); order += "old-min" }
        // (MAX - MIN) = 2^32 - 1 aging intervals of 1 ms, plus one more: about 50 days of waiting.
        clock += (4_294_967_296L).milliseconds
        val young = launch(start = CoroutineStart.UNDISPATCHED) { s.acquire(priority = Int.MAX_VALUE); order += "young-max" }
        s.release(1); yield(); s.release(1); yield()
        old.join(); young.join()
        assertEquals(listOf("old-min", "young-max"), order)
        assertEquals(0, s.availablePermits)
    }

    /** Duration.INFINITE waits without limit: the call stays queued until a release, then returns true. */
    @Test
    fun infiniteTimeoutWaits() = runBlocking {
        val s = Semaphore(1)
        assertTrue(s.tryAcquire())
        var result: Boolean? = null
        val job = launch(start = CoroutineStart.UNDISPATCHED) { result = s.tryAcquire(INFINITE, 1) }
        repeat(10) { yield() }
        assertEquals(1, s.queueLength)
        assertEquals(null, result)
        s.release(1)
        job.join()
        assertEquals(true, result)
        assertEquals(0, s.availablePermits)

        val l = Lock()
        l.tryLock(A)
        var locked: Boolean? = null
        val lj = launch(start = CoroutineStart.UNDISPATCHED) { locked = l.tryLock(INFINITE, B) }
        repeat(10) { yield() }
        assertEquals(1, l.queueLength)
        l.unlock(A)
        lj.join()
        assertEquals(true, locked)
        assertTrue(l.holdsLock(B))
    }

    /** A waiter whose request the total shrinks below fails with a message naming both numbers. */
    @Test
    fun queuedRequestLargerThanShrunkTotalFails() = runBlocking {
        val s = Semaphore(3)
        assertTrue(s.tryAcquire(3))
        var failure: Throwable? = null
        val job = launch(start = CoroutineStart.UNDISPATCHED) { failure = runCatching { s.acquire(3) }.exceptionOrNull() }
        s.reducePermits(1)
        job.join()
        val f = failure
        assertTrue(f is IllegalStateException && f.message!!.contains("3 permits") && f.message!!.contains("total is now 2"), "$f")
        assertEquals(0, s.queueLength)
        assertEquals(-1, s.availablePermits)
        s.release(3) // the 3 held permits repay the debt: 2 of 2 free
        assertEquals(2, s.availablePermits)
        val e = assertThrows<IllegalStateException> { s.release(1) }
        assertTrue(e.message!!.contains("release 1 permits") && e.message!!.contains("2 of 2"), e.message)
    }
}
