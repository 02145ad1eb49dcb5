package dev.semaphore.benchmarks

import java.util.concurrent.atomic.AtomicLongFieldUpdater
import kotlinx.coroutines.sync.Semaphore

/**
 * The floor of the uncontended rows: the least work per acquire + release, when nobody waits, of a semaphore with our
 * contract. One volatile 64-bit word (free permits high, held low, so the release's check and its CAS see the same
 * word), one CAS on each side, and the test for waiters (the sign bit) that any release must make. It never waits. It
 * implements kotlinx's Semaphore, so it is called exactly as kotlinx's. Why each part: docs/benchmarking.md#floors.
 */
public class ExactCasFloor(private val permits: Int) : Semaphore {
    init {
        require(permits >= 0) { "permits must be >= 0, was $permits" }
    }

    @Volatile
    private var word: Long = permits.toLong() shl 32

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

    /** Where a release with waiters would hand its permit on; nothing ever waits here. */
    private fun wakeWaiter(): Nothing = error("the exact-CAS floor has no waiters")

    private companion object {
        const val ONE_FREE: Long = 1L shl 32
        val WORD: AtomicLongFieldUpdater<ExactCasFloor> = AtomicLongFieldUpdater.newUpdater(ExactCasFloor::class.java, "word")
    }
}
