package dev.semaphore.benchmarks.distributed

import dev.semaphore.redis.LocalRedisServer
import java.net.InetAddress
import java.net.Socket
import java.util.Collections
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong
import kotlin.system.exitProcess

/**
 * What JMH does not measure, for the distributed section, on a fresh redis-server per implementation: the commands
 * per acquisition as clients sent them (MONITOR) and as the server ran them (INFO commandstats, scripts' inner
 * commands included), with the server's µs in scripts, for 1,000 uncontended cycles and for 20 workers x 50 cycles on
 * 1 permit; and fairness: 20 workers queued one after another behind a holder, served in the order they asked?
 *
 *   java -cp semaphore-benchmarks/target/benchmarks.jar dev.semaphore.benchmarks.distributed.RedisPeersReport
 */
object RedisPeersReport {
    private val impls = listOf("ours", "oursLock", "redissonSemaphore", "redissonPermitExpirable", "redissonFairLock")

    /** Counts the commands clients send (MONITOR; a script's inner commands, tagged "lua", are not counted). */
    private class CommandCounter(port: Int) : AutoCloseable {
        private val socket = Socket(InetAddress.getLoopbackAddress(), port)
        val byCommand = ConcurrentHashMap<String, AtomicLong>()
        private val reader = Thread {
            val input = socket.getInputStream().bufferedReader()
            runCatching {
                while (true) {
                    val line = input.readLine() ?: break
                    if (!line.startsWith("+") || line.contains(" lua]") || line == "+OK") continue
                    val command = line.substringAfter("] \"").substringBefore('"').lowercase()
                    if (command == "monitor" || command == "info" || command == "config") continue
                    byCommand.computeIfAbsent(command) { AtomicLong() }.incrementAndGet()
                }
            }
        }

        init {
            socket.getOutputStream().apply { write("MONITOR\r\n".toByteArray()); flush() }
            reader.isDaemon = true
            reader.start()
        }

        fun total(): Long = byCommand.values.sumOf { it.get() }

        override fun close() {
            Thread.sleep(300) // let the last lines arrive
            socket.close()
            reader.join(5_000)
        }
    }

    /** Per acquisition: commands sent (MONITOR), commands the server ran, and its µs in scripts (INFO commandstats). */
    private class Cost(val sent: Double, val executed: Double, val scriptMicros: Double)

    /** Runs [work] (1,000 acquisitions) twice: with MONITOR to count what is sent, then without it (it slows the server). */
    private fun count(server: LocalRedisServer, details: StringBuilder, label: String, work: () -> Unit): Cost {
        val counter = CommandCounter(server.port)
        Thread.sleep(200)
        work()
        counter.close()
        server.command("CONFIG", "RESETSTAT")
        work()
        val stats = commandStats(server)
        details.append("$label: sent ${counter.byCommand.entries.sortedBy { it.key }.joinToString(" ") { "${it.key}=${it.value}" }}; ")
        details.append("executed ${stats.entries.joinToString(" ") { "${it.key}=${it.value.first}" }}\n")
        val executed = stats.values.sumOf { it.first }
        val scriptMicros = stats.filterKeys { it == "evalsha" || it == "eval" }.values.sumOf { it.second }
        return Cost(counter.total() / 1000.0, executed / 1000.0, scriptMicros / 1000.0)
    }

    /** INFO commandstats: command -> (calls, usec), without the commands this report sends itself. */
    private fun commandStats(server: LocalRedisServer): Map<String, Pair<Long, Long>> =
        server.reply("INFO", "commandstats").single().lines().filter { it.startsWith("cmdstat_") }.associate { line ->
            val name = line.substringAfter("cmdstat_").substringBefore(':')
            name to (line.substringAfter("calls=").substringBefore(',').toLong() to line.substringAfter("usec=").substringBefore(',').toLong())
        }.filterKeys { !it.startsWith("config") && !it.startsWith("info") && it != "monitor" }.toSortedMap()

    @JvmStatic
    fun main(args: Array<String>) {
        println(
            "| implementation | commands sent per acquisition, uncontended | commands the server ran per acquisition, uncontended " +
                "| server µs in scripts per acquisition, uncontended | commands sent per acquisition, 20 workers on 1 permit " +
                "| commands the server ran, 20 workers | served in request order (20 queued) |",
        )
        println("|---|---|---|---|---|---|---|")
        val details = StringBuilder()
        for (impl in impls) {
            LocalRedisServer.start().use { server ->
                peer(server.uri, impl, "report-$impl", 1).use { p ->
                    p.acquireRelease() // connects, subscribes, loads scripts
                    val uncontended = count(server, details, "$impl, 1,000 uncontended cycles") { repeat(1000) { p.acquireRelease() } }
                    val contended = count(server, details, "$impl, 20 workers x 50 cycles on 1 permit") { p.contended(20, 50) }
                    val order = fairness(server.uri, impl)
                    println(
                        "| $impl | %.2f | %.2f | %.1f | %.2f | %.2f | %s |".format(
                            uncontended.sent, uncontended.executed, uncontended.scriptMicros,
                            contended.sent, contended.executed, if (order == (0 until 20).toList()) "yes" else "no: $order",
                        ),
                    )
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
        val holderThread = Thread {
            holder.acquireRelease {
                held.countDown()
                release.await()
            }
        }.apply { start() }
        held.await()
        val workers = (0 until 20).map { i ->
            val p = peer(uri, impl, "fair-$impl", 1)
            Thread { p.acquireRelease { served += i } }.apply { start() }.also { Thread.sleep(100) } to p
        }
        release.countDown()
        holderThread.join()
        for ((t, p) in workers) {
            t.join(TimeUnit.MINUTES.toMillis(2))
            p.close()
        }
        holder.close()
        return served.toList()
    }
}
