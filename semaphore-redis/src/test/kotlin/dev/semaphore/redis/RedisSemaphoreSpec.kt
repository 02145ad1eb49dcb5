package dev.semaphore.redis

import dev.semaphore.distributed.*

import dev.semaphore.SemaphoreClosedException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import io.lettuce.core.ScriptOutputType
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import java.util.Collections
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** The semantics of DistributedSemaphore and DistributedLock on one real server, with two clients standing for two JVMs. */
class RedisSemaphoreSpec : FunSpec({
    val redis = TwoClients()
    afterSpec { redis.close() }
    val (server, a, b) = redis
    val fresh = redis::fresh
    val fast = DistributedConfig(leaseTime = 2.seconds, waiterTimeToLive = 2.seconds, heartbeatInterval = 200.milliseconds)

    /** Waits (real time, bounded) until [condition] holds. */
    suspend fun eventually(what: String, condition: suspend () -> Boolean) = withTimeout(20.seconds) {
        while (!condition()) delay(10)
    }.also { println("ok: $what") }

    test("uncontended acquire and release; fencing tokens strictly increase across grants and clients") {
        runBlocking {
            val name = fresh("basic")
            val sa = a.semaphore(name, 2)
            val sb = b.semaphore(name, 2)
            val l1 = sa.acquire()
            val l2 = sb.acquire()
            sa.availablePermits() shouldBe 0
            sb.release(l2)
            sa.release(l1)
            val l3 = sb.acquire(2)
            l3.permits shouldBe 2
            l2.fencingToken shouldBeGreaterThan l1.fencingToken
            l3.fencingToken shouldBeGreaterThan l2.fencingToken
            sb.release(l3)
            sa.availablePermits() shouldBe 2
            sa.queueLength() shouldBe 0
        }
    }

    test("one FIFO line across clients: waiters are served in the order they asked") {
        runBlocking {
            val name = fresh("fifo")
            val handles = listOf(a.semaphore(name, 1), b.semaphore(name, 1))
            val first = handles[0].acquire()
            val order = Collections.synchronizedList(mutableListOf<Int>())
            coroutineScope {
                for (i in 0 until 6) {
                    launch {
                        handles[i % 2].withPermit { order += i }
                    }
                    eventually("waiter $i queued") { handles[0].queueLength() == i + 1 }
                }
                handles[0].release(first)
            }
            order shouldContainExactly (0 until 6).toList()
            handles[1].availablePermits() shouldBe 1
        }
    }

    test("a large request at the head is served before smaller ones behind it (no barging, no starvation)") {
        runBlocking {
            val name = fresh("head")
            val s = a.semaphore(name, 3)
            val other = b.semaphore(name, 3)
            val held = s.acquire(2)
            val big = async { other.acquire(2) }
            eventually("the request for 2 queued") { s.queueLength() == 1 }
            s.availablePermits() shouldBe 1
            s.tryAcquire(1).shouldBeNull() // 1 is free, but someone is ahead
            val small = async { s.acquire(1) }
            eventually("the request for 1 queued") { s.queueLength() == 2 }
            s.release(held)
            val bigLease = big.await()
            val smallLease = small.await() // 3 = 2 + 1: both fit, in order
            smallLease.fencingToken shouldBeGreaterThan bigLease.fencingToken
            other.release(bigLease)
            s.release(smallLease)
            s.availablePermits() shouldBe 3
        }
    }

    test("a timed-out request leaves the line with nothing held; a cancelled one too") {
        runBlocking {
            val name = fresh("timeout")
            val s = a.semaphore(name, 1, fast)
            val held = s.acquire()
            b.semaphore(name, 1, fast).tryAcquire(300.milliseconds).shouldBeNull()
            s.queueLength() shouldBe 0
            val waiting = launch(start = CoroutineStart.UNDISPATCHED) { b.semaphore(name, 1, fast).acquire() }
            eventually("queued") { s.queueLength() == 1 }
            waiting.cancelAndJoin()
            s.queueLength() shouldBe 0
            s.release(held)
            s.availablePermits() shouldBe 1
        }
    }

    test("a fixed lease (autoRenew off) ends at expiry; the next gets a higher token; its holder is told, and its late release is refused") {
        runBlocking {
            val name = fresh("expiry")
            val short = DistributedConfig(leaseTime = 500.milliseconds, autoRenew = false, waiterTimeToLive = 2.seconds, heartbeatInterval = 100.milliseconds)
            val s = a.semaphore(name, 1, short)
            val stale = s.acquire()
            val next = b.semaphore(name, 1, short).acquire() // served by a heartbeat's purge after 500 ms
            next.fencingToken shouldBeGreaterThan stale.fencingToken
            shouldThrow<LeaseLostException> { withTimeout(2.seconds) { stale.awaitEnd() } }.message!! shouldContain "expired"
            stale.isLost shouldBe true
            shouldThrow<LeaseLostException> { s.release(stale) }.message!! shouldContain "expired"
            shouldThrow<LeaseLostException> { s.renew(stale) }
            b.semaphore(name, 1, short).release(next)
            s.availablePermits() shouldBe 1
        }
    }

    test("what is due: an expired fixed lease's release is refused; an acquire that fits needs no purge, one that does not fit purges first") {
        runBlocking {
            val name = fresh("fast-path-expiry")
            val short = DistributedConfig(leaseTime = 300.milliseconds, autoRenew = false, waiterTimeToLive = 2.seconds, heartbeatInterval = 100.milliseconds)
            val s = a.semaphore(name, 2, short)
            val expired = s.acquire()
            delay(600) // nobody queued and no other call: only the next script can see the expiry
            shouldThrow<LeaseLostException> { s.release(expired) }.message!! shouldContain "expired"

            val old = s.acquire()
            delay(600)
            // Fits even with the old lease still counted: the fast path grants it without a purge (it needs
            // none of the old lease's permits, R5), and the old lease is still on the server.
            val fresh = s.acquire()
            server.reply("ZSCORE", redisKeys(name)[3], "${old.id}:1").size shouldBe 1
            // A request that does not fit purges first, and is granted the old lease's permit.
            val more = s.tryAcquire().shouldNotBeNull()
            server.reply("ZSCORE", redisKeys(name)[3], "${old.id}:1") shouldBe emptyList() // ended, and no record kept (R6)
            s.release(more)
            s.availablePermits() shouldBe 1
            s.release(fresh)
        }
    }

    test("withPermit renews the lease while its block outlives the lease time, and nobody else gets in") {
        runBlocking {
            val name = fresh("renew")
            val short = DistributedConfig(leaseTime = 600.milliseconds, waiterTimeToLive = 2.seconds, heartbeatInterval = 100.milliseconds)
            val s = a.semaphore(name, 1, short)
            val other = b.semaphore(name, 1, short)
            s.withPermit { lease ->
                delay(2000) // more than 3 lease times
                other.tryAcquire().shouldBeNull()
                lease.remaining.isPositive() shouldBe true
            }
            other.availablePermits() shouldBe 1
        }
    }

    test("a lost pub/sub message delays a grant by at most a heartbeat: the heartbeat finds it") {
        runBlocking {
            val name = fresh("lostmessage")
            val s = a.semaphore(name, 1, fast)
            val held = s.acquire()
            val waiter = async { b.semaphore(name, 1, fast).acquire() }
            eventually("queued") { s.queueLength() == 1 }
            // Release by the raw script with a command that publishes nothing: the grant's message is lost.
            a.raw(Script.release, name, held.id, "1", "token", publish = "EXISTS") shouldBe held.fencingToken
            val lease = withTimeout(5.seconds) { waiter.await() }
            lease.permits shouldBe 1
            b.semaphore(name, 1, fast).release(lease)
        }
    }

    test("a waiter whose heartbeats stop is dropped from the line after its time to live, and the next is served") {
        runBlocking {
            val name = fresh("deadwaiter")
            val s = a.semaphore(name, 1, fast)
            val held = s.acquire()
            // A request queued by a "client" that then dies: queued by the raw script, no heartbeat ever.
            (a.raw(Script.acquire, name, "dead-1", "1", "2000", "500", "queue") as List<*>)[0] shouldBe "Q"
            val live = async { b.semaphore(name, 1, fast).acquire() }
            eventually("both queued") { s.queueLength() == 2 }
            s.release(held)
            val lease = withTimeout(10.seconds) { live.await() } // after the dead one's 500 ms
            s.queueLength() shouldBe 0
            b.semaphore(name, 1, fast).release(lease)
        }
    }

    test("a shorter lease or waiter time to live taken after a longer one still ends at its own time") {
        runBlocking {
            // The scripts look for what is due only from the earliest deadline they know of (lib.lua):
            // a later entry that is due sooner must move that bound forward.
            val name = fresh("mixed")
            val long = a.semaphore(name, 2, DistributedConfig(leaseTime = 60.seconds, waiterTimeToLive = 60.seconds))
            val short = DistributedConfig(leaseTime = 300.milliseconds, waiterTimeToLive = 300.milliseconds)
            val kept = long.acquire()
            // A holder with a 300 ms lease that is never renewed nor released (its client "died").
            (b.raw(Script.acquire, name, "dead-holder", "1", "300", "300", "queue", total = 2) is Long) shouldBe true // granted at once: its token
            long.availablePermits() shouldBe 0
            eventually("the short lease ended, the long one is still held") { long.availablePermits() == 1 }
            // The same for the line: a long-lived waiter, then one with a 300 ms time to live that never beats.
            val waiter = async { long.acquire(2) }
            eventually("queued") { long.queueLength() == 1 }
            (b.raw(Script.acquire, name, "dead-waiter", "1", "300", "300", "queue", total = 2) as List<*>)[0] shouldBe "Q"
            long.queueLength() shouldBe 2
            eventually("the silent waiter was dropped, the live one kept") { long.queueLength() == 1 }
            long.release(kept)
            val both = withTimeout(5.seconds) { waiter.await() }
            both.permits shouldBe 2
            long.release(both)
            b.semaphore(name, 2, short).availablePermits() shouldBe 2
        }
    }

    test("R6: an acquire or release sent twice (as Lettuce re-sends after a reconnect) gets the same answer and changes nothing more") {
        runBlocking {
            val name = fresh("repeated")
            a.semaphore(name, 2).availablePermits() shouldBe 2 // created (the first script to touch it takes the slow path)
            val token = a.raw(Script.acquire, name, "same-id", "1", "30000", "10000", "queue", total = 2) as Long // granted at once: its token
            // Repeated: the same grant, with its token (the server keeps it with the lease, R4), and nothing more is granted.
            val again = a.raw(Script.acquire, name, "same-id", "1", "30000", "10000", "queue", total = 2) as List<*>
            again.take(3) shouldBe listOf("G", 1L, token)
            a.semaphore(name, 2).availablePermits() shouldBe 1
            // A request that queued, repeated: the same place.
            val filler = a.semaphore(name, 2).acquire()
            (a.raw(Script.acquire, name, "queued-id", "1", "30000", "10000", "queue", total = 2) as List<*>)[0] shouldBe "Q"
            a.raw(Script.acquire, name, "queued-id", "1", "30000", "10000", "queue", total = 2) shouldBe listOf("Q")
            a.raw(Script.cancel, name, "queued-id", "1", "1") shouldBe listOf("U")
            a.semaphore(name, 2).release(filler)
            (a.raw(Script.release, name, "same-id", "1", "-") is Long) shouldBe true
            a.raw(Script.release, name, "same-id", "1", "-") shouldBe listOf("U") // the server keeps no record of what ended
            a.semaphore(name, 2).availablePermits() shouldBe 2
        }
    }

    test("R6 on the client: a release answered 'unknown' succeeded if the lease was live when it was sent (its repeat), and is a lost lease otherwise") {
        runBlocking {
            val name = fresh("repeated-release")
            val s = a.semaphore(name, 2)
            val lease = s.acquire()
            (a.raw(Script.release, name, lease.id, "1", "-") is Long) shouldBe true // the first run of a release whose answer was lost
            s.release(lease) // its repeat: "U", read as released
            lease.isLost shouldBe false
            shouldThrow<IllegalStateException> { s.release(lease) }.message shouldContain "already released"
            s.availablePermits() shouldBe 2

            val fixed = a.semaphore(name, 2, DistributedConfig(leaseTime = 300.milliseconds, autoRenew = false))
            val short = fixed.acquire()
            delay(600)
            shouldThrow<LeaseLostException> { fixed.release(short) }.message shouldContain "expired"
            s.availablePermits() shouldBe 2
        }
    }

    test("scripts are loaded again after the server lost its script cache (SCRIPT FLUSH, as after a restart)") {
        runBlocking {
            val s = a.semaphore(fresh("noscript"), 1)
            s.release(s.acquire())
            server.command("SCRIPT", "FLUSH") shouldBe "+OK"
            s.release(s.acquire())
            s.availablePermits() shouldBe 1
        }
    }

    test("closing a handle fails its waiters, who leave the line; leases stay valid") {
        runBlocking {
            val name = fresh("close")
            val s = a.semaphore(name, 1, fast)
            val held = s.acquire()
            val h = b.semaphore(name, 1, fast)
            val waiter = async { runCatching { h.acquire() } }
            eventually("queued") { s.queueLength() == 1 }
            h.close()
            waiter.await().exceptionOrNull().shouldNotBeNull().shouldBeInstanceOfClosed()
            s.queueLength() shouldBe 0
            shouldThrow<SemaphoreClosedException> { h.tryAcquire() }
            s.release(held)
        }
    }

    test("uncontended acquire is one round trip (one script call); the waiters of one JVM share one subscription") {
        runBlocking {
            val name = fresh("roundtrips")
            val s = a.semaphore(name, 1)
            fun scriptCalls() = server.reply("INFO", "commandstats").single().lines()
                .filter { it.startsWith("cmdstat_evalsha:") || it.startsWith("cmdstat_eval:") }
                .sumOf { it.substringAfter("calls=").substringBefore(',').toLong() }
            repeat(2) { s.release(s.acquire()) } // creates it; the first grant at once has the client check the total, once
            eventually("the client's one check of the total") {
                val calls = scriptCalls()
                delay(100)
                scriptCalls() == calls
            }
            val before = scriptCalls()
            repeat(100) { s.release(s.acquire()) }
            scriptCalls() - before shouldBe 200 // 100 acquires + 100 releases
            val held = s.acquire()
            val waiters = (1..10).map { async { s.acquire() } }
            eventually("10 queued") { s.queueLength() == 10 }
            server.reply("PUBSUB", "NUMSUB", "dsem:{$name}:wake") shouldBe listOf("dsem:{$name}:wake", "1")
            s.release(held)
            for (w in waiters) s.release(w.await())
        }
    }

    test("DistributedLock: FIFO, the lease is the owner, withLock") {
        runBlocking {
            val name = fresh("lock")
            val la = a.lock(name)
            val lb = b.lock(name)
            val first = la.lock()
            la.isLocked() shouldBe true
            lb.tryLock().shouldBeNull()
            val order = Collections.synchronizedList(mutableListOf<Int>())
            coroutineScope {
                launch { lb.withLock { order += 1 } }
                eventually("queued") { la.queueLength() == 1 }
                launch { la.withLock { order += 2 } }
                eventually("queued") { la.queueLength() == 2 }
                la.unlock(first)
            }
            order shouldContainExactly listOf(1, 2)
            la.isLocked() shouldBe false
        }
    }
})


private fun Throwable.shouldBeInstanceOfClosed() {
    (this is SemaphoreClosedException) shouldBe true
}
