package dev.semaphore.redis

import dev.semaphore.distributed.*

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.lettuce.core.cluster.SlotHash
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

/** A real Redis Cluster of 3 masters: semaphores whose slots are on different nodes, used from two cluster clients. */
class ClusterSpec : FunSpec({
    val config = DistributedConfig(leaseTime = 5.seconds, waiterTimeToLive = 3.seconds, heartbeatInterval = 200.milliseconds)

    /** A semaphore name whose keys' slot is served by node [node] of [cluster]. */
    fun nameOn(cluster: LocalRedisCluster, node: Int): String =
        generateSequence(0) { it + 1 }.map { "cluster-$it" }
            .first { cluster.nodeFor(SlotHash.getSlot(redisKeys(it)[0])) === cluster.nodes[node] }

    test("on every node: FIFO grants across two cluster clients (woken by pub/sub from another node), fencing tokens, nothing lost") {
        LocalRedisCluster.start(3).use { cluster ->
            val a = RedisSemaphoreClient.connectCluster(*cluster.uris)
            val b = RedisSemaphoreClient.connectCluster(cluster.uris[2]) // knows one node; finds the others
            try {
                runBlocking {
                    for (node in 0 until 3) {
                        val name = nameOn(cluster, node)
                        val sa = a.semaphore(name, 2, config)
                        val sb = b.semaphore(name, 2, config)
                        val held = sa.acquire(2)
                        val waiters = (0 until 4).map { i ->
                            async { (if (i % 2 == 0) sb else sa).acquire(1) }.also { waitUntil { sa.queueLength() == i + 1 } }
                        }
                        // the keys are on the node that serves their slot
                        cluster.nodeFor(SlotHash.getSlot(redisKeys(name)[0])).reply("HGET", redisKeys(name)[0], "queued") shouldBe listOf("4")
                        sa.release(held)
                        val leases = withTimeout(10.seconds) { waiters.take(2).awaitAll() }
                        waiters[2].isActive shouldBe true
                        sb.release(leases[0])
                        sa.release(leases[1])
                        val rest = withTimeout(10.seconds) { waiters.drop(2).awaitAll() }
                        // granted in the order of the requests: fencing tokens increase along the line
                        (leases + rest).map { it.fencingToken }.zipWithNext().forEach { (a, b) -> b shouldBeGreaterThan a }
                        leases[0].fencingToken shouldBeGreaterThan held.fencingToken
                        sb.release(rest[0])
                        sa.release(rest[1])
                        sa.availablePermits() shouldBe 2
                        sb.queueLength() shouldBe 0
                    }
                }
            } finally {
                a.close()
                b.close()
            }
        }
    }

    test("withPermit from two cluster clients on 3 semaphores at once: never more than the permits held") {
        LocalRedisCluster.start(3).use { cluster ->
            val clients = listOf(RedisSemaphoreClient.connectCluster(*cluster.uris), RedisSemaphoreClient.connectCluster(*cluster.uris))
            try {
                runBlocking {
                    for (node in 0 until 3) {
                        val name = nameOn(cluster, node)
                        val inside = AtomicInteger()
                        val most = AtomicInteger()
                        val jobs = (0 until 20).map { i ->
                            launch {
                                clients[i % 2].semaphore(name, 3, config).withPermit {
                                    most.accumulateAndGet(inside.incrementAndGet(), ::maxOf)
                                    delay(5)
                                    inside.decrementAndGet()
                                }
                            }
                        }
                        withTimeout(30.seconds) { jobs.forEach { it.join() } }
                        most.get() shouldBe 3
                        clients[0].semaphore(name, 3, config).availablePermits() shouldBe 3
                    }
                }
            } finally {
                clients.forEach { it.close() }
            }
        }
    }

    test("grants are published with SPUBLISH and received with SSUBSCRIBE on Redis 7+ (PUBLISH/SUBSCRIBE on 6.x), through an application's RedisClusterClient") {
        LocalRedisCluster.start(3).use { cluster ->
            // Long heartbeats: only pub/sub can bring a grant well within one heartbeat interval.
            val heartbeatInterval = 20.seconds
            val slow = DistributedConfig(waiterTimeToLive = 60.seconds, heartbeatInterval = heartbeatInterval)
            val sharded = LocalRedisServer.majorVersion >= 7
            println("cluster of redis-server ${LocalRedisServer.binary} (major version ${LocalRedisServer.majorVersion}): ${if (sharded) "SPUBLISH" else "PUBLISH"}")
            val resources = quickReconnects()
            val lettuce = io.lettuce.core.cluster.RedisClusterClient.create(resources, cluster.uris.map { io.lettuce.core.RedisURI.create(it) })
            val holder = RedisSemaphoreClient.connectCluster(*cluster.uris)
            val waiting = RedisSemaphoreClient.connectCluster(lettuce)
            try {
                runBlocking {
                    val name = nameOn(cluster, 1)
                    val channel = wakeChannel(name)
                    val owner = cluster.nodeFor(SlotHash.getSlot(channel))
                    owner shouldBe cluster.nodeFor(SlotHash.getSlot(redisKeys(name)[0]))
                    fun published(node: LocalRedisServer, command: String) = node.reply("INFO", "commandstats").single().lines()
                        .firstOrNull { it.startsWith("cmdstat_$command:") }?.substringAfter("calls=")?.substringBefore(',')?.toLong() ?: 0L
                    fun subscribers(node: LocalRedisServer, kind: String) = node.reply("PUBSUB", kind, channel).let { it[1].toInt() }

                    val held = holder.semaphore(name, 2, slow).acquire(2)
                    val s = waiting.semaphore(name, 2, slow)
                    val firstQueued = TimeSource.Monotonic.markNow()
                    val first = async { s.acquire() }
                    waitUntil { s.queueLength() == 1 }
                    if (sharded) {
                        waitUntil { subscribers(owner, "SHARDNUMSUB") == 1 } // subscribed on the node that owns the slot
                        cluster.nodes.sumOf { subscribers(it, "NUMSUB") } shouldBe 0 // and not by SUBSCRIBE anywhere
                    } else {
                        waitUntil { cluster.nodes.sumOf { subscribers(it, "NUMSUB") } == 1 }
                    }
                    // A second waiter of the same line, subscribed before it was sent: nothing but a message
                    // (or a heartbeat, the first of which is 20 s away) can tell it of its grant.
                    delay(300)
                    val second = async { s.acquire() }
                    waitUntil { s.queueLength() == 2 }
                    delay(300)
                    val command = if (sharded) "spublish" else "publish"
                    val publishedBefore = published(owner, command)
                    val releasedAt = TimeSource.Monotonic.markNow()
                    holder.semaphore(name, 2, slow).release(held)
                    val leases = withTimeout(heartbeatInterval / 2) { listOf(first.await(), second.await()) }
                    val took = releasedAt.elapsedNow()
                    val sinceFirstQueued = firstQueued.elapsedNow()
                    println("cluster: the grants reached the waiters ${took.inWholeMilliseconds} ms after the release, by ${command.uppercase()}")
                    took shouldBeLessThan heartbeatInterval / 4
                    sinceFirstQueued shouldBeLessThan heartbeatInterval // no heartbeat of this line has run yet
                    published(owner, command) shouldBe publishedBefore + 1 // both grants in one message
                    if (sharded) cluster.nodes.sumOf { published(it, "publish") } shouldBe 0
                    waiting.redis.publishCommand shouldBe (if (sharded) "SPUBLISH" else "PUBLISH")
                    leases[1].fencingToken shouldBeGreaterThan leases[0].fencingToken
                    leases.forEach { s.release(it) }
                    s.availablePermits() shouldBe 2
                }
            } finally {
                holder.close()
                waiting.close()
            }
            // The application's cluster client is still open.
            lettuce.connect().use { it.sync().ping() shouldBe "PONG" }
            lettuce.shutdown()
            resources.shutdown()
        }
    }

    test("a single-server client on a cluster node that does not serve the semaphore's slot: a clear error naming connectCluster") {
        LocalRedisCluster.start(3).use { cluster ->
            RedisSemaphoreClient.connect(cluster.uris[0]).use { client ->
                val name = nameOn(cluster, 1)
                val e = shouldThrow<WrongClusterNodeException> { runBlocking { client.semaphore(name, 1).tryAcquire() } }
                e.message!! shouldContain "connect with RedisSemaphoreClient.connectCluster"
                e.message!! shouldContain "MOVED"
            }
            RedisSemaphoreClient.connectCluster(*cluster.uris).use { client ->
                shouldThrow<IllegalArgumentException> {
                    client.semaphore("x", 1, DistributedConfig(replicaAcks = 1))
                }.message shouldBe "replicaAcks (1) is not supported on a Redis Cluster client; use 0"
            }
        }
    }
})

private suspend fun waitUntil(condition: suspend () -> Boolean) = withTimeout(20.seconds) { while (!condition()) delay(10) }
