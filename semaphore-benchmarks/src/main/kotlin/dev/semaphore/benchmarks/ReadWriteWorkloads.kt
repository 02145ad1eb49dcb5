/*
 * The read-write workloads of ReadWriteBenchmark (coroutines) and ReadWriteThreadsBenchmark (blocking
 * threads), and the read-write locks they compare.
 *
 * Invariants (each workload checks its own outcome and throws if it is wrong, so a broken lock cannot
 * produce a fast number):
 * - Every one of the `sections` critical sections runs exactly once, with the kind (read or write) that
 *   SectionKinds fixed for it in advance: the same sequence for every contender.
 * - No writer ever overlaps a reader or another writer: every section enters and leaves one shared
 *   ExclusionCheck (an atomic counter, the same code for every contender), which throws at the first
 *   overlap it sees.
 * - Section j is run by caller j % callers, in increasing j; the work is the per-caller xorshift of
 *   Workloads.geometricWork, so ours and the peers do exactly the same work.
 * - Every lock adapter forwards to the lock's own public calls, with no extra synchronization.
 */
package dev.semaphore.benchmarks

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import java.util.concurrent.ExecutorService
import java.util.concurrent.Future
import java.util.concurrent.atomic.AtomicInteger
import dev.semaphore.ReadWritePolicy
import dev.semaphore.ReadWriteLock as OurReadWriteLock
import kotlinx.coroutines.sync.Mutex as KotlinxMutex
import kotlinx.coroutines.sync.Semaphore as KotlinxSemaphore

/** A read-write lock a coroutine workload takes and ends holds of. */
public interface SuspendReadWrite {
    /** Suspends until a read hold is taken. */
    public suspend fun lockRead()

    /** Ends a read hold. */
    public fun unlockRead()

    /** Suspends until the write hold is taken. */
    public suspend fun lockWrite()

    /** Ends the write hold. */
    public fun unlockWrite()
}

/**
 * The kind of each of [sections] sections, fixed in advance: exactly `sections * readPercent / 100`
 * (rounded down) are reads, the others writes, in an order shuffled by a fixed-seed xorshift (the same
 * for every contender and every run).
 */
public class SectionKinds(public val sections: Int, public val readPercent: Int) {
    init {
        require(sections >= 1) { "sections must be >= 1, was $sections" }
        require(readPercent in 0..100) { "readPercent must be in 0..100, was $readPercent" }
    }

    /** The number of read sections. */
    public val reads: Int = (sections.toLong() * readPercent / 100).toInt()

    /** The number of write sections. */
    public val writes: Int = sections - reads

    private val write = BooleanArray(sections) { it >= reads }

    init {
        // Fisher-Yates with a fixed xorshift64 seed.
        var x = -0x61c8864680b583ebL
        for (i in sections - 1 downTo 1) {
            x = x xor (x shl 13)
            x = x xor (x ushr 7)
            x = x xor (x shl 17)
            val k = ((x ushr 1) % (i + 1)).toInt()
            val t = write[i]
            write[i] = write[k]
            write[k] = t
        }
    }

    /** True if section [j] is a write. */
    public fun isWrite(j: Int): Boolean = write[j]
}

/**
 * Counts the readers and the writer inside their sections and throws [IllegalStateException] at the
 * first overlap a writer has with anyone. One atomic read-modify-write on entry and one on exit, for
 * readers and writers alike.
 */
public class ExclusionCheck {
    private val state = AtomicInteger()

    /** A reader enters: fails if a writer is inside. */
    public fun enterRead() {
        val s = state.incrementAndGet()
        check(s < WRITER) { "exclusion violated: a reader entered while a writer was inside (${describe(s - 1)})" }
    }

    /** A reader leaves. */
    public fun exitRead() {
        state.decrementAndGet()
    }

    /** A writer enters: fails if anyone is inside. */
    public fun enterWrite() {
        val s = state.get()
        check(s == 0 && state.compareAndSet(0, WRITER)) {
            "exclusion violated: a writer entered while others were inside (${describe(state.get())})"
        }
    }

    /** A writer leaves: fails if anyone entered while it was inside. */
    public fun exitWrite() {
        check(state.compareAndSet(WRITER, 0)) {
            "exclusion violated: others entered while a writer was inside (${describe(state.get())})"
        }
    }

    private fun describe(s: Int): String = "readers inside: ${s and (WRITER - 1)}, writers inside: ${s / WRITER}"

    private companion object {
        /** The writer's weight: above any number of readers a test or benchmark runs. */
        const val WRITER = 1 shl 20
    }
}

/** Factories for the read-write locks the benchmark compares. */
public object ReadWritePrimitives {
    /**
     * "ours": dev.semaphore.ReadWriteLock ("oursPhaseFair": with ReadWritePolicy.PHASE_FAIR). "kotlinxMutex": one kotlinx Mutex for reads and writes alike.
     * "kotlinxSemaphore": the reader-writer lock built on a kotlinx Semaphore of K = [coroutines] permits
     * (so a reader never waits for other readers): a read takes 1 permit; a write takes a kotlinx Mutex
     * (writers one at a time, so two writers never deadlock holding part of the permits each), then the
     * K permits one at a time, and keeps the Mutex until it ends. "kotlinxSemaphore-K" is the same with K
     * permits (at most K readers at once).
     * @throws IllegalArgumentException for an unknown [impl].
     */
    @JvmStatic
    public fun of(impl: String, coroutines: Int): SuspendReadWrite {
        if (impl == "ours") return OursReadWrite(OurReadWriteLock())
        if (impl == "oursPhaseFair") return OursReadWrite(OurReadWriteLock(ReadWritePolicy.PHASE_FAIR))
        if (impl == "kotlinxMutex") return KotlinxMutexReadWrite(KotlinxMutex())
        if (impl == "kotlinxSemaphore") return KotlinxSemaphoreReadWrite(coroutines)
        val k = impl.removePrefix("kotlinxSemaphore-").toIntOrNull()
        require(impl.startsWith("kotlinxSemaphore-") && k != null && k >= 1) {
            "unknown read-write impl '$impl' (expected ours, oursPhaseFair, kotlinxMutex, kotlinxSemaphore or kotlinxSemaphore-K with K >= 1)"
        }
        return KotlinxSemaphoreReadWrite(k)
    }

    /** The permits K of a "kotlinxSemaphore" or "kotlinxSemaphore-K" lock for [coroutines] coroutines. */
    @JvmStatic
    public fun semaphorePermits(impl: String, coroutines: Int): Int =
        if (impl == "kotlinxSemaphore") coroutines else impl.removePrefix("kotlinxSemaphore-").toInt()
}

private class OursReadWrite(val l: OurReadWriteLock) : SuspendReadWrite {
    override suspend fun lockRead() = l.lockRead()
    override fun unlockRead() = l.unlockRead()
    override suspend fun lockWrite() = l.lockWrite()
    override fun unlockWrite() = l.unlockWrite()
}

private class KotlinxMutexReadWrite(val m: KotlinxMutex) : SuspendReadWrite {
    override suspend fun lockRead() = m.lock(null)
    override fun unlockRead() = m.unlock(null)
    override suspend fun lockWrite() = m.lock(null)
    override fun unlockWrite() = m.unlock(null)
}

/** A reader-writer lock on a kotlinx Semaphore of [permits] permits (see [ReadWritePrimitives.of]). */
internal class KotlinxSemaphoreReadWrite(private val permits: Int) : SuspendReadWrite {
    private val semaphore = KotlinxSemaphore(permits)
    private val writers = KotlinxMutex()

    override suspend fun lockRead() = semaphore.acquire()
    override fun unlockRead() = semaphore.release()

    override suspend fun lockWrite() {
        writers.lock(null)
        var taken = 0
        try {
            while (taken < permits) {
                semaphore.acquire()
                taken++
            }
        } catch (e: Throwable) {
            // Cancelled part-way: give back what was taken, and let the next writer in.
            repeat(taken) { semaphore.release() }
            writers.unlock(null)
            throw e
        }
    }

    override fun unlockWrite() {
        repeat(permits) { semaphore.release() }
        writers.unlock(null)
    }
}

/** Workloads of the read-write benchmarks (static entry points for Java). */
public object ReadWriteWorkloads {
    /**
     * Runs the sections of [kinds] over [coroutines] coroutines on [dispatcher]: section j by coroutine
     * j % coroutines, each with geometric work of mean [workOutside] before taking the hold its kind
     * says and of mean [workInside] while holding it. Checks exclusion in every section and that every
     * section ran once; returns a digest of the work (for a Blackhole).
     */
    @JvmStatic
    public fun readWrite(
        lock: SuspendReadWrite,
        dispatcher: CoroutineDispatcher,
        coroutines: Int,
        kinds: SectionKinds,
        workInside: Int,
        workOutside: Int,
    ): Long = runBlocking {
        require(coroutines >= 1) { "coroutines must be >= 1, was $coroutines" }
        val check = ExclusionCheck()
        val reads = IntArray(coroutines)
        val writes = IntArray(coroutines)
        val digest = LongArray(coroutines)
        val jobs = List(coroutines) { i ->
            launch(dispatcher) {
                var x = Workloads.seed(i)
                var j = i
                while (j < kinds.sections) {
                    x = Workloads.geometricWork(x, workOutside)
                    if (kinds.isWrite(j)) {
                        lock.lockWrite()
                        try {
                            check.enterWrite()
                            x = Workloads.geometricWork(x, workInside)
                            check.exitWrite()
                        } finally {
                            lock.unlockWrite()
                        }
                        writes[i]++
                    } else {
                        lock.lockRead()
                        try {
                            check.enterRead()
                            x = Workloads.geometricWork(x, workInside)
                            check.exitRead()
                        } finally {
                            lock.unlockRead()
                        }
                        reads[i]++
                    }
                    j += coroutines
                }
                digest[i] = x
            }
        }
        jobs.joinAll()
        checkCounts(kinds, reads.sum(), writes.sum())
        digest.sum()
    }

    /**
     * The same sections on blocking threads: [threads] tasks on [pool] (which must run them all at once
     * to have [threads] callers), task i running sections i, i + threads, ... on [lock] (its read and
     * write locks, blocking). Same checks and digest as [readWrite].
     */
    @JvmStatic
    public fun readWriteBlocking(
        lock: java.util.concurrent.locks.ReadWriteLock,
        pool: ExecutorService,
        threads: Int,
        kinds: SectionKinds,
        workInside: Int,
        workOutside: Int,
    ): Long {
        require(threads >= 1) { "threads must be >= 1, was $threads" }
        val check = ExclusionCheck()
        val read = lock.readLock()
        val write = lock.writeLock()
        val futures = ArrayList<Future<LongArray>>(threads)
        for (i in 0 until threads) {
            futures.add(
                pool.submit<LongArray> {
                    var x = Workloads.seed(i)
                    var reads = 0L
                    var writes = 0L
                    var j = i
                    while (j < kinds.sections) {
                        x = Workloads.geometricWork(x, workOutside)
                        if (kinds.isWrite(j)) {
                            write.lock()
                            try {
                                check.enterWrite()
                                x = Workloads.geometricWork(x, workInside)
                                check.exitWrite()
                            } finally {
                                write.unlock()
                            }
                            writes++
                        } else {
                            read.lock()
                            try {
                                check.enterRead()
                                x = Workloads.geometricWork(x, workInside)
                                check.exitRead()
                            } finally {
                                read.unlock()
                            }
                            reads++
                        }
                        j += threads
                    }
                    longArrayOf(x, reads, writes)
                },
            )
        }
        var digest = 0L
        var reads = 0L
        var writes = 0L
        for (f in futures) {
            val r = try {
                f.get()
            } catch (e: java.util.concurrent.ExecutionException) {
                throw e.cause ?: e
            }
            digest += r[0]
            reads += r[1]
            writes += r[2]
        }
        checkCounts(kinds, reads.toInt(), writes.toInt())
        return digest
    }

    private fun checkCounts(kinds: SectionKinds, reads: Int, writes: Int) {
        check(reads == kinds.reads && writes == kinds.writes) {
            "ran $reads read and $writes write sections, expected ${kinds.reads} and ${kinds.writes}"
        }
    }
}
