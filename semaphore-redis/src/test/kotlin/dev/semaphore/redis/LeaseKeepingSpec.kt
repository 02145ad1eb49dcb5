package dev.semaphore.redis

import dev.semaphore.distributed.*

import dev.semaphore.distributed.async.AsyncDistributedSemaphore
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeGreaterThanOrEqualTo
import io.kotest.matchers.comparables.shouldBeLessThan
import io.kotest.matchers.comparables.shouldBeLessThanOrEqualTo
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource
import kotlin.time.times

/**
 * Leases kept by their client: renewed in the background until released (autoRenew), in this JVM and
 * in another; freed about one lease time after their holder is killed; fixed leases (autoRenew off)
 * that tell their holder when they run out; and a lease lost while renewed, reported to awaitEnd and
 * to withPermit's block.
 */
class LeaseKeepingSpec : FunSpec({
    val server = LocalRedisServer.start()
    val a = RedisSemaphoreClient.connect(server.uri)
    val b = RedisSemaphoreClient.connect(server.uri)
    // The worker JVMs of the last two tests start now, while the first ones run: each takes its lease
    // with acquire() as soon as it is up and keeps it (renewed by its client) until told or killed.
    val renewedWorkerMs = 1000L
    val renewedWorker = WorkerProcess("take", server.uri, "renewed-worker", "1", "1", "$renewedWorkerMs", "stdin")
    val killedLeaseMs = 1500L
    val killedWorker = WorkerProcess("take", server.uri, "killed-worker", "2", "2", "$killedLeaseMs", "forever")
    afterSpec {
        renewedWorker.close()
        killedWorker.close()
        a.close()
        b.close()
        server.close()
    }
    val names = AtomicInteger()
    fun fresh(prefix: String) = "$prefix-${names.incrementAndGet()}"

    test("a fixed lease (autoRenew = false) is not renewed: awaitEnd throws LeaseLostException just after leaseTime; a renewal by hand moves its end") {
        runBlocking {
            val name = fresh("fixed")
            val leaseTime = 600.milliseconds
            val fixed = DistributedConfig(leaseTime = leaseTime, autoRenew = false, waiterTimeToLive = 2.seconds, heartbeatInterval = 100.milliseconds)
            val s = a.semaphore(name, 2, fixed)
            val other = b.semaphore(name, 2, fixed)
            val before = TimeSource.Monotonic.markNow()
            val lease = s.acquire()
            val expiry = server.reply("ZSCORE", redisKeys(name)[3], "${lease.id}:${lease.permits}").single().toLong()
            val lost = shouldThrow<LeaseLostException> { withTimeout(5.seconds) { lease.awaitEnd() } }
            val told = before.elapsedNow()
            println("fixed lease: told ${told.inWholeMilliseconds} ms after the request (lease $leaseTime)")
            lost.message!! shouldContain "fixed lease time"
            told shouldBeGreaterThanOrEqualTo leaseTime
            told shouldBeLessThan leaseTime + 1.seconds
            lease.isLost shouldBe true
            // Nothing renewed it: its expiry on the server never moved, and its permit is free again.
            server.reply("ZSCORE", redisKeys(name)[3], "${lease.id}:${lease.permits}").let { it.isEmpty() || it.single().toLong() == expiry } shouldBe true
            val taken = other.tryAcquire(5.seconds, 2).shouldNotBeNull() // the server ends it at its own count, no earlier than ours (R4)
            shouldThrow<LeaseLostException> { s.release(lease) }
            other.release(taken)

            // Renewed by hand, a fixed lease lasts; its holder is told a lease time after the last renewal.
            val longer = a.semaphore(name, 2, DistributedConfig(leaseTime = 1.seconds, autoRenew = false))
            val renewed = longer.acquire()
            repeat(5) {
                delay(300)
                longer.renew(renewed)
            }
            val lastRenewal = TimeSource.Monotonic.markNow()
            renewed.isLost shouldBe false // 1.5 s after its grant, longer than its lease time
            other.tryAcquire(2).shouldBeNull()
            shouldThrow<LeaseLostException> { withTimeout(5.seconds) { renewed.awaitEnd() } }
            lastRenewal.elapsedNow() shouldBeLessThan 1.seconds + 1.seconds

            // The Java form: DistributedPermit.ended() fails with the same LeaseLostException.
            val permit = AsyncDistributedSemaphore.of(s).acquire().join()
            val ended = shouldThrow<ExecutionException> { permit.ended().get(5, TimeUnit.SECONDS) }
            (ended.cause is LeaseLostException) shouldBe true
            ended.cause!!.message!! shouldContain "fixed lease time"
            shouldThrow<LeaseLostException> { permit.close() }
            awaitCondition("both permits back (the server ends a lease no earlier than its client counts)") { other.availablePermits() == 2 }
        }
    }

    test("a lease lost while renewed (its entry deleted on the server) is reported within about one renewInterval: awaitEnd throws, withPermit cancels its block") {
        runBlocking {
            val name = fresh("lost")
            val renewInterval = 1.seconds
            // A long lease with a short renewal: only a renewal can find the loss this soon, not the expiry.
            val config = DistributedConfig(leaseTime = 6.seconds, renewInterval = renewInterval)
            val s = a.semaphore(name, 3, config)
            val lease = s.acquire()
            server.reply("ZREM", redisKeys(name)[3], "${lease.id}:${lease.permits}") shouldBe listOf("1") // its entry (head.lua)
            val deletedAt = TimeSource.Monotonic.markNow()
            val lost = shouldThrow<LeaseLostException> { withTimeout(10.seconds) { lease.awaitEnd() } }
            val told = deletedAt.elapsedNow()
            println("lost lease: awaitEnd threw ${told.inWholeMilliseconds} ms after the deletion (renewInterval $renewInterval)")
            lost.message!! shouldContain "can no longer be renewed"
            told shouldBeLessThan renewInterval + 1500.milliseconds
            lease.isLost shouldBe true
            shouldThrow<LeaseLostException> { s.renew(lease) }

            var cancelled = false
            var deletedInBlock: TimeSource.Monotonic.ValueTimeMark? = null
            val e = shouldThrow<LeaseLostException> {
                withTimeout(20.seconds) {
                    s.withPermit { held ->
                        server.reply("ZREM", redisKeys(name)[3], "${held.id}:${held.permits}") shouldBe listOf("1")
                        deletedInBlock = TimeSource.Monotonic.markNow()
                        try {
                            delay(15.seconds)
                        } catch (c: CancellationException) {
                            cancelled = true
                            throw c
                        }
                    }
                }
            }
            val blockTold = deletedInBlock.shouldNotBeNull().elapsedNow()
            println("lost lease in withPermit: the block was cancelled ${blockTold.inWholeMilliseconds} ms after the deletion")
            e.message!! shouldContain "can no longer be renewed"
            cancelled shouldBe true
            blockTold shouldBeLessThan renewInterval + 1500.milliseconds
        }
    }
    test("a lease from acquire() (not withPermit) outlives 5 lease times: renewed, renewable, not lost, and nobody else got in") {
        runBlocking {
            val name = fresh("renewed")
            val config = DistributedConfig(leaseTime = 600.milliseconds, waiterTimeToLive = 2.seconds, heartbeatInterval = 200.milliseconds)
            val s = a.semaphore(name, 1, config) as SemaphoreHandle
            val other = b.semaphore(name, 1, config)
            val lease = s.acquire()
            val start = TimeSource.Monotonic.markNow()
            var tries = 0
            while (start.elapsedNow() < 5 * config.leaseTime) {
                // Each try runs a script that first ends every lease past its expiry (R5): an unrenewed
                // lease would be ended here and its permit granted.
                other.tryAcquire().shouldBeNull()
                lease.isLost shouldBe false
                lease.remaining.isPositive() shouldBe true
                tries++
                delay(50)
            }
            tries shouldBeGreaterThan 10
            // On the server, too, the lease is live: its expiry is in the future.
            val expiry = server.reply("ZSCORE", redisKeys(name)[3], "${lease.id}:${lease.permits}").single().toLong()
            expiry shouldBeGreaterThan server.timeMs()
            s.renew(lease) // a renewal by hand works beside the client's own
            lease.remaining shouldBeGreaterThan 0.milliseconds
            lease.remaining shouldBeLessThanOrEqualTo config.leaseTime
            // Nobody was granted anything while it was held: the last token at its release is its own.
            s.releaseReportingLastToken(lease) shouldBe lease.fencingToken
            withTimeout(1.seconds) { lease.awaitEnd() } // ended normally: released, not lost
            lease.isLost shouldBe false
            other.availablePermits() shouldBe 1
        }
    }

    test("across processes: a worker JVM holds by acquire() for 5 lease times while this JVM tries; the tokens do not overlap") {
        val worker = renewedWorker
        val (token, permits, total) = worker.next("HELD ").split(' ').drop(1).map { it.toLong() }
        permits shouldBe 1L
        total shouldBe 1L
        runBlocking {
            val s = a.semaphore("renewed-worker", 1, DistributedConfig(leaseTime = 5.seconds)) as SemaphoreHandle
            val start = TimeSource.Monotonic.markNow()
            var refused = 0
            while (start.elapsedNow() < (5 * renewedWorkerMs).milliseconds) {
                s.tryAcquire().shouldBeNull() // each try would first end the worker's lease if it had expired (R5)
                refused++
                delay(50)
            }
            worker.send("release")
            // The worker kept its lease all along (its own checks every 50 ms, then a renewal by hand and
            // the release, any of which fails if the lease was lost) ...
            val (releasedToken, lastAtRelease) = worker.next("").also { check(it.startsWith("RELEASED ")) { it } }.split(' ').drop(1).map { it.toLong() }
            releasedToken shouldBe token
            // ... nothing was granted between its grant and its release, and ours comes after.
            lastAtRelease shouldBe token
            val mine = s.tryAcquire().shouldNotBeNull()
            mine.fencingToken shouldBeGreaterThan token
            refused shouldBeGreaterThan 20
            println("worker held token $token for over 5 lease times of $renewedWorkerMs ms; this JVM was refused $refused times, then got ${mine.fencingToken}")
            s.releaseReportingLastToken(mine) shouldBe mine.fencingToken
        }
    }

    test("kill -9 of a holder that used acquire(): its permits come back after about one lease time, not before its lease's expiry; the next token is higher") {
        val worker = killedWorker
        val name = "killed-worker"
        val renewMs = killedLeaseMs / 3
        val heartbeat = 100.milliseconds
        val token = worker.next("HELD ").split(' ')[1].toLong()
        runBlocking {
            val s = a.semaphore(name, 2, DistributedConfig(leaseTime = 5.seconds, waiterTimeToLive = 2.seconds, heartbeatInterval = heartbeat))
            val next = async { s.acquire(2) }
            awaitCondition("this JVM's request queued") { s.queueLength() == 1 }
            delay(killedLeaseMs + 500) // longer than its lease: the worker keeps it by renewing it
            next.isActive shouldBe true
            // Its lease's expiry on the server, by the server's clock, right before the kill.
            val (leaseId, expiry) = server.reply("ZRANGE", redisKeys(name)[3], "0", "0", "WITHSCORES")
            check(leaseId != "~") { "no lease on the server" }
            val left = (expiry.toLong() - server.timeMs()).milliseconds
            val killedAt = TimeSource.Monotonic.markNow()
            worker.process.destroyForcibly() // kill -9
            val lease = withTimeout(20.seconds) { next.await() }
            val waited = killedAt.elapsedNow()
            println("kill -9: the permits came back ${waited.inWholeMilliseconds} ms after the kill (lease $killedLeaseMs ms, ${left.inWholeMilliseconds} ms of it left at the kill)")
            check(worker.process.waitFor(10, TimeUnit.SECONDS)) { "the worker is still alive" }
            left.isPositive() shouldBe true
            left shouldBeLessThanOrEqualTo killedLeaseMs.milliseconds
            waited shouldBeGreaterThanOrEqualTo left - 100.milliseconds // not before the expiry of its last renewal
            waited shouldBeGreaterThan (killedLeaseMs - renewMs - 500).milliseconds // about a lease time: it had renewed shortly before
            waited shouldBeLessThan killedLeaseMs.milliseconds + 3 * heartbeat + 2.seconds
            lease.fencingToken shouldBeGreaterThan token
            lease.permits shouldBe 2
            s.release(lease)
            s.availablePermits() shouldBe 2
        }
    }
})
