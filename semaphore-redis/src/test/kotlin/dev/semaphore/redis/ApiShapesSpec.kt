package dev.semaphore.redis

import dev.semaphore.distributed.*

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeGreaterThanOrEqualTo
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import java.lang.reflect.Modifier
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

/**
 * The public shapes written exactly as a Kotlin caller writes them, on a real server: each call does
 * what it reads (a Duration first is a timeout, an Int is a count of permits).
 */
class ApiShapesSpec : FunSpec({
    val redis = TwoClients()
    afterSpec { redis.close() }
    val (server, a, b) = redis
    val fresh = redis::fresh

    suspend fun eventually(condition: suspend () -> Boolean) = withTimeout(20.seconds) { while (!condition()) delay(10) }

    test("tryAcquire(5.seconds) waits in line for one permit, and gets it when the holder releases") {
        runBlocking {
            val name = fresh("timed-try")
            val s = a.semaphore(name, 1)
            val held = s.acquire()
            val start = TimeSource.Monotonic.markNow()
            val waiter = async { b.semaphore(name, 1).tryAcquire(5.seconds) }
            eventually { s.queueLength() == 1 } // it queued: it waits, it did not just try
            delay(300)
            waiter.isActive shouldBe true
            s.release(held)
            val lease = waiter.await().shouldNotBeNull()
            start.elapsedNow() shouldBeGreaterThanOrEqualTo 300.milliseconds
            lease.permits shouldBe 1
            lease.fencingToken shouldBeGreaterThan held.fencingToken
            s.release(lease)
            s.availablePermits() shouldBe 1
        }
    }

    test("tryAcquire(300.milliseconds) on a held semaphore waits that long, then returns null with nothing queued") {
        runBlocking {
            val name = fresh("timed-try-out")
            val s = a.semaphore(name, 2)
            val held = s.acquire(2)
            val start = TimeSource.Monotonic.markNow()
            b.semaphore(name, 2).tryAcquire(300.milliseconds).shouldBeNull()
            start.elapsedNow() shouldBeGreaterThanOrEqualTo 300.milliseconds
            s.queueLength() shouldBe 0
            s.release(held)
        }
    }

    test("tryAcquire(5.seconds, 2) and tryAcquire(5.seconds, permits = 2) take two permits; tryAcquire(2) only tries") {
        runBlocking {
            val s = a.semaphore(fresh("timed-try-2"), 3)
            val two = s.tryAcquire(5.seconds, 2).shouldNotBeNull()
            two.permits shouldBe 2
            s.tryAcquire(2).shouldBeNull() // 1 free: an untimed try, no wait
            s.queueLength() shouldBe 0
            s.release(two)
            val named = s.tryAcquire(5.seconds, permits = 2).shouldNotBeNull()
            named.permits shouldBe 2
            s.release(named)
            s.availablePermits() shouldBe 3
        }
    }

    test("tryLock(5.seconds) waits for the lock") {
        runBlocking {
            val name = fresh("timed-lock")
            val la = a.lock(name)
            val first = la.lock()
            val waiter = async { b.lock(name).tryLock(5.seconds) }
            eventually { la.queueLength() == 1 }
            la.unlock(first)
            val second = waiter.await().shouldNotBeNull()
            second.fencingToken shouldBeGreaterThan first.fencingToken
            la.unlock(second)
            la.isLocked() shouldBe false
        }
    }

    test("configuredPermits creates; totalPermits() is the server's; the Lease's properties are record-style from Java") {
        val s = a.semaphore(fresh("total"), 7)
        s.configuredPermits shouldBe 7
        runBlocking { s.totalPermits() } shouldBe 7
        val getters = Lease::class.java.methods.map { it.name }.toSet()
        for (name in listOf("id", "permits", "fencingToken", "semaphoreName")) {
            (name in getters) shouldBe true
            ("get" + name.replaceFirstChar { it.uppercase() } in getters) shouldBe false
        }
    }

    test("DistributedConfig takes named arguments only: its public constructor starts with a vararg that nothing can fill") {
        // DistributedConfig(30.seconds, 10.seconds) does not compile (a Duration is not a NamedArgumentsOnly).
        val marker = DistributedConfig.NamedArgumentsOnly::class.java
        marker.constructors.filter { Modifier.isPublic(it.modifiers) } shouldBe emptyList()
        val withDurations = DistributedConfig::class.java.constructors.filter { it.parameterCount > 0 }
        withDurations.isEmpty() shouldBe false
        for (c in withDurations) c.parameterTypes[0] shouldBe java.lang.reflect.Array.newInstance(marker, 0).javaClass
        val config = DistributedConfig(leaseTime = 3.seconds, heartbeatInterval = 500.milliseconds)
        config.leaseTime shouldBe 3.seconds
        config.renewInterval shouldBe 1.seconds // a third of the lease, by default
        config.waiterTimeToLive shouldBe 10.seconds
        config.heartbeatInterval shouldBe 500.milliseconds
    }

    test("the Java withers: an interval left at its default follows its time; one that was set stays") {
        val derived = DistributedConfig().withLeaseTime(java.time.Duration.ofMillis(300))
        derived.leaseTime shouldBe 300.milliseconds
        derived.renewInterval shouldBe 100.milliseconds
        val set = DistributedConfig().withRenewInterval(java.time.Duration.ofSeconds(5)).withLeaseTime(java.time.Duration.ofSeconds(60))
        set.renewInterval shouldBe 5.seconds
        val ttl = DistributedConfig().withWaiterTimeToLive(java.time.Duration.ofSeconds(1))
        ttl.heartbeatInterval shouldBe 200.milliseconds
        ttl.withHeartbeatInterval(java.time.Duration.ofMillis(50)).heartbeatInterval shouldBe 50.milliseconds
        shouldThrow<IllegalArgumentException> { DistributedConfig().withRenewInterval(java.time.Duration.ofSeconds(40)) }
            .message shouldContain "was 40s"
        shouldThrow<IllegalArgumentException> {
            DistributedConfig().withRenewInterval(java.time.Duration.ofSeconds(5)).withLeaseTime(java.time.Duration.ofSeconds(2))
        }.message shouldContain "at most half of leaseTime (2s), so that a renewal that fails can be tried again before the lease ends; was 5s"
    }

    test("a handle configured with another total works with the server's total (R2): nothing fails, the total stands") {
        runBlocking {
            val name = fresh("other-total")
            val s = a.semaphore(name, 2)
            val held = s.acquire()
            val five = b.semaphore(name, 5)
            five.totalPermits() shouldBe 2
            val second = five.acquire()
            five.tryAcquire().shouldBeNull()
            shouldThrow<IllegalArgumentException> { five.acquire(3) }.message shouldContain "the total is 2"
            b.lock(name).tryLock(100.milliseconds).shouldBeNull()
            s.release(held)
            five.release(second)
            s.availablePermits() shouldBe 2
        }
    }

    test("a client's calls after close throw SemaphoreClosedException, not a Redis failure") {
        runBlocking {
            val client = RedisSemaphoreClient.connect(server.uri)
            val s = client.semaphore(fresh("closed-client"), 1)
            val lease = s.acquire()
            client.close()
            val e = shouldThrow<dev.semaphore.SemaphoreClosedException> { s.release(lease) }
            e.message shouldContain "was closed"
            shouldThrow<dev.semaphore.SemaphoreClosedException> { client.semaphore("another", 1) }
            a.semaphore(s.name, 1).availablePermits() shouldBe 0 // still held: until its lease expires
        }
    }
})
