/*
 * Memory per waiter, a plain program (not JMH): for each case, N waiters queued on a primitive with no free permit,
 * and the heap they retain, read after repeated full GCs on a JVM with a fixed heap. What each case creates before the
 * "before" reading (the array that keeps the waiters reachable) is not counted. "none" is the baseline (a bare
 * suspended coroutine, a bare incomplete CompletableFuture); a case's net is its figure minus the baseline before it.
 */
package dev.semaphore.benchmarks

import com.ibm.asyncutil.locks.FairAsyncSemaphore
import dev.semaphore.async.AsyncSemaphore
import java.io.File
import java.lang.management.ManagementFactory
import java.util.Locale
import java.util.concurrent.CompletableFuture

/** One measured case. */
public data class MemoryCase(
    val name: String, val group: String, val impl: String, val waiters: Int, val bytesPerWaiter: Double, val netOfBaseline: Double?,
)

public object MemoryPerWaiter {
    /**
     * A case: its name, the group whose members are compared, the impl ("none" for a baseline) and [make], which
     * creates N waiters' holder: [Waiters.fill] queues them, [Waiters.release] cancels them all.
     */
    public class Case(public val name: String, public val group: String, public val impl: String, public val make: (Int) -> Waiters)
    public class Waiters(public val fill: () -> Unit, public val release: () -> Unit)

    /** Bare coroutine (baseline), ours vs kotlinx Semaphore, ours Lock vs kotlinx Mutex. */
    @JvmStatic public fun coroutineCases(): List<Case> = listOf(
        Case("bare suspended coroutine (baseline, no primitive)", "coroutine", "none") { n -> coroutineWaiters(Primitives.semaphore("none", 0), n) },
        Case("ours Semaphore.acquire (coroutine)", "semaphore", "ours") { n -> coroutineWaiters(Primitives.semaphore("ours", 0), n) },
        Case("kotlinx Semaphore.acquire (coroutine)", "semaphore", "kotlinx") { n -> coroutineWaiters(Primitives.semaphore("kotlinx", 0), n) },
        Case("ours Lock.lock (coroutine)", "lock", "ours") { n -> coroutineWaiters(Primitives.lock("ours", true), n) },
        Case("kotlinx Mutex.lock (coroutine)", "lock", "kotlinx") { n -> coroutineWaiters(Primitives.lock("kotlinx", true), n) },
    )

    /** Bare incomplete CompletableFuture (baseline), our AsyncSemaphore vs IBM's FairAsyncSemaphore, one permit held. */
    @JvmStatic public fun futureCases(): List<Case> = listOf(
        Case("bare incomplete CompletableFuture (baseline)", "future-baseline", "none") { n -> futureWaiters(n) { CompletableFuture<Unit>() } },
        Case("ours AsyncSemaphore.acquire (pending future)", "future", "ours") { n ->
            val s = AsyncSemaphore.create(1).also { check(it.tryAcquire()) }
            futureWaiters(n) { s.acquire() }
        },
        Case("IBM FairAsyncSemaphore.acquire (pending future)", "future", "ibm") { n ->
            val s = FairAsyncSemaphore(1).also { check(it.tryAcquire()) }
            futureWaiters(n) { s.acquire().toCompletableFuture() }
        },
    )

    private fun futureWaiters(n: Int, make: () -> CompletableFuture<*>): Waiters {
        val futures = arrayOfNulls<CompletableFuture<*>>(n)
        return Waiters(fill = {
            for (i in 0 until n) futures[i] = make()
            for (f in futures) check(!f!!.isDone) { "a future completed although no permit was free" }
        }, release = { for (f in futures) f?.cancel(false); futures.fill(null) })
    }

    private fun coroutineWaiters(p: SuspendPermits, n: Int): Waiters = WaiterSet(p, n).let { set -> Waiters({ set.fill() }, set::cancelAll) }

    /** The used heap after 8 full GCs: the least reading (some garbage survives the first few; live data never shrinks). */
    @JvmStatic public fun usedHeapAfterGc(): Long {
        val bean = ManagementFactory.getMemoryMXBean()
        var least = Long.MAX_VALUE
        repeat(8) { System.gc(); Thread.sleep(20); least = minOf(least, bean.heapMemoryUsage.used) }
        return least
    }

    /** Runs [cases] with [n] waiters each, [repeats] times (fresh waiters each time), keeping the median. */
    @JvmStatic public fun measure(cases: List<Case>, n: Int, repeats: Int): List<MemoryCase> {
        require(repeats >= 1) { "repeats must be >= 1, was $repeats" }
        var baseline: Double? = null
        return cases.map { c ->
            c.make(10_000).also { it.fill(); it.release() } // warm-up (class loading, JIT), not measured
            val readings = DoubleArray(repeats) {
                val waiters = c.make(n)
                val before = usedHeapAfterGc()
                waiters.fill()
                val after = usedHeapAfterGc()
                waiters.release()
                (after - before).toDouble() / n
            }
            val perWaiter = readings.apply { sort() }[repeats / 2]
            if (c.impl == "none") baseline = perWaiter
            val net = if (c.impl == "none") null else baseline?.let { perWaiter - it }
            val netText = net?.let { String.format(Locale.ROOT, " (net of baseline %6.1f)", it) } ?: " ".repeat(26)
            println(String.format(Locale.ROOT, "%-50s %8.1f bytes/waiter%s   readings %s", c.name, perWaiter, netText,
                readings.joinToString(" ") { String.format(Locale.ROOT, "%.1f", it) }))
            MemoryCase(c.name, c.group, c.impl, n, perWaiter, net)
        }
    }

    /**
     * Writes [cases] in the shape of JMH's JSON (one entry per case: `MemoryPerWaiter.<kind>` with params impl, primitive
     * and waiters, score in B/waiter, the net of the baseline as a secondary result), for the report (Report.java).
     */
    @JvmStatic public fun writeJson(cases: List<MemoryCase>, file: File) {
        fun num(v: Double?) = v?.let { String.format(Locale.ROOT, "%.2f", it) } ?: "\"NaN\""
        val body = cases.joinToString(",\n") { c ->
            val kind = if (c.group.startsWith("future")) "futureWaiter" else "coroutineWaiter"
            val primitive = if (c.group in setOf("semaphore", "lock")) ", \"primitive\": \"${c.group}\"" else ""
            "  {\"benchmark\": \"dev.semaphore.benchmarks.MemoryPerWaiter.$kind\", \"mode\": \"ss\", " +
                "\"params\": {\"impl\": \"${c.impl}\"$primitive, \"waiters\": \"${c.waiters}\"}, " +
                "\"primaryMetric\": {\"score\": ${num(c.bytesPerWaiter)}, \"scoreError\": \"NaN\", \"scoreUnit\": \"B/waiter\"}, " +
                "\"secondaryMetrics\": {\"net\": {\"score\": ${num(c.netOfBaseline)}}}}"
        }
        file.absoluteFile.parentFile?.mkdirs()
        file.writeText("[\n$body\n]\n")
    }

    /** Usage: MemoryPerWaiter [waiters=1000000] [out=memory.json] [repeats=3], on a fixed heap (-Xms3g -Xmx3g). */
    @JvmStatic public fun main(args: Array<String>) {
        val n = args.getOrNull(0)?.toIntOrNull() ?: 1_000_000
        require(n >= 1000) { "waiters must be >= 1000 for a meaningful reading, was $n" }
        val out = File(args.getOrNull(1) ?: "memory.json")
        val repeats = args.getOrNull(2)?.toIntOrNull() ?: 3
        println("Retained heap per queued waiter, $n waiters, median of $repeats (JDK ${System.getProperty("java.version")}):")
        writeJson(measure(coroutineCases() + futureCases(), n, repeats), out)
        println("wrote ${out.path}")
    }
}
