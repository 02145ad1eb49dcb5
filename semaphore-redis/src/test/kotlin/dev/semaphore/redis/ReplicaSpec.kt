package dev.semaphore.redis

import dev.semaphore.distributed.*

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

/**
 * DistributedConfig.replicaAcks against a real replica (`redis-server --replicaof`): grants and
 * renewals wait for its acknowledgement (WAIT); a paused replica makes them fail without holding
 * anything; after a failover to the replica, every lease a caller got is there.
 */
class ReplicaSpec : FunSpec({
    val replicated = DistributedConfig(
        leaseTime = 2.seconds, renewInterval = 300.milliseconds,
        waiterTimeToLive = 3.seconds, heartbeatInterval = 100.milliseconds,
        replicaAcks = 1, replicaTimeout = 300.milliseconds,
    )

    /** Whether [server] has [lease] (head.lua: "id:permits" in lx) and a fencing counter at least at its token. */
    fun LocalRedisServer.has(name: String, lease: Lease): Boolean =
        reply("ZSCORE", redisKeys(name)[3], "${lease.id}:${lease.permits}").isNotEmpty() &&
            reply("HGET", redisKeys(name)[0], "t").single().toLong() >= lease.fencingToken

    suspend fun until(condition: suspend () -> Boolean) = withTimeout(20.seconds) { while (!condition()) delay(10) }

    /** Runs [block] with a master, its replica and two clients of the master (two JVMs), and closes them all. */
    fun replicated(block: suspend CoroutineScope.(LocalRedisServer, LocalRedisServer, RedisSemaphoreClient, RedisSemaphoreClient) -> Unit) =
        LocalRedisServer.start().use { master ->
            LocalRedisServer.startReplica(master).use { replica ->
                RedisSemaphoreClient.connect(master.uri).use { a ->
                    RedisSemaphoreClient.connect(master.uri).use { b -> runBlocking { block(master, replica, a, b) } }
                }
            }
        }

    test("replicaAcks = 1: a lease granted at once, one granted after waiting in line, and a tryAcquire are on the replica when their caller gets them") {
        replicated { _, replica, a, b ->
            val sa = a.semaphore("replicated", 1, replicated)
            val first = sa.acquire()
            replica.has("replicated", first) shouldBe true
            val waiter = async { b.semaphore("replicated", 1, replicated).acquire() }
            until { sa.queueLength() == 1 }
            sa.release(first)
            val second = withTimeout(10.seconds) { waiter.await() } // granted by a's release, confirmed by b
            replica.has("replicated", second) shouldBe true
            b.semaphore("replicated", 1, replicated).release(second)
            val third = sa.tryAcquire()!!
            replica.has("replicated", third) shouldBe true
            sa.renew(third)
            sa.release(third)
            sa.availablePermits() shouldBe 1
        }
    }

    test("replica paused (SIGSTOP): acquire, tryAcquire and a waiter's grant fail with NotReplicatedException and hold nothing; served again once it resumes") {
        replicated { _, replica, a, b ->
            val sa = a.semaphore("paused-replica", 2, replicated)
            val unreplicated = a.semaphore("paused-replica", 2) // replicaAcks = 0, the same line
            val held = unreplicated.acquire(2)
            val waiter = async { runCatching { b.semaphore("paused-replica", 2, replicated).acquire(1) } }
            until { sa.queueLength() == 1 }
            replica.pause(true)
            try {
                val started = TimeSource.Monotonic.markNow()
                unreplicated.release(held) // grants the waiter, which cannot get it confirmed
                val failed = withTimeout(10.seconds) { waiter.await() }.exceptionOrNull()
                (failed is NotReplicatedException) shouldBe true
                failed!!.message!! shouldContain "was handed back"
                sa.availablePermits() shouldBe 2 // handed back, not held
                sa.queueLength() shouldBe 0

                val e = shouldThrow<NotReplicatedException> { sa.acquire(1) }
                e.message!! shouldContain "not acknowledged by 1 replicas within 300ms"
                started.elapsedNow() shouldBeGreaterThan 600.milliseconds // two WAITs of 300 ms, at least
                shouldThrow<NotReplicatedException> { sa.tryAcquire(2) }
                sa.availablePermits() shouldBe 2
                sa.queueLength() shouldBe 0
            } finally {
                replica.pause(false)
            }
            val lease = sa.acquire(2)
            replica.has("paused-replica", lease) shouldBe true
            sa.release(lease)
        }
    }

    test("withPermit whose renewals are not acknowledged: the block is cancelled with LeaseLostException when the lease runs out") {
        replicated { _, replica, client, _ ->
            val semaphore = client.semaphore("unconfirmed-renewals", 1, replicated)
            var blockEnded = false
            val started = TimeSource.Monotonic.markNow()
            try {
                val e = shouldThrow<LeaseLostException> {
                    semaphore.withPermit {
                        replica.pause(true)
                        try {
                            delay(30.seconds)
                        } finally {
                            blockEnded = true
                        }
                    }
                }
                e.message!! shouldContain "expired before a renewal reached the server and 1 replicas"
            } finally {
                replica.pause(false)
            }
            blockEnded shouldBe true
            started.elapsedNow() shouldBeLessThan 10.seconds // the lease time (2 s), not the block's 30 s
        }
    }

    test("failover: the master killed, the replica promoted; the lease a caller got is there, and new grants get higher fencing tokens") {
        LocalRedisServer.start().use { master ->
            LocalRedisServer.startReplica(master).use { replica ->
                val config = DistributedConfig(leaseTime = 20.seconds, replicaAcks = 1, replicaTimeout = 1.seconds)
                val held = RedisSemaphoreClient.connect(master.uri).use { a -> runBlocking { a.semaphore("failover", 2, config).acquire(1) } }
                master.kill()
                replica.command("REPLICAOF", "NO", "ONE") shouldBe "+OK"
                RedisSemaphoreClient.connect(replica.uri).use { b ->
                    runBlocking {
                        val s = b.semaphore("failover", 2, DistributedConfig(leaseTime = 20.seconds))
                        s.availablePermits() shouldBe 1 // the lease survived the failover
                        val next = s.acquire(1)
                        next.fencingToken shouldBeGreaterThan held.fencingToken
                        s.tryAcquire(1) shouldBe null // both permits held: no over-admission
                        s.release(held)
                        s.release(next)
                        s.availablePermits() shouldBe 2
                    }
                }
            }
        }
    }

    test("a client connected to a replica (or to a master demoted by a failover): READONLY is a RedisUnavailableException, and nothing is written") {
        replicated { master, replica, _, _ ->
            RedisSemaphoreClient.connect(replica.uri).use { onReplica ->
                // Not now rather than no: a client still talking to a demoted master is told to try again, as while the
                // server is loading, until it reaches the new master.
                val e = shouldThrow<RedisUnavailableException> { onReplica.semaphore("on-replica", 1).tryAcquire() }
                e.message!! shouldContain "READONLY"
                (e.cause is io.lettuce.core.RedisCommandExecutionException) shouldBe true
            }
            master.reply("EXISTS", redisKeys("on-replica")[0]) shouldBe listOf("0")
        }
    }

    test("replicaAcks and replicaTimeout are checked, naming the bad value") {
        shouldThrow<IllegalArgumentException> { DistributedConfig(replicaAcks = -1) }.message shouldBe "replicaAcks must be 0 or more, was -1"
        shouldThrow<IllegalArgumentException> { DistributedConfig(replicaAcks = 1, replicaTimeout = 0.milliseconds) }.message shouldBe
            "replicaTimeout must be at least 1ms, was 0s"
        DistributedConfig().withReplicaAcks(2, java.time.Duration.ofMillis(250)).toString() shouldContain "replicaAcks=2, replicaTimeout=250ms"
    }
})
