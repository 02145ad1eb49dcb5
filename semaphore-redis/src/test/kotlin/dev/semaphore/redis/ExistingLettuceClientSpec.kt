package dev.semaphore.redis

import dev.semaphore.distributed.*

import dev.semaphore.SemaphoreClosedException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.lettuce.core.ClientOptions
import io.lettuce.core.RedisClient
import io.lettuce.core.resource.DefaultClientResources
import io.lettuce.core.resource.Delay
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * RedisSemaphoreClient.connect(RedisClient): the application's Lettuce client is used, and left open by close(); its
 * settings are checked against the leases' timings (C1 in docs/redis-protocol.md).
 */
class ExistingLettuceClientSpec : FunSpec({
    val server = LocalRedisServer.start()
    afterSpec { server.close() }

    test("connect(RedisClient) works through the application's client; close() closes only our connections, and the Lettuce client still connects") {
        val resources = quickReconnects()
        val redis = RedisClient.create(resources, server.uri)
        try {
            val clientsBefore = server.info("clients", "connected_clients")
            val client = RedisSemaphoreClient.connect(redis)
            val other = RedisSemaphoreClient.connect(server.uri)
            try {
                runBlocking {
                    val fast = DistributedConfig(waiterTimeToLive = 2.seconds, heartbeatInterval = 200.milliseconds)
                    val s = client.semaphore("existing", 1, fast)
                    val held = other.semaphore("existing", 1, fast).acquire()
                    val waiter = async { s.acquire() } // a wait in line: pub/sub through the application's client
                    awaitCondition("queued") { s.queueLength() == 1 }
                    other.semaphore("existing", 1, fast).release(held)
                    val lease = withTimeout(5.seconds) { waiter.await() }
                    lease.fencingToken shouldBeGreaterThan held.fencingToken
                    s.release(lease)
                    s.availablePermits() shouldBe 1
                }
                // Ours: one command connection and one pub/sub connection (the other client has two of its own).
                server.info("clients", "connected_clients") shouldBe clientsBefore + 4
            } finally {
                client.close()
                other.close()
            }
            runBlocking { awaitCondition("our connections closed") { server.info("clients", "connected_clients") == clientsBefore } }
            shouldThrow<SemaphoreClosedException> { runBlocking { client.semaphore("existing", 1).tryAcquire() } }
            // The application's client is still open: it connects and works.
            redis.connect().use { connection -> connection.sync().ping() shouldBe "PONG" }
        } finally {
            redis.shutdown()
            resources.shutdown()
        }
    }

    test("C1: a Lettuce client that does not reconnect is refused; one whose reconnect delay outgrows a semaphore's leases is refused for that semaphore, naming the values and the fix") {
        val noReconnect = RedisClient.create(server.uri)
        noReconnect.options = ClientOptions.builder().autoReconnect(false).build()
        try {
            shouldThrow<IllegalArgumentException> { RedisSemaphoreClient.connect(noReconnect) }.message!! shouldContain "autoReconnect off"
        } finally {
            noReconnect.shutdown()
        }
        // Lettuce's default reconnect delay grows to 30 s: refused for the default timings (a quarter of 30 s - 10 s is 5 s)...
        val lettuceDefaults = RedisClient.create(server.uri)
        try {
            RedisSemaphoreClient.connect(lettuceDefaults).use { client ->
                val refused = shouldThrow<IllegalArgumentException> { client.semaphore("defaults", 1) }
                refused.message!! shouldContain "reconnect delay grows to 30s, longer than 2s"
                refused.message!! shouldContain "reconnectDelay"
                shouldThrow<IllegalArgumentException> { client.lock("defaults") }
                // ...and accepted for timings it fits: leases of 5 minutes, renewed every minute; waiters alive for 3.
                val long = DistributedConfig(leaseTime = 300.seconds, renewInterval = 60.seconds, waiterTimeToLive = 180.seconds)
                runBlocking {
                    val s = client.semaphore("long", 1, long)
                    s.release(s.acquire())
                }
            }
        } finally {
            lettuceDefaults.shutdown()
        }
        // A delay of at most 2 s fits the defaults.
        val resources = DefaultClientResources.builder()
            .reconnectDelay(Delay.exponential(java.time.Duration.ofMillis(10), java.time.Duration.ofSeconds(2), 2, java.util.concurrent.TimeUnit.MILLISECONDS))
            .build()
        val fitting = RedisClient.create(resources, server.uri)
        try {
            RedisSemaphoreClient.connect(fitting).use { client -> client.semaphore("defaults", 1).configuredPermits shouldBe 1 }
        } finally {
            fitting.shutdown()
            resources.shutdown()
        }
    }
})
