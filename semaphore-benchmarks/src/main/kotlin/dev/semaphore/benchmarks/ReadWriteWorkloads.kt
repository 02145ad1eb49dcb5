/*
 * The read-write locks ReadWriteBenchmark (coroutines) and ReadWriteThreadsBenchmark (blocking threads) compare, and
 * their workloads. Each workload checks that every section ran once with the kind SectionKinds fixed for it, and that
 * no writer overlapped anyone (ExclusionCheck, the same atomic counter for every contender). Section j is run by
 * caller j % callers, with the per-caller work of Workloads.geometricWork.
 */
package dev.semaphore.benchmarks

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import java.util.concurrent.ExecutionException
import java.util.concurrent.ExecutorService
import java.util.concurrent.atomic.AtomicInteger
import dev.semaphore.ReadWritePolicy
import dev.semaphore.ReadWriteLock as OurReadWriteLock
import kotlinx.coroutines.sync.Mutex as KotlinxMutex
import kotlinx.coroutines.sync.Semaphore as KotlinxSemaphore

/** A read-write lock a coroutine workload takes and ends holds of. */
public interface SuspendReadWrite {
    public suspend fun lockRead()
    public fun unlockRead()
    public suspend fun lockWrite()
    public fun unlockWrite()
}

/**
 * The kind of each of [sections] sections, fixed in advance: exactly `sections * readPercent / 100` reads (rounded
 * down), in an order shuffled with a fixed seed (the same for every contender and every run).
 */
public class SectionKinds(public val sections: Int, public val readPercent: Int) {
    init {
        require(sections >= 1) { "sections must be >= 1, was $sections" }
        require(readPercent in 0..100) { "readPercent must be in 0..100, was $readPercent" }
    }

    public val reads: Int = (sections.toLong() * readPercent / 100).toInt()
    public val writes: Int = sections - reads
    private val write = BooleanArray(sections) { it >= reads }

    init {
        var x = -0x61c8864680b583ebL // Fisher-Yates with a fixed xorshift64 seed
        for (i in sections - 1 downTo 1) {
            x = Workloads.geometricWork(x, 1) // one xorshift64 step
            val k = ((x ushr 1) % (i + 1)).toInt()
            write[i] = write[k].also { write[k] = write[i] }
        }
    }

    public fun isWrite(j: Int): Boolean = write[j]
}

/** Counts readers and writers inside their sections; throws at the first overlap of a writer with anyone. */
public class ExclusionCheck {
    private val state = AtomicInteger()

    public fun enterRead() {
        val s = state.incrementAndGet()
        check(s < WRITER) { "exclusion violated: a reader entered while a writer was inside (${describe(s - 1)})" }
    }

    public fun exitRead() { state.decrementAndGet() }

    public fun enterWrite() {
        val s = state.get()
        check(s == 0 && state.compareAndSet(0, WRITER)) { "exclusion violated: a writer entered while others were inside (${describe(state.get())})" }
    }

    public fun exitWrite() {
        check(state.compareAndSet(WRITER, 0)) { "exclusion violated: others entered while a writer was inside (${describe(state.get())})" }
    }

    /** A read section's work of mean [work] on [x], checked. */
    internal fun read(x: Long, work: Int): Long {
        enterRead()
        return Workloads.geometricWork(x, work).also { exitRead() }
    }

    /** A write section's work of mean [work] on [x], checked. */
    internal fun write(x: Long, work: Int): Long {
        enterWrite()
        return Workloads.geometricWork(x, work).also { exitWrite() }
    }

    private fun describe(s: Int): String = "readers inside: ${s and (WRITER - 1)}, writers inside: ${s / WRITER}"

    private companion object { const val WRITER = 1 shl 20 } // above any number of readers
}

public object ReadWritePrimitives {
    /**
     * "ours": dev.semaphore.ReadWriteLock; "oursPhaseFair", "oursWritersLine": the same with PHASE_FAIR, WRITERS_LINE; "kotlinxMutex": one Mutex for
     * reads and writes; "kotlinxSemaphore": a kotlinx Semaphore of K = [coroutines] permits (a read takes 1; a write
     * takes a Mutex, then the K permits one at a time); "kotlinxSemaphore-K": the same with K permits.
     */
    @JvmStatic public fun of(impl: String, coroutines: Int): SuspendReadWrite = when (impl) {
        "ours" -> OursReadWrite(OurReadWriteLock())
        "oursPhaseFair" -> OursReadWrite(OurReadWriteLock(ReadWritePolicy.PHASE_FAIR))
        "oursWritersLine" -> OursReadWrite(OurReadWriteLock(ReadWritePolicy.WRITERS_LINE))
        "kotlinxMutex" -> KotlinxMutexReadWrite(KotlinxMutex())
        "kotlinxSemaphore" -> KotlinxSemaphoreReadWrite(coroutines)
        else -> impl.removePrefix("kotlinxSemaphore-").toIntOrNull()?.takeIf { impl.startsWith("kotlinxSemaphore-") && it >= 1 }
            ?.let { KotlinxSemaphoreReadWrite(it) }
            ?: throw IllegalArgumentException(
                "unknown read-write impl '$impl' (expected ours, oursPhaseFair, oursWritersLine, kotlinxMutex, kotlinxSemaphore or kotlinxSemaphore-K with K >= 1)",
            )
    }
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

/** A reader-writer lock on a kotlinx Semaphore of [permits] permits; a Mutex keeps writers one at a time (no deadlock). */
internal class KotlinxSemaphoreReadWrite(private val permits: Int) : SuspendReadWrite {
    private val semaphore = KotlinxSemaphore(permits)
    private val writers = KotlinxMutex()

    override suspend fun lockRead() = semaphore.acquire()
    override fun unlockRead() = semaphore.release()

    override suspend fun lockWrite() {
        writers.lock(null)
        var taken = 0
        try {
            while (taken < permits) { semaphore.acquire(); taken++ }
        } catch (e: Throwable) { // cancelled part-way: give back what was taken, and let the next writer in
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

public object ReadWriteWorkloads {
    /**
     * The sections of [kinds] over [coroutines] coroutines on [dispatcher], each with work of mean [workOutside]
     * before taking its hold and [workInside] while holding it. Returns the work's digest.
     */
    @JvmStatic public fun readWrite(
        lock: SuspendReadWrite, dispatcher: CoroutineDispatcher, coroutines: Int, kinds: SectionKinds, workInside: Int, workOutside: Int,
    ): Long = runBlocking {
        require(coroutines >= 1) { "coroutines must be >= 1, was $coroutines" }
        val check = ExclusionCheck()
        val reads = IntArray(coroutines)
        val writes = IntArray(coroutines)
        val digest = LongArray(coroutines)
        List(coroutines) { i ->
            launch(dispatcher) {
                digest[i] = callerSections(i, coroutines, kinds, workOutside) { isWrite, x ->
                    if (isWrite) {
                        lock.lockWrite()
                        try { check.write(x, workInside) } finally { lock.unlockWrite(); writes[i]++ }
                    } else {
                        lock.lockRead()
                        try { check.read(x, workInside) } finally { lock.unlockRead(); reads[i]++ }
                    }
                }
            }
        }.joinAll()
        checkCounts(kinds, reads.sum(), writes.sum())
        digest.sum()
    }

    /** [readWrite] on blocking threads: [threads] tasks on [pool] (which must run them all at once) on [lock]'s two locks. */
    @JvmStatic public fun readWriteBlocking(
        lock: java.util.concurrent.locks.ReadWriteLock, pool: ExecutorService, threads: Int, kinds: SectionKinds, workInside: Int, workOutside: Int,
    ): Long {
        require(threads >= 1) { "threads must be >= 1, was $threads" }
        val check = ExclusionCheck()
        val readLock = lock.readLock()
        val writeLock = lock.writeLock()
        val futures = List(threads) { i ->
            pool.submit<LongArray> {
                var reads = 0L
                var writes = 0L
                val x = callerSections(i, threads, kinds, workOutside) { isWrite, x ->
                    if (isWrite) {
                        writeLock.lock()
                        try { check.write(x, workInside) } finally { writeLock.unlock(); writes++ }
                    } else {
                        readLock.lock()
                        try { check.read(x, workInside) } finally { readLock.unlock(); reads++ }
                    }
                }
                longArrayOf(x, reads, writes)
            }
        }
        val r = futures.map { f -> try { f.get() } catch (e: ExecutionException) { throw e.cause ?: e } }
        checkCounts(kinds, r.sumOf { it[1] }.toInt(), r.sumOf { it[2] }.toInt())
        return r.sumOf { it[0] }
    }

    /** Caller [i]'s sections i, i + [callers], ...: work of mean [workOutside], then [section] (is it a write, the state). */
    private inline fun callerSections(i: Int, callers: Int, kinds: SectionKinds, workOutside: Int, section: (Boolean, Long) -> Long): Long {
        var x = Workloads.seed(i)
        for (j in i until kinds.sections step callers) x = section(kinds.isWrite(j), Workloads.geometricWork(x, workOutside))
        return x
    }

    private fun checkCounts(kinds: SectionKinds, reads: Int, writes: Int) = check(reads == kinds.reads && writes == kinds.writes) {
        "ran $reads read and $writes write sections, expected ${kinds.reads} and ${kinds.writes}"
    }
}
