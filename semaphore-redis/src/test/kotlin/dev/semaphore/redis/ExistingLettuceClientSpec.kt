package dev.semaphore.redis

import dev.semaphore.SemaphoreClosedException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.lettuce.core.RedisClient
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** RedisSemaphoreClient.connect(RedisClient): the application's Lettuce client is used, and left open by close(). */
class ExistingLettuceClientSpec : FunSpec({
    val server = LocalRedisServer.start()
    afterSpec { server.close() }

    test("connect(RedisClient) works through the application's client; close() closes only our connections, and the Lettuce client still connects") {
        val redis = RedisClient.create(server.uri)
        try {
            val clientsBefore = server.info("clients", "connected_clients")
            val client = RedisSemaphoreClient.connect(redis)
            val other = RedisSemaphoreClient.connect(server.uri)
            try {
                runBlocking {
                    val fast = RedisSemaphoreConfig(waiterTimeToLive = 2.seconds, heartbeatInterval = 200.milliseconds)
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
        }
    }
})
