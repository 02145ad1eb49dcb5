package dev.semaphore.redis

import dev.semaphore.distributed.*

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlin.time.Duration.Companion.seconds

/**
 * The server's rules where the line is long or dead (R3, R5, R6), at the level of the scripts: requests made with raw
 * script calls, as clients of other processes would make them, and the server's answers read back.
 */
class LineBoundsSpec : FunSpec({
    val redis = TwoClients()
    afterSpec { redis.close() }
    val (_, a, b) = redis
    val fresh = redis::fresh

    /** Queues the request [id] for [permits] of [name] with a heartbeat deadline of [ttlMs]; grants are not published. */
    suspend fun queue(name: String, id: String, permits: Int = 1, ttlMs: Int = 60_000, total: Int = 1) {
        (a.raw(Script.acquire, name, id, "$permits", "60000", "$ttlMs", "queue", total = total, publish = "EXISTS") as List<*>)[0] shouldBe "Q"
    }

    /** The places of [ids] by one heartbeat (which also grants heads an earlier call left over). */
    suspend fun places(name: String, vararg ids: String, total: Int = 1): List<String> =
        (a.raw(Script.heartbeat, name, "-", "60000", *ids, total = total, publish = "EXISTS") as List<*>).map { (it as List<*>)[0] as String }

    test("R1: the expiry of a semaphore's hash is its field e after every kind of script (the acquire's fast path reads the clock as e minus PTTL)") {
        runBlocking {
            val name = fresh("clock")
            val config = DistributedConfig(idleExpiry = 2.seconds, leaseTime = 5.seconds, waiterTimeToLive = 5.seconds)
            val s = b.semaphore(name, 2, config)
            val key = redisKeys(name)[0]
            // e, and the expiry as the server's clock plus PTTL, read in one script (one instant of the server's).
            val read = "local t = redis.call('TIME') return { redis.call('HGET', KEYS[1], 'e'), " +
                "tostring(t[1] * 1000 + math.floor(t[2] / 1000) + redis.call('PTTL', KEYS[1])) }"
            fun check(after: String) {
                val (e, expiry) = redis.server.reply("EVAL", read, "1", key).map { it.toLong() }
                withClue("$after: e $e, expiry $expiry") { (kotlin.math.abs(expiry - e) <= 1) shouldBe true }
            }
            val held = s.acquire(2).also { check("a grant at once") }
            val waiter = async { s.acquire() }
            awaitCondition("queued") { s.queueLength() == 1 }
            check("a request queued")
            delay(300)
            s.renew(held).also { check("a renewal") }
            s.release(held)
            val granted = waiter.await().also { check("a release that granted the line") }
            s.addPermits(1).also { check("a resize") }
            s.availablePermits().also { check("a state read") }
            val fast = s.tryAcquire().shouldNotBeNull().also { check("a try, granted at once") }
            s.release(fast)
            s.release(granted).also { check("a release, fast path") }
        }
    }

    test("R3, R5: one script settles at most 100 heads of the line; the heads that still fit are granted by the next heartbeat or request") {
        runBlocking {
            val name = fresh("long-line")
            val holder = b.semaphore(name, 1).acquire()
            val ids = (1..250).map { "r$it" }
            for (id in ids) queue(name, id)
            val s = b.semaphore(name, 1)
            s.queueLength() shouldBe 250
            s.addPermits(1000) // a resize grants: 100 heads at most
            s.queueLength() shouldBe 150
            places(name, "r1", "r101", "r250") shouldBe listOf("G", "G", "Q") // this heartbeat granted r101..r200
            s.queueLength() shouldBe 50
            // A new request first grants the 50 left, and then, nobody being ahead of it any more, is granted itself.
            (a.raw(Script.acquire, name, "late", "1", "60000", "60000", "queue", publish = "EXISTS") as List<*>)[0] shouldBe "G"
            s.queueLength() shouldBe 0
            places(name, "r250", "late") shouldBe listOf("G", "G")
            s.inspect(0).holderCount shouldBe 252
            b.semaphore(name, 1).release(holder)
        }
    }

    test("R5: a dead request at the head of the line is dropped, never granted, even beyond the purge's 100 a call") {
        runBlocking {
            val name = fresh("dead-heads")
            val holder = b.semaphore(name, 1).acquire()
            for (i in 1..150) queue(name, "dead$i", ttlMs = 50) // their heartbeats stop: they die after 50 ms
            queue(name, "live")
            delay(200)
            b.semaphore(name, 1).release(holder) // the purge drops 100 dead ones; grant() must drop the other 50
            places(name, "live") shouldBe listOf("G")
            val seen = b.semaphore(name, 1).inspect()
            seen.holders.single().leaseId shouldBe "live"
            seen.queueLength shouldBe 0
            a.raw(Script.release, name, "live", "1", "-") shouldBe 0L
        }
    }

    test("R3, R6: a request that a reduction made too large is told so at every ask (a repeated heartbeat gets it again), until its client withdraws it") {
        runBlocking {
            val name = fresh("too-large")
            val s = b.semaphore(name, 2)
            val holder = s.acquire(2)
            queue(name, "big", permits = 2, total = 2)
            s.reducePermits(1)
            s.release(holder) // the head, 2 permits of a total of 1, fails
            places(name, "big", total = 2) shouldBe listOf("E")
            places(name, "big", total = 2) shouldBe listOf("E") // a repeat gets the same answer
            val withdrawn = a.raw(Script.cancel, name, "big", "2", "1", total = 2) as List<*>
            withdrawn[0] shouldBe "E"
            places(name, "big", total = 2) shouldBe listOf("U") // gone, with its field and deadline
            // Nothing of it is left: the hash has its 7 counters (f t n e queued seq resized) and "~", each zset only its "~".
            redis.server.keySizes(name) shouldBe listOf(8, 1, 1, 1)
        }
    }
})
