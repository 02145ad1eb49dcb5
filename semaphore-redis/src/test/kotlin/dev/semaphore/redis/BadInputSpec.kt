package dev.semaphore.redis

import dev.semaphore.distributed.*

import dev.semaphore.SemaphoreClosedException
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.runBlocking
import kotlin.reflect.KClass
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * The bad-input table: every row must throw the named exception with a message naming the bad value,
 * and leave the semaphore exactly as before (free permits, queue, and the lease it holds).
 */
class BadInputSpec : FunSpec({
    val server = LocalRedisServer.start()
    val client = RedisSemaphoreClient.connect(server.uri)
    afterSpec {
        client.close()
        server.close()
    }
    val s = client.semaphore("bad-input", 2)
    val other = client.semaphore("bad-input-other", 1)
    val held = runBlocking { s.acquire(1) }
    val released = runBlocking { s.acquire(1).also { s.release(it) } }
    val foreign = runBlocking { other.acquire(1) }

    class Row(val what: String, val type: KClass<out Throwable>, val says: String, val action: suspend () -> Any?)

    val rows = listOf(
        Row("empty name", IllegalArgumentException::class, "was \"\"") { client.semaphore("", 1) },
        Row("a name with a brace", IllegalArgumentException::class, "was \"a{b\"") { client.semaphore("a{b", 1) },
        Row("a lock name with a brace", IllegalArgumentException::class, "was \"x}\"") { client.lock("x}") },
        Row("0 permits in total", IllegalArgumentException::class, "was 0") { client.semaphore("bad-input", 0) },
        Row("-3 permits in total", IllegalArgumentException::class, "was -3") { client.semaphore("bad-input", -3) },
        Row("acquire(0)", IllegalArgumentException::class, "was 0") { s.acquire(0) },
        Row("acquire(-1)", IllegalArgumentException::class, "was -1") { s.acquire(-1) },
        Row("acquire(3) of 2", IllegalArgumentException::class, "3 permits can never be granted: the total is 2") { s.acquire(3) },
        Row("tryAcquire(0)", IllegalArgumentException::class, "was 0") { s.tryAcquire(0) },
        Row("tryAcquire(3) of 2", IllegalArgumentException::class, "3 permits can never be granted: the total is 2") { s.tryAcquire(3) },
        Row("tryAcquire(1s, 3) of 2", IllegalArgumentException::class, "3 permits can never be granted: the total is 2") { s.tryAcquire(1.seconds, 3) },
        Row("tryAcquire(1s, 0)", IllegalArgumentException::class, "was 0") { s.tryAcquire(1.seconds, permits = 0) },
        Row("tryLock on a closed handle", SemaphoreClosedException::class, "closed") { client.lock("bad-input-closed").also { it.close() }.tryLock(1.seconds) },
        Row("withPermit(5) of 2", IllegalArgumentException::class, "5 permits can never be granted: the total is 2") { s.withPermit(5) { } },
        Row("acquire(3) of 2 through a handle configured with 3", IllegalArgumentException::class, "the total is 2") {
            client.semaphore("bad-input", 3).acquire(3)
        },
        Row("reducePermits(3) of 2", IllegalArgumentException::class, "cannot remove 3 permits: the total is 2") { s.reducePermits(3) },
        Row("reducePermits(0)", IllegalArgumentException::class, "was 0") { s.reducePermits(0) },
        Row("addPermits(0)", IllegalArgumentException::class, "was 0") { s.addPermits(0) },
        Row("addPermits(Int.MAX_VALUE)", IllegalArgumentException::class, "would exceed 2147483647") { s.addPermits(Int.MAX_VALUE) },
        Row("setPermits(-1)", IllegalArgumentException::class, "was -1") { s.setPermits(-1) },
        Row("inspect(-1)", IllegalArgumentException::class, "was -1") { s.inspect(-1) },
        Row("inspect(1001)", IllegalArgumentException::class, "between 0 and 1000, was 1001") { s.inspect(1001) },
        Row("a lock's inspect(-2)", IllegalArgumentException::class, "was -2") { client.lock("bad-input-lock").inspect(-2) },
        Row("a client name of 65 characters", IllegalArgumentException::class, "was \"${"n".repeat(65)}\"") {
            RedisSemaphoreClient.connect("${server.uri}?clientName=${"n".repeat(65)}")
        },
        Row("a lease of another semaphore", IllegalArgumentException::class, "belongs to semaphore bad-input-other") { s.release(foreign) },
        Row("a second release", IllegalStateException::class, "already released") { s.release(released) },
        Row("renewing a released lease", LeaseLostException::class, "it was released") { s.renew(released) },
        Row("leaseTime 0", IllegalArgumentException::class, "was 0s") { DistributedConfig(leaseTime = 0.seconds) },
        Row("renewInterval not shorter than leaseTime", IllegalArgumentException::class, "was 5s") {
            DistributedConfig(leaseTime = 5.seconds, renewInterval = 5.seconds)
        },
        Row("renewInterval more than half of leaseTime (K1: a failed renewal could not be tried again)", IllegalArgumentException::class,
            "at most half of leaseTime (5s), so that a renewal that fails can be tried again before the lease ends; was 2.6s: lower renewInterval or raise leaseTime") {
            DistributedConfig(leaseTime = 5.seconds, renewInterval = 2.6.seconds)
        },
        Row("heartbeatInterval not shorter than the time to live", IllegalArgumentException::class, "was 2s") {
            DistributedConfig(waiterTimeToLive = 1.seconds, heartbeatInterval = 2.seconds)
        },
        Row("heartbeatInterval more than half of the time to live (K1)", IllegalArgumentException::class,
            "at most half of waiterTimeToLive (1s), so that a heartbeat that fails can be sent again before the request is dropped; was 600ms") {
            DistributedConfig(waiterTimeToLive = 1.seconds, heartbeatInterval = 600.milliseconds)
        },
        Row("waiterTimeToLive under 2 ms", IllegalArgumentException::class, "was 1.5ms") {
            DistributedConfig(waiterTimeToLive = 1.5.milliseconds, heartbeatInterval = 0.1.milliseconds)
        },
    )

    for (row in rows) {
        test("${row.what}: ${row.type.simpleName} naming the value, nothing changed") {
            runBlocking {
                val before = Triple(s.availablePermits(), s.queueLength(), other.availablePermits())
                val thrown = runCatching { row.action() }.exceptionOrNull()
                    ?: error("${row.what}: nothing was thrown")
                check(row.type.isInstance(thrown)) { "${row.what}: expected ${row.type.simpleName}, got $thrown" }
                thrown.message!! shouldContain row.says
                Triple(s.availablePermits(), s.queueLength(), other.availablePermits()) shouldBe before
                s.renew(held) // the lease held all along is still live
            }
        }
    }
})
