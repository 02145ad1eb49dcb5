package dev.semaphore.benchmarks.distributed

import dev.semaphore.redis.LocalRedisServer
import java.net.InetAddress
import java.net.Socket
import java.util.Collections
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong
import kotlin.concurrent.thread
import kotlin.system.exitProcess

/**
 * What JMH does not measure, for the distributed section, on a fresh redis-server per implementation: the commands per
 * acquisition as sent (MONITOR) and as run (INFO commandstats), the server's µs in scripts, and fairness. The method:
 * docs/benchmarking.md#redis.
 *
 *   java -cp semaphore-benchmarks/target/benchmarks.jar dev.semaphore.benchmarks.distributed.RedisPeersReport
 */
object RedisPeersReport {
    private val impls = listOf("ours", "oursLock", "redissonSemaphore", "redissonPermitExpirable", "redissonFairLock")

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

    /** Per acquisition: commands sent (MONITOR), commands the server ran, and its µs in scripts (INFO commandstats). */
    private class Cost(val sent: Double, val executed: Double, val scriptMicros: Double)

    /** Runs [work] (1,000 acquisitions) twice: with MONITOR to count what is sent, then without it (it slows the server). */
    private fun count(server: LocalRedisServer, details: StringBuilder, label: String, work: () -> Unit): Cost {
        val counter = CommandCounter(server.port)
        Thread.sleep(200)
        counter.use { work() }
        server.command("CONFIG", "RESETSTAT")
        work()
        val stats = commandStats(server)
        details.append("$label: sent ${counter.byCommand.entries.sortedBy { it.key }.joinToString(" ") { "${it.key}=${it.value}" }}; ")
        details.append("executed ${stats.entries.joinToString(" ") { "${it.key}=${it.value.first}" }}\n")
        val executed = stats.values.sumOf { it.first }
        val scriptMicros = stats.filterKeys { it == "evalsha" || it == "eval" }.values.sumOf { it.second }
        return Cost(counter.byCommand.values.sumOf { it.get() } / 1000.0, executed / 1000.0, scriptMicros / 1000.0)
    }

    /** INFO commandstats: command -> (calls, usec), without the commands this report sends itself. */
    private fun commandStats(server: LocalRedisServer): Map<String, Pair<Long, Long>> =
        server.reply("INFO", "commandstats").single().lines().filter { it.startsWith("cmdstat_") }.associate { line ->
            val name = line.substringAfter("cmdstat_").substringBefore(':')
            name to (line.substringAfter("calls=").substringBefore(',').toLong() to line.substringAfter("usec=").substringBefore(',').toLong())
        }.filterKeys { !it.startsWith("config") && !it.startsWith("info") && it != "monitor" }.toSortedMap()

    @JvmStatic fun main(args: Array<String>) {
        println(
            "| implementation | commands sent per acquisition, uncontended | commands the server ran per acquisition, uncontended " +
                "| server µs in scripts per acquisition, uncontended | commands sent per acquisition, 20 workers on 1 permit " +
                "| commands the server ran, 20 workers | served in request order (20 queued) |\n|---|---|---|---|---|---|---|",
        )
        val details = StringBuilder()
        for (impl in impls) {
            LocalRedisServer.start().use { server ->
                peer(server.uri, impl, "report-$impl", 1).use { p ->
                    p.acquireRelease() // connects, subscribes, loads scripts
                    val uncontended = count(server, details, "$impl, 1,000 uncontended cycles") { repeat(1000) { p.acquireRelease() } }
                    val contended = count(server, details, "$impl, 20 workers x 50 cycles on 1 permit") { p.contended(20, 50) }
                    val order = fairness(server.uri, impl)
                    println("| $impl | %.2f | %.2f | %.1f | %.2f | %.2f | %s |".format(uncontended.sent, uncontended.executed,
                        uncontended.scriptMicros, contended.sent, contended.executed, if (order == (0 until 20).toList()) "yes" else "no: $order"))
                }
            }
        }
        println()
        print(details)
        exitProcess(0)
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
}
