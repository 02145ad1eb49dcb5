package dev.semaphore.redis

import dev.semaphore.distributed.*

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeLessThan
import io.kotest.matchers.comparables.shouldBeLessThanOrEqualTo
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource
import kotlin.time.times

/**
 * R9: the keys of a semaphore nobody holds or waits on expire after its idle time, and the next use
 * creates them again with fencing tokens still higher; while a lease is held (renewed), or a request
 * waits, they do not expire.
 */
class IdleExpirySpec : FunSpec({
    val redis = TwoClients()
    afterSpec { redis.close() }
    val (server, a, b) = redis
    val fresh = redis::fresh
    val idleExpiry = 1.seconds
    val leaseTime = 500.milliseconds
    val config = DistributedConfig(leaseTime = leaseTime, idleExpiry = idleExpiry, waiterTimeToLive = 500.milliseconds, heartbeatInterval = 100.milliseconds)

    test("after the last release the keys have a TTL and are gone about idleExpiry later; the next acquire creates them again with a higher token") {
        runBlocking {
            val name = fresh("idle")
            val s = a.semaphore(name, 2, config)
            val lease = s.acquire(2)
            s.release(lease)
            val released = TimeSource.Monotonic.markNow()
            for (key in redisKeys(name)) {
                val ttl = server.command("PTTL", key).removePrefix(":").toLong().milliseconds
                ttl shouldBeGreaterThan 0.milliseconds
                // The last deadline (the lease's expiry), then idleExpiry, and at most idleExpiry more (lib.lua's keep_until).
                ttl shouldBeLessThanOrEqualTo leaseTime + 2 * idleExpiry
            }
            awaitCondition("the keys expired", 10.seconds) { server.existingKeys(name) == 0 }
            val gone = released.elapsedNow()
            println("idle expiry: the keys were gone ${gone.inWholeMilliseconds} ms after the release (idleExpiry $idleExpiry, lease $leaseTime)")
            gone shouldBeGreaterThan idleExpiry - 100.milliseconds
            gone shouldBeLessThan leaseTime + 2 * idleExpiry + 2.seconds

            val again = b.semaphore(name, 3, config)
            val next = again.acquire()
            next.fencingToken shouldBeGreaterThan lease.fencingToken
            server.existingKeys(name) shouldBe 4
            again.totalPermits() shouldBe 3 // created again with the total of the handle that used it
            again.release(next)
        }
    }

    test("while a lease is held (renewed) for longer than idleExpiry, and a request waits, the keys do not expire") {
        runBlocking {
            val name = fresh("held")
            val s = a.semaphore(name, 1, config)
            val other = b.semaphore(name, 1, config)
            val lease = s.acquire()
            val start = TimeSource.Monotonic.markNow()
            var waiter: kotlinx.coroutines.Deferred<Lease>? = null
            var checks = 0
            while (start.elapsedNow() < 3 * idleExpiry + leaseTime) {
                server.existingKeys(name) shouldBe 4
                lease.isLost shouldBe false
                if (waiter == null && start.elapsedNow() > 1500.milliseconds) {
                    waiter = async { other.acquire() }
                }
                checks++
                delay(50)
            }
            checks shouldBeGreaterThan 20
            val queued = waiter!!
            other.queueLength() shouldBe 1
            queued.isActive shouldBe true
            s.release(lease)
            val next = withTimeout(5.seconds) { queued.await() }
            next.fencingToken shouldBeGreaterThan lease.fencingToken
            server.existingKeys(name) shouldBe 4
            other.release(next)
            // Idle now: they will go (as the test above shows).
            for (key in redisKeys(name)) server.command("PTTL", key).removePrefix(":").toLong() shouldBeGreaterThan 0L
        }
    }
})
