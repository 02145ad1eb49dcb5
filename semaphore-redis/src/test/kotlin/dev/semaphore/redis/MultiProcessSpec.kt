package dev.semaphore.redis

import dev.semaphore.distributed.*

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeLessThan
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

/** Several JVM processes on one semaphore, and the faults of a process: kill -9 and SIGSTOP. */
class MultiProcessSpec : FunSpec({
    val server = LocalRedisServer.start()
    val client = RedisSemaphoreClient.connect(server.uri)
    afterSpec {
        client.close()
        server.close()
    }
    val fast = DistributedConfig(leaseTime = 5.seconds, waiterTimeToLive = 1.seconds, heartbeatInterval = 100.milliseconds)

    test("3 processes x 20 coroutines x 10 rounds on 3 permits: never more than 3 held, FIFO grants, everything back") {
        val total = 3
        val workers = (1..3).map { WorkerProcess("history", server.uri, "history", "$total", "20", "10") }
        val leases = mutableListOf<List<Long>>() // token, permits, queueNumber, last token at release
        try {
            for (w in workers) {
                while (true) {
                    val line = w.next("")
                    if (line == "DONE") break
                    if (line.startsWith("LEASE ")) leases += line.removePrefix("LEASE ").split(' ').map { it.toLong() }
                }
                w.exitCode() shouldBe 0
            }
        } finally {
            workers.forEach { it.close() }
        }
        leases.size shouldBe 600
        // A lease was held at every grant from its own token to the last token before its release.
        val grants = leases.map { it[0] }.sorted()
        grants.zipWithNext().forEach { (a, b) -> b shouldBeGreaterThan a } // tokens are unique
        var peak = 0L
        for (x in grants) {
            val held = leases.filter { it[0] <= x && x <= it[3] }.sumOf { it[1] }
            check(held <= total) { "at the grant of token $x, $held permits were held (total $total)" }
            peak = maxOf(peak, held)
        }
        val queued = leases.filter { it[2] > 0 }.sortedBy { it[2] }
        queued.zipWithNext().forEach { (a, b) ->
            check(b[0] > a[0]) { "request ${a[2]} was granted token ${a[0]}, but the later request ${b[2]} got ${b[0]} before it" }
        }
        println("history: ${leases.size} leases, ${queued.size} of them queued first, peak $peak of $total permits held")
        queued.size shouldBeGreaterThan 100 // the run was contended
        runBlocking {
            val s = client.semaphore("history", total)
            s.availablePermits() shouldBe total
            s.queueLength() shouldBe 0
        }
    }

    test("kill -9 of a holder: its permit comes back when its lease expires, to the next in line, with a higher token") {
        WorkerProcess("hold", server.uri, "killed-holder", "1", "1500").use { holder ->
            val token = holder.next("HELD ").substringAfter(' ').toLong()
            runBlocking {
                val s = client.semaphore("killed-holder", 1, fast)
                val next = async { s.acquire() }
                withTimeout(30.seconds) { while (s.queueLength() == 0) delay(10) }
                val killedAt = TimeSource.Monotonic.markNow()
                holder.signal("KILL")
                val lease = withTimeout(20.seconds) { next.await() }
                val waited = killedAt.elapsedNow()
                lease.fencingToken shouldBeGreaterThan token
                waited shouldBeLessThan 1500.milliseconds + 2.seconds // lease time + heartbeat + slack
                println("kill -9: served ${waited.inWholeMilliseconds} ms after the kill (lease 1500 ms)")
                s.release(lease)
                s.availablePermits() shouldBe 1
            }
        }
    }

    test("SIGSTOP of a holder past its lease: the next holder gets a higher token; the paused one is told when it wakes") {
        WorkerProcess("hold", server.uri, "paused-holder", "1", "1000").use { holder ->
            val token = holder.next("HELD ").substringAfter(' ').toLong()
            holder.signal("STOP")
            try {
                runBlocking {
                    val s = client.semaphore("paused-holder", 1, fast)
                    val lease = withTimeout(20.seconds) { s.acquire() } // after the paused holder's lease expired
                    lease.fencingToken shouldBeGreaterThan token
                    holder.signal("CONT")
                    // Told by the server ("can no longer be renewed"), or by its own clock first, if it woke
                    // after its lease's expiry as last told ("expired before a renewal reached the server").
                    val lost = holder.next("LOST ")
                    check("can no longer be renewed" in lost || "expired before a renewal reached the server" in lost) { lost }
                    holder.exitCode() shouldBe 3
                    s.availablePermits() shouldBe 0 // still ours: the paused holder's late release changed nothing
                    s.release(lease)
                    s.availablePermits() shouldBe 1
                }
            } finally {
                if (holder.process.isAlive) holder.signal("CONT")
            }
        }
    }

    test("kill -9 of a waiting process: its request leaves the line after its time to live; the next is served") {
        runBlocking {
            // The held lease outlasts the worker JVM's start on a loaded machine: this test is about the waiter.
            val s = client.semaphore("killed-waiter", 1, DistributedConfig(leaseTime = 60.seconds, waiterTimeToLive = 1.seconds, heartbeatInterval = 100.milliseconds))
            val held = s.acquire()
            WorkerProcess("wait", server.uri, "killed-waiter", "1").use { waiter ->
                waiter.next("QUEUED")
                val behind = async { s.acquire() }
                withTimeout(30.seconds) { while (s.queueLength() < 2) delay(10) } // the worker, then `behind`
                val killedAt = TimeSource.Monotonic.markNow()
                waiter.signal("KILL")
                withTimeout(20.seconds) { while (s.queueLength() > 1) delay(10) } // purged: no heartbeat
                val purgedAfter = killedAt.elapsedNow()
                purgedAfter shouldBeLessThan 1.seconds + 2.seconds // its time to live + our heartbeat + slack
                println("kill -9 of a waiter: out of the line ${purgedAfter.inWholeMilliseconds} ms after the kill (time to live 1000 ms)")
                s.release(held)
                val lease = withTimeout(5.seconds) { behind.await() }
                s.queueLength() shouldBe 0
                s.release(lease)
                s.availablePermits() shouldBe 1
            }
        }
    }
})
