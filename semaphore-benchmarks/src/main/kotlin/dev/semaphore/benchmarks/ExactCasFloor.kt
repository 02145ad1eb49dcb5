/*
 * The floor of an uncontended cycle for a semaphore whose over-release check is exact: the least work such a
 * semaphore does per acquire + release when nobody waits. It implements kotlinx's Semaphore interface, so the
 * benchmarks call it exactly as they call kotlinx's (the same interface calls, the same loops).
 *
 * Invariants (what is NOT there is the point):
 * - One volatile int of free permits in the object itself, changed only by a CAS on each side: the acquire
 *   refuses at 0, the release refuses when all permits are already free, both before anything changes. No queue,
 *   no lock bit, no waiters: acquire() never suspends (it throws instead: the floor exists for the uncontended
 *   rows only).
 * - Why a CAS on the release side: a release that must refuse an over-release before it changes anything has to
 *   see the count first. kotlinx's release is one getAndIncrement and repairs an over-release afterwards (it
 *   can, because its total never changes); our engine's word also carries its lock and its queue state, and its
 *   total can be resized, so each side reads the word and swaps it. This floor measures what that costs.
 */
package dev.semaphore.benchmarks

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater
import kotlinx.coroutines.sync.Semaphore

/** A semaphore of [permits] permits with an exact CAS on each side and nothing else (see the file comment). */
public class ExactCasFloor(private val permits: Int) : Semaphore {
    @Volatile
    private var free: Int = permits

    override val availablePermits: Int get() = free

    override fun tryAcquire(): Boolean {
        while (true) {
            val p = free
            if (p <= 0) return false
            if (FREE.compareAndSet(this, p, p - 1)) return true
        }
    }

    override suspend fun acquire() {
        check(tryAcquire()) { "the exact-CAS floor never waits: it is for uncontended cycles only" }
    }

    override fun release() {
        while (true) {
            val p = free
            check(p < permits) { "cannot release: all $permits permits are free" }
            if (FREE.compareAndSet(this, p, p + 1)) return
        }
    }

    private companion object {
        val FREE: AtomicIntegerFieldUpdater<ExactCasFloor> =
            AtomicIntegerFieldUpdater.newUpdater(ExactCasFloor::class.java, "free")
    }
}
