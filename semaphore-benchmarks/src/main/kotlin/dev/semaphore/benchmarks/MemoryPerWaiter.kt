/*
 * Memory per waiter: a plain program (not JMH). For each case it queues N suspended waiters on a
 * primitive with no free permit and measures the heap they retain after repeated full GCs.
 *
 * Invariants of the measurement:
 * - The Job array that keeps the waiters reachable is allocated BEFORE the "before" reading, so it is
 *   not counted; the reading after fill() counts the coroutines, their continuations and the primitive's
 *   per-waiter nodes.
 * - "none" queues bare suspended coroutines (suspendCancellableCoroutine with no primitive): the cost of
 *   the coroutine itself; for the Java futures, bare incomplete CompletableFutures. "net" = bytes per
 *   waiter minus the baseline listed before it = what the primitive adds.
 * - "floor" (group "floor") is the public-API floor of a queued waiter (PublicApiFloor.kt, QueueFloor): a
 *   suspendCancellableCoroutine with an invokeOnCancellation handler (one handler shared by all waiters), the
 *   continuation held in an array the first waiter allocates. What a primitive built on kotlinx's public API
 *   cannot avoid per waiter; the report divides it by ours and kotlinx.
 * - Readings are the least used heap over 8 successive System.gc() calls (see usedHeapAfterGc), on a JVM
 *   started with a fixed heap; each case is measured 3 times with fresh waiters and the median is kept.
 *   A run is only meaningful with a large N (default 1,000,000).
 */
package dev.semaphore.benchmarks

import com.ibm.asyncutil.locks.FairAsyncSemaphore
import dev.semaphore.async.AsyncSemaphore
import java.io.File
import java.util.concurrent.CompletableFuture
import java.lang.management.ManagementFactory

/** One measured case. */
public data class MemoryCase(
    val name: String,
    val group: String,
    val impl: String,
    val waiters: Int,
    val bytesPerWaiter: Double,
    val netOfBaseline: Double?,
)

/** Measures retained heap per queued waiter (see the file comment). */
public object MemoryPerWaiter {
    /**
     * A case: a display name, the group whose members are compared ("semaphore", "lock", "future", "floor"), the
     * implementation ("ours", "kotlinx", "ibm", "floor", or "none" for the baseline of the coroutine groups) and
     * how to create the waiters, given N.
     */
    public class Case(
        public val name: String,
        public val group: String,
        public val impl: String,
        public val make: (Int) -> Waiters,
    ) {
        /** True for the bare-coroutine baseline. */
        public val isBaseline: Boolean get() = impl == "none"
    }

    /** Queued waiters: [fill] creates them, [release] drops them (cancels) so the next case starts clean. */
    public interface Waiters {
        /** Creates and queues every waiter. */
        public fun fill()

        /** Cancels them all. */
        public fun release()
    }

    /**
     * The coroutine cases: bare coroutine (baseline), ours vs kotlinx Semaphore, ours Lock vs kotlinx Mutex, and the
     * public-API floor (last, so the other cases keep their places in old and new reports).
     */
    @JvmStatic
    public fun coroutineCases(): List<Case> = listOf(
        Case("bare suspended coroutine (baseline, no primitive)", "coroutine", "none") { n ->
            coroutineWaiters(Primitives.semaphore("none", 0), n)
        },
        Case("ours Semaphore.acquire (coroutine)", "semaphore", "ours") { n -> coroutineWaiters(Primitives.semaphore("ours", 0), n) },
        Case("kotlinx Semaphore.acquire (coroutine)", "semaphore", "kotlinx") { n ->
            coroutineWaiters(Primitives.semaphore("kotlinx", 0), n)
        },
        Case("ours Lock.lock (coroutine)", "lock", "ours") { n -> coroutineWaiters(Primitives.lock("ours", true), n) },
        Case("kotlinx Mutex.lock (coroutine)", "lock", "kotlinx") { n -> coroutineWaiters(Primitives.lock("kotlinx", true), n) },
        Case("public-API floor: suspendCancellableCoroutine + invokeOnCancellation, continuation in an array", "floor", "floor") { n ->
            coroutineWaiters(QueueFloor(held = true, capacityHint = n), n)
        },
    )

    /**
     * The Java-future cases: a bare incomplete CompletableFuture (baseline), our AsyncSemaphore.acquire() and IBM
     * async-util's FairAsyncSemaphore.acquire(), each pending on a semaphore whose only permit is held.
     */
    @JvmStatic
    public fun futureCases(): List<Case> = listOf(
        Case("bare incomplete CompletableFuture (baseline)", "future-baseline", "none") { n ->
            futureWaiters(n) { CompletableFuture<Unit>() }
        },
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
        return object : Waiters {
            override fun fill() {
                for (i in 0 until n) futures[i] = make()
                for (f in futures) check(!f!!.isDone) { "a future completed although no permit was free" }
            }

            override fun release() {
                for (f in futures) f?.cancel(false)
                futures.fill(null)
            }
        }
    }

    private fun coroutineWaiters(p: SuspendPermits, n: Int): Waiters {
        val set = WaiterSet(p, n)
        return object : Waiters {
            override fun fill() {
                set.fill()
            }

            override fun release() = set.cancelAll()
        }
    }

    /**
     * The used heap after [GC_ROUNDS] full GCs: the smallest reading. Some garbage survives the first few
     * System.gc() calls (observed on JDK 17 with both Serial and G1: a released batch of waiters stayed
     * counted for three collections), and live data never shrinks, so the minimum is the live set.
     */
    @JvmStatic
    public fun usedHeapAfterGc(): Long {
        val bean = ManagementFactory.getMemoryMXBean()
        var least = Long.MAX_VALUE
        repeat(GC_ROUNDS) {
            System.gc()
            Thread.sleep(20)
            least = minOf(least, bean.heapMemoryUsage.used)
        }
        return least
    }

    private const val GC_ROUNDS = 8

    /**
     * Runs [cases] with [n] waiters each, [repeats] times (fresh waiters each time), and keeps the median.
     * Net figures subtract the median of the baseline case listed before.
     */
    @JvmStatic
    public fun measure(cases: List<Case>, n: Int, repeats: Int): List<MemoryCase> {
        require(repeats >= 1) { "repeats must be >= 1, was $repeats" }
        var baseline: Double? = null
        val out = ArrayList<MemoryCase>()
        for (c in cases) {
            // Warm-up round (class loading, JIT, lazily created structures), not measured.
            c.make(10_000).also { it.fill(); it.release() }
            val readings = DoubleArray(repeats) {
                val waiters = c.make(n)
                val before = usedHeapAfterGc()
                waiters.fill()
                val after = usedHeapAfterGc()
                waiters.release()
                (after - before).toDouble() / n
            }
            readings.sort()
            val perWaiter = readings[repeats / 2]
            if (c.isBaseline) baseline = perWaiter
            val net = if (c.isBaseline) null else baseline?.let { perWaiter - it }
            out += MemoryCase(c.name, c.group, c.impl, n, perWaiter, net)
            println(
                String.format(
                    java.util.Locale.ROOT,
                    "%-50s %8.1f bytes/waiter%s   readings %s",
                    c.name,
                    perWaiter,
                    net?.let { String.format(java.util.Locale.ROOT, " (net of baseline %6.1f)", it) } ?: "                          ",
                    readings.joinToString(" ") { String.format(java.util.Locale.ROOT, "%.1f", it) },
                ),
            )
        }
        return out
    }

    /**
     * Writes [cases] in the shape of JMH's JSON (one entry per case: `MemoryPerWaiter.<kind>` with params impl, primitive
     * and waiters, score in B/waiter, the net of the baseline as a secondary result), for the report (Report.java).
     */
    @JvmStatic
    public fun writeJson(cases: List<MemoryCase>, file: File) {
        fun num(v: Double?) = v?.let { String.format(java.util.Locale.ROOT, "%.2f", it) } ?: "\"NaN\""
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

    /**
     * Usage: MemoryPerWaiter [waiters=1000000] [out=memory.json] [repeats=3]. Run on a fixed heap, e.g.
     * `java -Xms3g -Xmx3g -cp benchmarks.jar dev.semaphore.benchmarks.MemoryPerWaiter 1000000 memory.json 3`.
     */
    @JvmStatic
    public fun main(args: Array<String>) {
        val n = args.getOrNull(0)?.toIntOrNull() ?: 1_000_000
        require(n >= 1000) { "waiters must be >= 1000 for a meaningful reading, was $n" }
        val out = File(args.getOrNull(1) ?: "memory.json")
        val repeats = args.getOrNull(2)?.toIntOrNull() ?: 3
        val cases = coroutineCases() + futureCases()
        println("Retained heap per queued waiter, $n waiters, median of $repeats (JDK ${System.getProperty("java.version")}):")
        val results = measure(cases, n, repeats)
        writeJson(results, out)
        println("wrote ${out.path}")
    }
}
