package dev.semaphore.redis

import dev.semaphore.distributed.*

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeLessThan
import io.kotest.matchers.comparables.shouldBeLessThanOrEqualTo
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import java.lang.management.ManagementFactory
import java.util.concurrent.atomic.AtomicInteger
import kotlin.math.abs
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

/**
 * Memory bounded by what is live, on both sides: handles are views that the client keeps nothing of,
 * the client's state (waiters, leases, lines) empties once nothing waits or is held and the lines'
 * linger has passed, and the server keeps no record of ended requests (R6).
 */
class BoundedStateSpec : FunSpec({
    val redis = TwoClients()
    afterSpec { redis.close() }
    val (server, a, b) = redis
    val fresh = redis::fresh
    val fast = DistributedConfig(waiterTimeToLive = 500.milliseconds, heartbeatInterval = 100.milliseconds)

    /** The heap in use after full collections (several, until it stops shrinking). */
    fun usedHeap(): Long {
        val memory = ManagementFactory.getMemoryMXBean()
        var used = Long.MAX_VALUE
        repeat(10) {
            System.gc()
            Thread.sleep(20)
            val now = memory.heapMemoryUsage.used
            if (now >= used && it >= 3) return minOf(now, used)
            used = minOf(used, now)
        }
        return used
    }

    test("1,000,000 calls of client.semaphore(...) and of client.lock(...) keep the heap flat: handles are views") {
        var sink = 0L
        repeat(20_000) { sink += a.semaphore("x", 8).configuredPermits + a.lock("warm-$it").name.length } // loads and compiles the code first
        val before = usedHeap()
        val start = TimeSource.Monotonic.markNow()
        repeat(1_000_000) { sink += a.semaphore("x", 8).configuredPermits }
        repeat(1_000_000) { sink += a.lock("lock-$it").name.length }
        val took = start.elapsedNow()
        val after = usedHeap()
        val growth = after - before
        println("2,000,000 handles made in $took; heap ${before / 1024} KB before, ${after / 1024} KB after (growth ${growth / 1024} KB); $sink")
        growth shouldBeLessThan 4L * 1024 * 1024 // a retained handle costs hundreds of bytes: 2,000,000 would be hundreds of MB
        a.stateSizes() shouldBe Triple(0, 0, 0) // made, never used: nothing in the client
    }

    test("the client's state (waiters, leases, lines) returns to (0, 0, 0) once waiters left, leases ended and the linger passed") {
        val client = RedisSemaphoreClient.connect(server.uri)
        try {
            runBlocking {
                client.stateSizes() shouldBe Triple(0, 0, 0)
                val one = fresh("state-one")
                val two = fresh("state-two")
                val s = client.semaphore(one, 1, fast)
                val held = s.acquire()
                client.stateSizes() shouldBe Triple(0, 1, 0) // a lease, kept (renewed); no line: nobody waits
                val blocker = b.semaphore(two, 1, fast).acquire() // another JVM holds `two`
                coroutineScope {
                    val waiters = (1..3).map {
                        async {
                            val h = client.semaphore(one, 1, fast)
                            h.release(h.acquire())
                        }
                    }
                    val timed = async { client.semaphore(two, 1, fast).tryAcquire(30.seconds) }
                    val cancelled = launch(start = CoroutineStart.UNDISPATCHED) { client.semaphore(two, 1, fast).acquire() }
                    awaitCondition("3 + 2 queued") { s.queueLength() == 3 && b.semaphore(two, 1).queueLength() == 2 }
                    awaitCondition("5 waiting, 1 lease, 2 lines") { client.stateSizes() == Triple(5, 1, 2) }
                    cancelled.cancelAndJoin()
                    client.stateSizes() shouldBe Triple(4, 1, 2)
                    client.semaphore(two, 1, fast).tryAcquire(200.milliseconds).shouldBeNull() // times out, leaves nothing
                    client.stateSizes() shouldBe Triple(4, 1, 2)
                    s.release(held)
                    withTimeout(10.seconds) { waiters.forEach { it.await() } } // one after the other, each granted at the release before it
                    b.semaphore(two, 1, fast).release(blocker)
                    val last = withTimeout(10.seconds) { timed.await() }!!
                    client.semaphore(two, 1, fast).release(last)
                }
                // A fixed lease that runs out is forgotten too.
                val fixed = client.semaphore(one, 1, DistributedConfig(leaseTime = 300.milliseconds, autoRenew = false))
                val lost = fixed.acquire()
                shouldThrow<LeaseLostException> { withTimeout(5.seconds) { lost.awaitEnd() } }
                val lastLeave = TimeSource.Monotonic.markNow()
                val (waiting, leases, lines) = client.stateSizes()
                waiting shouldBe 0
                leases shouldBe 0
                lines shouldBe 2 // lingering: subscribed for a while after the last waiter left
                awaitCondition("the lines' linger passed", 15.seconds) { client.stateSizes() == Triple(0, 0, 0) }
                val lingered = lastLeave.elapsedNow()
                println("the lines were dropped ${lingered.inWholeMilliseconds} ms after the last waiter left (linger 5 s)")
                lingered shouldBeGreaterThan 3.seconds // the linger is 5 s from the last leave, which came a little before
                // ... and unsubscribed on the server.
                awaitCondition("unsubscribed") {
                    server.reply("PUBSUB", "NUMSUB", wakeChannel(one), wakeChannel(two)) == listOf(wakeChannel(one), "0", wakeChannel(two), "0")
                }
            }
        } finally {
            client.close()
        }
    }

    test("the server keeps no record of ended requests: 10,000 acquire+release cycles leave the keys as 100 did; a request answered 'unknown' leaves nothing") {
        runBlocking {
            val name = fresh("bounded")
            val total = 8
            val handles = listOf(a.semaphore(name, total, fast), b.semaphore(name, total, fast))
            val s = handles[0]

            /** [cycles] acquire+release cycles from 16 coroutines on two clients: twice as many as permits, so most queue. */
            suspend fun cycles(cycles: Int) = withContext(Dispatchers.Default) {
                val left = AtomicInteger(cycles)
                repeat(16) { i ->
                    launch {
                        val h = handles[i % 2]
                        while (left.getAndDecrement() > 0) h.release(h.acquire(if (i % 4 == 3) 2 else 1))
                    }
                }
            }

            /** Lets the line's last heartbeat deadlines pass and lets a script end them (R5), then one plain cycle. */
            suspend fun settle() {
                delay(fast.waiterTimeToLive + 200.milliseconds)
                s.availablePermits() shouldBe total
                s.release(s.acquire())
                s.queueLength() shouldBe 0
            }
            cycles(100)
            settle()
            val memoryAt100 = server.keysMemory(name)
            val sizesAt100 = server.keySizes(name)
            val usedAt100 = server.info("memory", "used_memory")
            fun queuedSoFar() = server.reply("HGET", redisKeys(name)[0], "seq").single().toLong() // requests that joined the line
            val queuedAt100 = queuedSoFar()
            val start = TimeSource.Monotonic.markNow()
            cycles(10_000)
            val took = start.elapsedNow()
            settle()
            val memoryAt10k = server.keysMemory(name)
            val sizesAt10k = server.keySizes(name)
            val usedAt10k = server.info("memory", "used_memory")
            println(
                "10,000 cycles in $took: the keys take $memoryAt10k bytes (after 100 cycles: $memoryAt100), sizes $sizesAt10k " +
                    "(after 100: $sizesAt100); used_memory ${usedAt10k - usedAt100} bytes more",
            )
            (queuedSoFar() - queuedAt100) shouldBeGreaterThan 1000L // the slow paths ran: the line, its grants and heartbeats
            sizesAt10k shouldBe sizesAt100 // the same hash fields, and each zset holds only its sentinel
            sizesAt10k.drop(1) shouldBe listOf(1, 1, 1)
            server.reply("HKEYS", redisKeys(name)[0]).filter { '-' in it } shouldBe emptyList() // no request id left
            abs(memoryAt10k - memoryAt100) shouldBeLessThanOrEqualTo 64L // numbers a few bytes longer; one allocation size class
            (usedAt10k - usedAt100) shouldBeLessThan 256L * 1024 // a record per ended request would be about a megabyte

            // Requests the server does not know (ended, or never known) are answered "U" and leave nothing.
            a.raw(Script.release, name, "ghost-1", "1", "-", total = total) shouldBe listOf("U")
            a.raw(Script.renew, name, "ghost-2", "1", "30000", "-", total = total) shouldBe listOf("U")
            a.raw(Script.cancel, name, "ghost-3", "1", "1", total = total) shouldBe listOf("U")
            a.raw(Script.cancel, name, "ghost-4", "1", "0", total = total) shouldBe listOf("U")
            a.raw(Script.heartbeat, name, "-", "500", "ghost-5", "ghost-6", total = total) shouldBe listOf(listOf("U"), listOf("U"))
            // A release repeated (its first run's answer lost): the handle reads "U" as released.
            val lease = s.acquire()
            (a.raw(Script.release, name, lease.id, "1", "-", total = total) is Long) shouldBe true // released: an integer
            s.release(lease)
            lease.isLost shouldBe false
            server.keySizes(name) shouldBe sizesAt100
            server.reply("HKEYS", redisKeys(name)[0]).filter { '-' in it } shouldBe emptyList()
            abs(server.keysMemory(name) - memoryAt10k) shouldBeLessThanOrEqualTo 64L
            s.availablePermits() shouldBe total
        }
    }
})
