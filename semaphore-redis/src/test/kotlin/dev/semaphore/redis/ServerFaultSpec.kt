package dev.semaphore.redis

import dev.semaphore.distributed.*

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

/** Faults of the server and of the connections: each test has its own redis-server. */
class ServerFaultSpec : FunSpec({
    val fast = DistributedConfig(
        leaseTime = 2.seconds, renewInterval = 300.milliseconds,
        waiterTimeToLive = 3.seconds, heartbeatInterval = 100.milliseconds,
    )

    suspend fun until(what: String, condition: suspend () -> Boolean) =
        withTimeout(20.seconds) { while (!condition()) delay(10) }

    test("CLIENT KILL of every connection, commands and pub/sub: Lettuce reconnects and the waiter is served; nothing lost") {
        LocalRedisServer.start().use { server ->
            val a = RedisSemaphoreClient.connect(server.uri)
            val b = RedisSemaphoreClient.connect(server.uri)
            try {
                runBlocking {
                    val sa = a.semaphore("killed-connections", 1, fast)
                    val held = sa.acquire()
                    val waiter = async { b.semaphore("killed-connections", 1, fast).acquire() }
                    until("queued") { sa.queueLength() == 1 }
                    server.command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") shouldStartWith ":"
                    server.command("CLIENT", "KILL", "TYPE", "pubsub") shouldStartWith ":"
                    sa.release(held) // reconnects first
                    val lease = withTimeout(10.seconds) { waiter.await() }
                    lease.fencingToken shouldBeGreaterThan held.fencingToken
                    sa.availablePermits() shouldBe 0
                    b.semaphore("killed-connections", 1, fast).release(lease)
                    sa.availablePermits() shouldBe 1
                    sa.queueLength() shouldBe 0
                }
            } finally {
                a.close()
                b.close()
            }
        }
    }

    test("server killed and restarted with AOF: the lease and the queued request survive; nothing lost or duplicated") {
        LocalRedisServer.start(appendOnly = true).use { server ->
            val a = RedisSemaphoreClient.connect(server.uri)
            val b = RedisSemaphoreClient.connect(server.uri)
            try {
                runBlocking {
                    val config = DistributedConfig(leaseTime = 20.seconds, waiterTimeToLive = 10.seconds, heartbeatInterval = 100.milliseconds)
                    val sa = a.semaphore("aof", 2, config)
                    val held = sa.acquire(2)
                    val waiter = async { b.semaphore("aof", 2, config).acquire(1) }
                    until("queued") { sa.queueLength() == 1 }
                    server.restart() // kill -9, then a new process on the same port and directory
                    sa.queueLength() shouldBe 1 // the script cache was empty: reloaded (NOSCRIPT)
                    sa.availablePermits() shouldBe 0
                    sa.release(held)
                    val lease = withTimeout(10.seconds) { waiter.await() }
                    lease.fencingToken shouldBeGreaterThan held.fencingToken
                    sa.availablePermits() shouldBe 1
                    b.semaphore("aof", 2, config).release(lease)
                    sa.availablePermits() shouldBe 2
                    shouldThrow<IllegalStateException> { sa.release(held) } // released once, not twice
                }
            } finally {
                a.close()
                b.close()
            }
        }
    }

    test("server restarted without persistence: the holder is told (LeaseLostException), the waiter too; later tokens still increase") {
        LocalRedisServer.start(appendOnly = false).use { server ->
            val a = RedisSemaphoreClient.connect(server.uri)
            val b = RedisSemaphoreClient.connect(server.uri)
            try {
                runBlocking {
                    val sa = a.semaphore("volatile", 1, fast)
                    var token = 0L
                    val holder = async {
                        runCatching { sa.withPermit { lease -> token = lease.fencingToken; awaitCancellation() } }
                    }
                    until("held") { sa.availablePermits() == 0 }
                    val waiter = async { runCatching { b.semaphore("volatile", 1, fast).acquire() } }
                    until("queued") { sa.queueLength() == 1 }
                    server.restart()
                    val holderOutcome = withTimeout(10.seconds) { holder.await() }
                    holderOutcome.exceptionOrNull()!!.let {
                        (it is LeaseLostException) shouldBe true
                        it.message!! shouldContain "restarted without persistence"
                    }
                    val waiterOutcome = withTimeout(10.seconds) { waiter.await() }
                    (waiterOutcome.exceptionOrNull() is QueuedRequestLostException) shouldBe true
                    val after = sa.acquire()
                    after.fencingToken shouldBeGreaterThan token
                    sa.release(after)
                    sa.availablePermits() shouldBe 1
                }
            } finally {
                a.close()
                b.close()
            }
        }
    }

    test("server gone while a withPermit block runs: the block is cancelled with LeaseLostException once its lease must have ended") {
        LocalRedisServer.start().use { server ->
            val a = RedisSemaphoreClient.connect(server.uri)
            try {
                runBlocking {
                    val config = DistributedConfig(leaseTime = 1.seconds, renewInterval = 300.milliseconds)
                    val s = a.semaphore("gone", 1, config)
                    var blockCancelled = false
                    val holder = async {
                        runCatching {
                            s.withPermit {
                                try {
                                    awaitCancellation()
                                } finally {
                                    blockCancelled = true
                                }
                            }
                        }
                    }
                    until("held") { s.availablePermits() == 0 }
                    val killedAt = kotlin.time.TimeSource.Monotonic.markNow()
                    server.kill() // and not restarted: renewals get no answer
                    val outcome = withTimeout(10.seconds) { holder.await() }
                    val noticed = killedAt.elapsedNow()
                    (outcome.exceptionOrNull() is LeaseLostException) shouldBe true
                    outcome.exceptionOrNull()!!.message!! shouldContain "before a renewal reached the server"
                    blockCancelled shouldBe true
                    noticed shouldBeLessThan 1.seconds + 1.seconds // the lease time, measured here, plus slack (Lettuce would wait 60 s)
                    println("server gone: the holder was told ${noticed.inWholeMilliseconds} ms after the kill (lease 1000 ms)")
                    server.restart() // so that closing the client does not wait for a server that is gone
                }
            } finally {
                a.close()
            }
        }
    }

    test("server down: each call fails with RedisUnavailableException (Lettuce's timeout as cause); after a restart (AOF) the same lease is released") {
        LocalRedisServer.start(appendOnly = true).use { server ->
            val a = RedisSemaphoreClient.connect("${server.uri}?timeout=1s")
            try {
                runBlocking {
                    val s = a.semaphore("down", 2, DistributedConfig(leaseTime = 60.seconds))
                    val held = s.acquire()
                    server.kill()
                    for ((what, call) in listOf<Pair<String, suspend () -> Any?>>(
                        "tryAcquire" to { s.tryAcquire() },
                        "tryAcquire(5.seconds)" to { s.tryAcquire(5.seconds) },
                        "availablePermits" to { s.availablePermits() },
                        "renew" to { s.renew(held) },
                        "release" to { s.release(held) },
                    )) {
                        val e = withContext(Dispatchers.IO) { runCatching { call() }.exceptionOrNull() }
                        check(e is RedisUnavailableException) { "$what: expected RedisUnavailableException, got $e" }
                        (e.cause is io.lettuce.core.RedisCommandTimeoutException) shouldBe true
                        e.message!! shouldContain "127.0.0.1:${server.port}"
                    }
                    server.restart()
                    // The failed release left the lease held, and releasable: retry, as a caller would,
                    // until Lettuce has reconnected (its reconnect delay backs off while the server is down).
                    withTimeout(30.seconds) {
                        while (runCatching { s.release(held) }.onFailure { if (it !is RedisUnavailableException) throw it }.isFailure) delay(200)
                    }
                    s.availablePermits() shouldBe 2
                }
            } finally {
                a.close()
            }
        }
    }

    test("withPermit renews through RedisUnavailableException: the block is cancelled only once its lease must have ended") {
        LocalRedisServer.start().use { server ->
            val a = RedisSemaphoreClient.connect("${server.uri}?timeout=200ms") // renewals fail fast, and are retried
            try {
                runBlocking {
                    val s = a.semaphore("unavailable-renewals", 1, DistributedConfig(leaseTime = 1500.milliseconds, renewInterval = 300.milliseconds))
                    var lastRenewedLease: kotlin.time.Duration = kotlin.time.Duration.ZERO
                    val holder = async {
                        runCatching { s.withPermit { lease -> while (true) { lastRenewedLease = lease.remaining; delay(20) } } }
                    }
                    until("held") { s.availablePermits() == 0 }
                    delay(400) // at least one renewal went through
                    val killedAt = TimeSource.Monotonic.markNow()
                    val leftAtKill = lastRenewedLease
                    server.kill()
                    val outcome = withTimeout(10.seconds) { holder.await() }
                    val noticed = killedAt.elapsedNow()
                    val lost = outcome.exceptionOrNull()
                    check(lost is LeaseLostException) { "expected LeaseLostException, got $lost" }
                    lost.message!! shouldContain "before a renewal reached the server"
                    check(lost.cause is RedisUnavailableException) { "the last renewal's failure: ${lost.cause}" }
                    (lost.cause!!.cause is io.lettuce.core.RedisCommandTimeoutException) shouldBe true // Lettuce's, through the recovered copies
                    // Not before the lease, as last renewed, ran out: the renewal loop went on through the failures.
                    noticed shouldBeGreaterThan leftAtKill - 100.milliseconds
                    noticed shouldBeLessThan 1500.milliseconds + 1.seconds
                    println("renewals unavailable: the holder was told ${noticed.inWholeMilliseconds} ms after the kill ($leftAtKill of lease left)")
                }
            } finally {
                a.close()
            }
        }
    }

    test("DEBUG SLEEP past a lease: the holder is told when the server wakes, and the waiter gets a higher token") {
        LocalRedisServer.start().use { server ->
            val a = RedisSemaphoreClient.connect(server.uri)
            val b = RedisSemaphoreClient.connect(server.uri)
            try {
                runBlocking {
                    val config = DistributedConfig(leaseTime = 1.seconds, renewInterval = 300.milliseconds, waiterTimeToLive = 10.seconds, heartbeatInterval = 100.milliseconds)
                    val sa = a.semaphore("sleep", 1, config)
                    var token = 0L
                    val holder = async {
                        runCatching { sa.withPermit { lease -> token = lease.fencingToken; awaitCancellation() } }
                    }
                    until("held") { sa.availablePermits() == 0 }
                    val waiter = async { b.semaphore("sleep", 1, config).acquire() }
                    until("queued") { sa.queueLength() == 1 }
                    launch(Dispatchers.IO) { server.command("DEBUG", "SLEEP", "2.5") shouldBe "+OK" }
                    val holderOutcome = withTimeout(20.seconds) { holder.await() }
                    (holderOutcome.exceptionOrNull() is LeaseLostException) shouldBe true
                    val lease = withTimeout(20.seconds) { waiter.await() }
                    lease.fencingToken shouldBeGreaterThan token
                    b.semaphore("sleep", 1, config).release(lease)
                    withContext(Dispatchers.IO) { sa.availablePermits() } shouldBe 1
                }
            } finally {
                a.close()
                b.close()
            }
        }
    }
})
