package dev.semaphore.benchmarks.distributed

import dev.semaphore.redis.LocalRedisServer
import org.apache.commons.math3.distribution.TDistribution
import java.io.File
import java.net.InetAddress
import java.net.ServerSocket
import java.net.Socket
import java.nio.file.Files
import java.util.Collections
import java.util.Locale
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong
import kotlin.concurrent.thread
import kotlin.math.sqrt
import kotlin.system.exitProcess

/**
 * What JMH does not measure, for the distributed section: the commands per acquisition as sent (MONITOR) and as run
 * (INFO commandstats), the server's work in scripts per uncontended acquisition, and fairness. The method:
 * docs/benchmarking.md#redis.
 *
 * The server's work is measured with every implementation connected to one server, in interleaved rounds: each round
 * runs a batch of acquisitions of every implementation, in an order that turns and reverses from round to round
 * ([Rounds.order]), and reads `INFO commandstats` before and after each batch. A ratio ours / peer is taken per round,
 * of two batches run close together on the same server, so that what drifts during the run (the server's and this
 * JVM's warm-up, the other work of a shared machine) falls on both; the table gives the median of the rounds' ratios,
 * their interquartile range and their mean with its 95% interval. With valgrind on the PATH, the same interleaved
 * batches run once more against a redis-server under callgrind that counts only inside `evalGenericCommand` (EVAL and
 * EVALSHA): instructions per acquisition, a count that the machine's load does not change.
 *
 *   java -cp semaphore-benchmarks/target/benchmarks.jar dev.semaphore.benchmarks.distributed.RedisPeersReport \
 *       [--rounds 40] [--batch 200] [--callgrind auto|on|off] [--callgrind-rounds 4] [--callgrind-batch 300]
 *
 * The report (Markdown) goes to standard output, progress to standard error.
 */
object RedisPeersReport {
    private val impls = listOf("ours", "oursLock", "redissonSemaphore", "redissonPermitExpirable", "redissonFairLock")

    /** The ratios reported: ours / peer. */
    private val pairs = listOf(
        "ours" to "redissonPermitExpirable",
        "ours" to "redissonSemaphore",
        "oursLock" to "redissonFairLock",
    )

    /** Counts the commands clients send (MONITOR; a script's inner commands, tagged "lua", are not counted). */
    private class CommandCounter(port: Int) : AutoCloseable {
        private val socket = Socket(InetAddress.getLoopbackAddress(), port).apply { getOutputStream().write("MONITOR\r\n".toByteArray()) }
        val byCommand = ConcurrentHashMap<String, AtomicLong>()
        private val reader = thread(isDaemon = true) {
            runCatching {
                socket.getInputStream().bufferedReader().lineSequence()
                    .filter { it.startsWith("+") && !it.contains(" lua]") && it != "+OK" }
                    .map { it.substringAfter("] \"").substringBefore('"').lowercase() }
                    .filter { it != "monitor" && it != "info" && it != "config" }
                    .forEach { byCommand.computeIfAbsent(it) { AtomicLong() }.incrementAndGet() }
            }
        }

        override fun close() { Thread.sleep(300); socket.close(); reader.join(5_000) } // the sleep lets the last lines arrive
    }

    /** Per acquisition: commands sent (MONITOR) and commands the server ran (INFO commandstats). */
    private class Counts(val sent: Double, val executed: Double)

    /** Runs [work] (1,000 acquisitions) twice: with MONITOR to count what is sent, then without it (it slows the server). */
    private fun count(server: LocalRedisServer, details: StringBuilder, label: String, work: () -> Unit): Counts {
        val counter = CommandCounter(server.port)
        Thread.sleep(200)
        counter.use { work() }
        val before = commandStats(server)
        work()
        val stats = delta(before, commandStats(server))
        details.append("$label: sent ${counter.byCommand.entries.sortedBy { it.key }.joinToString(" ") { "${it.key}=${it.value}" }}; ")
        details.append("executed ${stats.entries.joinToString(" ") { "${it.key}=${it.value.first}" }}\n")
        return Counts(counter.byCommand.values.sumOf { it.get() } / 1000.0, stats.values.sumOf { it.first } / 1000.0)
    }

    /** INFO commandstats: command -> (calls, usec), without the commands this report sends itself. */
    private fun commandStats(server: LocalRedisServer): Map<String, Pair<Long, Long>> =
        server.reply("INFO", "commandstats").single().lines().filter { it.startsWith("cmdstat_") }.associate { line ->
            val name = line.substringAfter("cmdstat_").substringBefore(':')
            name to (line.substringAfter("calls=").substringBefore(',').toLong() to line.substringAfter("usec=").substringBefore(',').toLong())
        }.filterKeys { !it.startsWith("config") && !it.startsWith("info") && it != "monitor" }.toSortedMap()

    /** What ran between two readings of [commandStats]: the commands whose calls grew, with their calls and µs. */
    private fun delta(before: Map<String, Pair<Long, Long>>, after: Map<String, Pair<Long, Long>>): Map<String, Pair<Long, Long>> =
        after.mapValues { (name, v) -> (v.first - (before[name]?.first ?: 0)) to (v.second - (before[name]?.second ?: 0)) }
            .filterValues { it.first > 0 }.toSortedMap()

    /** The settings of a run, from `--name value` arguments. */
    class Settings(args: Array<String>) {
        private val given = args.toList().chunked(2).associate { (k, v) ->
            require(k.startsWith("--")) { "expected --name value, was $k" }
            k.removePrefix("--") to v
        }
        init {
            val known = setOf("rounds", "batch", "callgrind", "callgrind-rounds", "callgrind-batch")
            require(known.containsAll(given.keys)) { "unknown settings ${given.keys - known}; known: $known" }
        }
        val rounds = given["rounds"]?.toInt() ?: 40
        val batch = given["batch"]?.toInt() ?: 200
        val callgrind = given["callgrind"] ?: "auto"
        val callgrindRounds = given["callgrind-rounds"]?.toInt() ?: 4
        val callgrindBatch = given["callgrind-batch"]?.toInt() ?: 300
    }

    @JvmStatic fun main(args: Array<String>) {
        val settings = Settings(args)
        val details = StringBuilder()
        val rows = mutableMapOf<String, List<String>>()
        for (impl in impls) {
            progress("counting $impl")
            LocalRedisServer.start().use { server ->
                peer(server.uri, impl, "report-$impl", 1).use { p ->
                    p.acquireRelease() // connects, subscribes, loads scripts
                    val uncontended = count(server, details, "$impl, 1,000 uncontended cycles") { repeat(1000) { p.acquireRelease() } }
                    val contended = count(server, details, "$impl, 20 workers x 50 cycles on 1 permit") { p.contended(20, 50) }
                    val order = fairness(server.uri, impl)
                    rows[impl] = listOf(
                        "%.2f".format(Locale.ROOT, uncontended.sent), "%.2f".format(Locale.ROOT, uncontended.executed),
                        "%.2f".format(Locale.ROOT, contended.sent), "%.2f".format(Locale.ROOT, contended.executed),
                        if (order == (0 until 20).toList()) "yes" else "no: $order",
                    )
                }
            }
        }
        progress("script time: ${settings.rounds} interleaved rounds of ${settings.batch} acquisitions")
        val calls = mutableMapOf<String, MutableList<Double>>()
        val micros = LocalRedisServer.start().use { server ->
            interleaved(server.uri, settings.rounds, settings.batch, WARMUP_ROUNDS, "cost") { impl, run ->
                val before = commandStats(server)
                run()
                val scripts = delta(before, commandStats(server)).filterKeys { it == "eval" || it == "evalsha" }.values
                calls.getOrPut(impl) { mutableListOf() } += scripts.sumOf { it.first } / settings.batch.toDouble()
                scripts.sumOf { it.second } / settings.batch.toDouble()
            }
        }
        val instructions = callgrind(settings)

        println(
            "| implementation | commands sent per acquisition, uncontended | commands the server ran per acquisition, uncontended " +
                "| server µs in scripts per acquisition, uncontended: median (IQR) " +
                "| instructions in scripts per acquisition, uncontended: median (range) " +
                "| commands sent per acquisition, 20 workers on 1 permit | commands the server ran, 20 workers " +
                "| served in request order (20 queued) |\n|---|---|---|---|---|---|---|---|",
        )
        for (impl in impls) {
            val r = rows.getValue(impl)
            val ins = instructions?.get(impl)?.let { withRange(it, "%,.0f") } ?: "not measured"
            println("| $impl | ${r[0]} | ${r[1]} | ${withIqr(micros.getValue(impl), "%.1f")} | $ins | ${r[2]} | ${r[3]} | ${r[4]} |")
        }
        println()
        println(
            "Ours / peer, server work in scripts per uncontended acquisition, paired by round (${settings.rounds} rounds of " +
                "${settings.batch} acquisitions; each round runs every implementation once, in a turning order, on one server):\n",
        )
        println(
            "| pair | µs in scripts, per-round ratio: median (IQR) | mean ± 95% " +
                "| instructions in scripts, per-round ratio: median (range) |\n|---|---|---|---|",
        )
        for ((a, b) in pairs) {
            val ratios = Rounds.ratios(micros.getValue(a), micros.getValue(b))
            val ins = instructions?.let { withRange(Rounds.ratios(it.getValue(a), it.getValue(b)), "%.3f") } ?: "not measured"
            val mean = "%.3f ± %.3f".format(Locale.ROOT, ratios.average(), Rounds.halfWidth95(ratios))
            println("| $a / $b | ${withIqr(ratios, "%.3f")} | $mean | $ins |")
        }
        println()
        val measured = instructions?.let {
            "instructions: callgrind (valgrind) counting inside `evalGenericCommand` only, on a server of their own, " +
                "${settings.callgrindRounds} interleaved rounds of ${settings.callgrindBatch} after $CALLGRIND_WARMUP_ROUNDS of warm-up"
        } ?: "instructions: not measured (${callgrindSkipped ?: "off"})"
        println(
            "Script time: `INFO commandstats` (EVAL and EVALSHA usec) before and after each batch, after $WARMUP_ROUNDS " +
                "interleaved rounds of warm-up; $measured; counts and fairness: a fresh server per implementation.",
        )
        println()
        details.append("script calls per acquisition in the interleaved rounds: ")
            .append(impls.joinToString(" ") { "$it=%.2f".format(Locale.ROOT, calls.getValue(it).average()) }).append('\n')
        print(details)
        exitProcess(0)
    }

    private const val WARMUP_ROUNDS = 5
    private const val CALLGRIND_WARMUP_ROUNDS = 2
    private var callgrindSkipped: String? = null

    /**
     * Connects every implementation to [uri], warms them up in [warmup] interleaved rounds, then runs [rounds] rounds of
     * [batch] acquisitions of each, in the order of [order]. [measure] is given the implementation and its batch to run,
     * and returns what the batch cost per acquisition. Returns, per implementation, one figure per round.
     */
    private fun interleaved(
        uri: String,
        rounds: Int,
        batch: Int,
        warmup: Int,
        prefix: String,
        measure: (String, () -> Unit) -> Double,
    ): Map<String, List<Double>> {
        val peers = impls.associateWith { peer(uri, it, "$prefix-$it", 1) }
        try {
            for (round in 0 until warmup) for (impl in order(round)) repeat(batch) { peers.getValue(impl).acquireRelease() }
            val out = impls.associateWith { mutableListOf<Double>() }
            for (round in 0 until rounds) {
                for (impl in order(round)) {
                    val p = peers.getValue(impl)
                    out.getValue(impl) += measure(impl) { repeat(batch) { p.acquireRelease() } }
                }
            }
            return out
        } finally {
            peers.values.forEach { it.close() }
        }
    }

    /** The implementations in the order of [round] ([Rounds.order]). */
    private fun order(round: Int): List<String> = Rounds.order(round, impls.size).map { impls[it] }

    /**
     * Instructions per acquisition inside EVAL/EVALSHA, per implementation and round, from a redis-server under
     * callgrind; null if not measured ([callgrindSkipped] says why).
     */
    private fun callgrind(settings: Settings): Map<String, List<Double>>? {
        if (settings.callgrind == "off") return null.also { callgrindSkipped = "--callgrind off" }
        val missing = listOf("valgrind", "callgrind_control").filter { tool ->
            System.getenv("PATH").orEmpty().split(File.pathSeparator).none { File(it, tool).canExecute() }
        }
        if (missing.isNotEmpty()) {
            check(settings.callgrind != "on") { "--callgrind on, but ${missing.joinToString()} is not on the PATH" }
            return null.also { callgrindSkipped = "${missing.joinToString(" and ")} not on the PATH" }
        }
        progress("instructions: ${settings.callgrindRounds} interleaved rounds of ${settings.callgrindBatch} under callgrind")
        val counted = CallgrindServer().use { server ->
            interleaved(server.uri, settings.callgrindRounds, settings.callgrindBatch, CALLGRIND_WARMUP_ROUNDS, "instructions") { _, run ->
                server.zero() // zeroed before a batch, dumped after it: the dump holds the batch's instructions in scripts
                run()
                server.dump() / settings.callgrindBatch.toDouble()
            }
        }
        if (counted.values.flatten().any { it <= 0.0 }) { // the binary has no symbol evalGenericCommand: nothing was counted
            check(settings.callgrind != "on") { "callgrind counted nothing inside evalGenericCommand: $counted" }
            return null.also { callgrindSkipped = "callgrind counted nothing inside evalGenericCommand" }
        }
        return counted
    }

    /**
     * A redis-server (the one LocalRedisServer runs) under `valgrind --tool=callgrind`, collecting only inside
     * `evalGenericCommand`, on a free loopback port (never 6379); [zero] and [dump] through `callgrind_control`.
     */
    private class CallgrindServer : AutoCloseable {
        private val dir: File = Files.createTempDirectory("redis-callgrind").toFile()
        private val port: Int =
            generateSequence { ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { it.localPort } }.first { it != 6379 }
        val uri = "redis://127.0.0.1:$port"
        private val process: Process = ProcessBuilder(
            "valgrind", "--tool=callgrind", "--toggle-collect=evalGenericCommand", "--callgrind-out-file=${dir.path}/cg.out",
            LocalRedisServer.binary.path, "--port", "$port", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", dir.path,
        ).redirectErrorStream(true).redirectOutput(File(dir, "valgrind.log")).start()
        private var dumps = 0

        init {
            val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
            while (runCatching { ping() }.getOrNull() != "+PONG") {
                if (!process.isAlive || System.nanoTime() > deadline) {
                    close()
                    error("redis-server under callgrind did not start: ${File(dir, "valgrind.log").readText()}")
                }
                Thread.sleep(200)
            }
        }

        private fun ping(): String = Socket(InetAddress.getLoopbackAddress(), port).use { s ->
            s.getOutputStream().write("PING\r\n".toByteArray())
            s.getInputStream().bufferedReader().readLine()
        }

        private fun control(option: String) {
            val p = ProcessBuilder("callgrind_control", option, "${process.pid()}").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start()
            check(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0) { "callgrind_control $option failed" }
        }

        fun zero() = control("-z")

        /** Writes a dump and returns the instructions it counted since the last [zero]. */
        fun dump(): Long {
            control("-d")
            dumps++
            val file = File(dir, "cg.out.$dumps")
            val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
            while (true) {
                val totals = runCatching { file.readLines().lastOrNull { it.startsWith("totals:") } }.getOrNull()
                if (totals != null) return totals.substringAfter(':').trim().split(' ')[0].toLong()
                check(System.nanoTime() < deadline) { "no callgrind dump $file" }
                Thread.sleep(50)
            }
        }

        override fun close() {
            process.destroy()
            if (!process.waitFor(30, TimeUnit.SECONDS)) process.destroyForcibly().waitFor()
            dir.deleteRecursively()
        }
    }

    /** The order in which 20 workers, queued one after another (100 ms apart) behind a holder, were served. */
    private fun fairness(uri: String, impl: String): List<Int> {
        val holder = peer(uri, impl, "fair-$impl", 1)
        val served = Collections.synchronizedList(mutableListOf<Int>())
        val release = CountDownLatch(1)
        val held = CountDownLatch(1)
        val holderThread = thread { holder.acquireRelease { held.countDown(); release.await() } }
        held.await()
        val workers = (0 until 20).map { i ->
            val p = peer(uri, impl, "fair-$impl", 1)
            thread { p.acquireRelease { served += i } }.also { Thread.sleep(100) } to p
        }
        release.countDown()
        holderThread.join()
        for ((t, p) in workers) { t.join(TimeUnit.MINUTES.toMillis(2)); p.close() }
        holder.close()
        return served.toList()
    }

    private fun progress(what: String) = System.err.println("RedisPeersReport: $what")

    /** "median (first quartile-third quartile)" of [v], each in [format]. */
    private fun withIqr(v: List<Double>, format: String) =
        "$format ($format-$format)".format(Locale.ROOT, Rounds.median(v), Rounds.quantile(v, 0.25), Rounds.quantile(v, 0.75))

    /** "median (min-max)" of [v], each in [format]. */
    private fun withRange(v: List<Double>, format: String) =
        "$format ($format-$format)".format(Locale.ROOT, Rounds.median(v), v.min(), v.max())
}

/** The statistics of interleaved rounds (RedisPeersReport): the order of a round, and the spread of per-round figures. */
object Rounds {
    /**
     * The order in which [n] implementations run in [round]: turned by one every second round and reversed every other
     * one, so that over rounds each runs at each position, and before and after each other, equally often.
     */
    @JvmStatic fun order(round: Int, n: Int): List<Int> =
        (0 until n).map { j -> if (round % 2 == 0) (j + round / 2) % n else (n - 1 - j + round / 2) % n }

    /** The [q]-quantile of [v], interpolated between the closest ranks. */
    @JvmStatic fun quantile(v: List<Double>, q: Double): Double {
        require(v.isNotEmpty() && q in 0.0..1.0) { "a quantile in [0, 1] of at least one value" }
        val s = v.sorted()
        val pos = q * (s.size - 1)
        val lo = pos.toInt()
        return if (lo + 1 < s.size) s[lo] + (pos - lo) * (s[lo + 1] - s[lo]) else s[lo]
    }

    @JvmStatic fun median(v: List<Double>): Double = quantile(v, 0.5)

    /** The Student-t half-width at 95% of the mean of [v]; NaN below two values. */
    @JvmStatic fun halfWidth95(v: List<Double>): Double {
        if (v.size < 2) return Double.NaN
        val m = v.average()
        val sd = sqrt(v.sumOf { (it - m) * (it - m) } / (v.size - 1))
        return TDistribution((v.size - 1).toDouble()).inverseCumulativeProbability(0.975) * sd / sqrt(v.size.toDouble())
    }

    /** A / B per round, of two implementations measured in the same rounds. */
    @JvmStatic fun ratios(a: List<Double>, b: List<Double>): List<Double> {
        require(a.size == b.size) { "paired rounds: ${a.size} and ${b.size}" }
        return a.zip(b) { x, y -> x / y }
    }
}
