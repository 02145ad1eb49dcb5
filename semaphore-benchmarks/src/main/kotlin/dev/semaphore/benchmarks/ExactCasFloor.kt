/*
 * The floor of an uncontended cycle for a semaphore with our contract: the least work per acquire + release, when
 * nobody waits, of a semaphore whose release refuses an over-release exactly (before anything changes), whose
 * permits range over Int and whose total can be resized (addPermits, reducePermits) while permits are held. It
 * implements kotlinx's Semaphore interface, so the benchmarks call it exactly as they call kotlinx's.
 *
 * Invariants (what is NOT there is the point):
 * - One volatile 64-bit word in the object itself: the free permits in the high half, the held ones in the low
 *   half, changed only by one CAS on each side (the acquire refuses when none is free, the release when none is
 *   held, both before anything changes). No queue, no lock bit, and this floor never resizes: its acquire() never
 *   suspends (it throws instead: the floor exists for the uncontended rows only).
 * - Why the release tests for waiters: a semaphore whose acquire can wait must learn, on every release, whether
 *   anyone waits (kotlinx's release learns it from the sign of its getAndIncrement's result, our engine from the
 *   sign of its word). Here a waiter would be the word's sign bit (the free count is never negative, so the bit is
 *   spare): the release tests it before its check, and the acquire's one compare already covers it (a negative
 *   word is below one free permit). Nothing ever sets the bit, so the test costs one predictable branch.
 * - Why a read and a CAS on the release side: a release that must refuse an over-release before it changes
 *   anything has to see the count first. kotlinx's release is one getAndIncrement that repairs an over-release
 *   afterwards, which it can do because its total never changes.
 * - Why both counts in one 64-bit word: with a resizable total, the release's check (held >= 1) must be made on the
 *   same word the CAS swaps. A 32-bit count of free permits checked against a total kept elsewhere is open to ABA:
 *   between the release's read of the total and its CAS, a resize can change the total and bring the count back to
 *   the value the CAS expects, so the CAS succeeds on a check made against the old total. Counts over the whole Int
 *   range leave no spare bits for a version, so the word holds both counts in 64 bits, as our engine's does.
 *   (A 32-bit count is cheaper: on the report's machine, an A/B run of both floors put its try cycle 0.24-0.61 ns,
 *   4-11%, below this one's. Our contract cannot have it; kotlinx's, with a fixed total, can.)
 */
package dev.semaphore.benchmarks

import java.util.concurrent.atomic.AtomicLongFieldUpdater
import kotlinx.coroutines.sync.Semaphore

/** A semaphore of [permits] permits with an exact CAS of one 64-bit word on each side and nothing else (see the file comment). */
public class ExactCasFloor(private val permits: Int) : Semaphore {
    init {
        require(permits >= 0) { "permits must be >= 0, was $permits" }
    }

    @Volatile
    private var word: Long = permits.toLong() shl 32 // free permits in the high half, held ones (none) in the low half

    override val availablePermits: Int get() = (word ushr 32).toInt()

    override fun tryAcquire(): Boolean {
        while (true) {
            val w = word
            if (w < ONE_FREE) return false // no free permit
            if (WORD.compareAndSet(this, w, w - ONE_FREE + 1)) return true
        }
    }

    override suspend fun acquire() {
        check(tryAcquire()) { "the exact-CAS floor never waits: it is for uncontended cycles only" }
    }

    override fun release() {
        while (true) {
            val w = word
            if (w < 0) wakeWaiter()
            check(w.toInt() >= 1) { "cannot release: all $permits permits are free" }
            if (WORD.compareAndSet(this, w, w + ONE_FREE - 1)) return
        }
    }

    /** Where a release with waiters would hand its permit on; nothing ever waits on this floor. */
    private fun wakeWaiter(): Nothing = error("the exact-CAS floor has no waiters")

    private companion object {
        const val ONE_FREE: Long = 1L shl 32

        val WORD: AtomicLongFieldUpdater<ExactCasFloor> =
            AtomicLongFieldUpdater.newUpdater(ExactCasFloor::class.java, "word")
    }
}
