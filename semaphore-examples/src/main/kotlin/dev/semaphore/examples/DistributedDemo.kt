package dev.semaphore.examples

import dev.semaphore.distributed.DistributedConfig
import dev.semaphore.distributed.DistributedSemaphoreClient
import dev.semaphore.distributed.withPermit
import dev.semaphore.postgres.LocalPostgresServer
import dev.semaphore.postgres.PostgresSemaphoreClient
import dev.semaphore.redis.LocalRedisServer
import dev.semaphore.redis.RedisSemaphoreClient
import dev.semaphore.testing.JvmProcess
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlin.system.exitProcess
import kotlin.time.Duration.Companion.milliseconds

/**
 * The distributed demo (README, "Run it"), on either engine: `-Ddemo.engine=redis` (the default) starts a local
 * redis-server, `-Ddemo.engine=postgres` a local PostgreSQL, as the tests start them; then 3 worker JVMs share a
 * DistributedSemaphore of 2 permits (lease 2 s, renewed while held); one worker is killed with kill -9 while it holds a
 * permit, and the output shows its lease expiring and the other two being served together again, with fencing tokens.
 * The workers' code is the same for both engines but for the line that makes the client ([DistributedDemoWorker]). It
 * checks what it shows, and exits non-zero if a check fails.
 */
object DistributedDemo {
    private const val LEASE_MS = 2000L

    @JvmStatic
    fun main(args: Array<String>) {
        when (val engine = System.getProperty("demo.engine") ?: "redis") {
            "redis" -> LocalRedisServer.start().use { server ->
                println("redis-server ${LocalRedisServer.binary} on ${server.uri}")
                demo(engine, server.uri)
            }
            "postgres" -> LocalPostgresServer.start().use { server ->
                println("PostgreSQL (${LocalPostgresServer.bin}) on ${server.url}")
                demo(engine, server.url)
            }
            else -> {
                System.err.println("-Ddemo.engine must be redis or postgres, was $engine")
                exitProcess(2)
            }
        }
    }

    private fun demo(engine: String, url: String) {
        println("3 worker JVMs share a semaphore of 2 permits; each holds a permit for 800 ms at a time. A fencing token is")
        println("the number every grant carries, higher than every earlier one: a resource that remembers the highest it has")
        println("seen can refuse a holder whose lease ran out." + if (engine == "redis") {
            " On Redis the tokens start from the server's clock in microseconds (16 digits),\nso that they keep rising even if" +
                " the semaphore is deleted and created again; on PostgreSQL they come from a sequence."
        } else {
            " On PostgreSQL they come from a sequence, so they are small numbers."
        })
        println("Waiting for the 3 worker JVMs to start and connect (a few seconds); then each grant is printed with the time since the demo began:")
        val workers = (1..3).map { DemoProcess(engine, url, "demo-printer", "2", "$LEASE_MS") }
        try {
            run(workers)
        } finally {
            workers.forEach { it.close() }
        }
    }

    /** The next line of any worker, with the worker's number (1..3); null if none came within 100 ms. */
    private fun next(workers: List<DemoProcess>): Pair<Int, String>? {
        repeat(20) {
            for ((i, w) in workers.withIndex()) w.lines.poll()?.let { return i + 1 to it }
            Thread.sleep(5)
        }
        return null
    }

    /** Takes, for at most 300 ms, the RELEASES lines waiting at the head of the other workers' output. */
    private fun absorbReleases(workers: List<DemoProcess>, holding: MutableMap<Int, Long>, except: Int) {
        val deadline = System.nanoTime() + 300_000_000L
        while (System.nanoTime() < deadline) {
            for ((i, w) in workers.withIndex()) {
                if (i + 1 == except) continue
                if (w.lines.peek()?.startsWith("RELEASES") == true) {
                    w.lines.poll()
                    holding.remove(i + 1)
                    return
                }
            }
            Thread.sleep(5)
        }
    }

    private fun run(workers: List<DemoProcess>) {
        val start = System.nanoTime()
        fun ms() = (System.nanoTime() - start) / 1_000_000
        fun say(text: String) = println("%6d ms  %s".format(ms(), text))
        val holding = mutableMapOf<Int, Long>() // worker -> the token it holds now
        val heldSince = mutableMapOf<Int, Long>()
        var killed = 0
        var killedAt = 0L
        var highest = 0L
        val seen = mutableSetOf<Long>()
        val lastOf = mutableMapOf<Int, Long>() // worker -> its latest token
        var grants = 0
        while (ms() < 30_000) {
            val (worker, line) = next(workers) ?: continue
            val token = line.substringAfter(' ').toLongOrNull() ?: continue
            if (line.startsWith("RELEASES")) {
                holding.remove(worker)
                continue
            }
            if (!line.startsWith("HOLDS")) continue
            val seenAt = ms()
            // Each worker prints on its own pipe, so two grants close together can be read in either order:
            // the checks are that a token is never handed out twice and that each worker's tokens go up.
            check(seen.add(token)) { "token $token was handed out twice" }
            check(token > (lastOf[worker] ?: 0L)) { "worker-$worker got token $token after its ${lastOf[worker]}" }
            lastOf[worker] = token
            highest = maxOf(highest, token)
            if (holding.size == 2) {
                // A release is printed before its permit is given back, so a release that made room for
                // this grant happened before it, but its line may not have been read yet (each worker's
                // output has its own reader): take it first.
                absorbReleases(workers, holding, except = worker)
            }
            if (killed > 0 && killed in holding && holding.size == 2) {
                // Two live workers about to hold while the dead one still held: its lease must have ended.
                val after = seenAt - killedAt
                val leaseEnded = heldSince.getValue(killed) + LEASE_MS
                check(seenAt >= leaseEnded - 100) { "worker-$killed's permit was reused before its lease could end" }
                check(after <= LEASE_MS + 3000) { "the dead worker's permit took $after ms to come back" }
                say("worker-$killed's lease (token ${holding[killed]}) expired; its permit came back $after ms after the kill")
                holding.remove(killed)
            }
            holding[worker] = token
            heldSince[worker] = seenAt
            grants++
            say("worker-$worker holds a permit, fencing token $token   (holders: ${holding.keys.sorted().joinToString { "worker-$it" }})")
            check(holding.size <= 2) { "more than 2 holders: $holding" }
            if (killed > 0 && killed !in holding && holding.size == 2) {
                say("demo done: every token new and each worker's tokens went up (highest $highest), never more than 2 holders, the killed worker's permit came back")
                return
            }
            if (killed == 0 && grants >= 6) {
                killed = worker
                killedAt = ms()
                workers[worker - 1].signal("KILL")
                say("kill -9 worker-$worker while it holds token $token; its lease ($LEASE_MS ms) is no longer renewed")
            }
        }
        System.err.println("demo failed: the killed worker's permit did not come back within 30 s")
        exitProcess(1)
    }
}

/** A worker of the demo: one client of [args]' engine, holding a permit for 800 ms at a time, printing HOLDS and RELEASES. */
object DistributedDemoWorker {
    @JvmStatic
    fun main(args: Array<String>): Unit = runBlocking {
        val (engine, url, name, total, leaseMs) = args
        // The one line that differs between the engines.
        val client: DistributedSemaphoreClient =
            if (engine == "postgres") PostgresSemaphoreClient.connect(url) else RedisSemaphoreClient.connect(url)
        val s = client.semaphore(name, total.toInt(), DistributedConfig(leaseTime = leaseMs.toLong().milliseconds, heartbeatInterval = 100.milliseconds))
        while (true) {
            s.withPermit { lease ->
                say("HOLDS ${lease.fencingToken}")
                delay(800)
                say("RELEASES ${lease.fencingToken}")
            }
            delay(50)
        }
    }

    private fun say(line: String) = synchronized(this) {
        println(line)
        System.out.flush()
    }
}

/** A [DistributedDemoWorker] in its own JVM; its stdout lines are collected as they come. */
private class DemoProcess(vararg args: String) : JvmProcess(DistributedDemoWorker::class.java.name, args.toList())
