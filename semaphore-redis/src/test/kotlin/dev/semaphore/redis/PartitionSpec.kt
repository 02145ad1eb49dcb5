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
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import java.time.Duration as JavaDuration
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

/**
 * The client under network faults it cannot see coming: a relay ([FaultyLink]) between one client and a real
 * redis-server, cut both ways or one way, and healed one direction before the other. Each test is the regression test
 * of a defect found by probing the client this way (issue 49); the rules they check are in docs/redis-protocol.md.
 */
class PartitionSpec : FunSpec({
    val server = LocalRedisServer.start()
    val direct = RedisSemaphoreClient.connect(server.uri)
    afterSpec {
        direct.close()
        server.close()
    }
    val names = AtomicInteger()
    fun fresh(prefix: String) = "$prefix-${names.incrementAndGet()}"

    /** A client whose every connection goes through a relay of its own; both are closed after [block]. */
    fun throughLink(query: String = "", block: suspend (FaultyLink, RedisSemaphoreClient) -> Unit) {
        FaultyLink(server.port).use { link ->
            RedisSemaphoreClient.connect(link.uri + query).use { client ->
                runBlocking { block(link, client) }
            }
        }
    }

    /** The most a timed call may take beyond its timeout here: WITHDRAWAL_WAIT, and a busy shared machine's delays. */
    val slack = WITHDRAWAL_WAIT + 600.milliseconds

    test("H1: a grant that reaches its waiter after its lease ended on the server is never handed over: withPermit's block does not run, and the next holder keeps the permit") {
        throughLink { link, a ->
            val name = fresh("late-grant")
            val config = DistributedConfig(
                leaseTime = 1.seconds, renewInterval = 300.milliseconds, waiterTimeToLive = 30.seconds, heartbeatInterval = 200.milliseconds,
            )
            val b = direct.semaphore(name, 1, config)
            val held = b.acquire()
            val ran = AtomicBoolean()
            val waiter = async(Dispatchers.Default) {
                runCatching { a.semaphore(name, 1, config).withPermit { ran.set(true) } }
            }
            awaitCondition("a's request queued") { b.queueLength() == 1 }
            awaitCondition("a subscribed") { server.reply("PUBSUB", "NUMSUB", wakeChannel(name))[1].toInt() == 1 }
            link.partition()
            b.release(held) // granted to a on the server; the grant's message waits in the relay
            delay(1500) // a's lease, never renewed, ends on the server
            val next = b.tryAcquire(5.seconds).shouldNotBeNull() // the purge ended a's lease: the permit went on
            link.hold(toServer = true, toClient = false) // heals server to client first: a hears of its grant
            delay(700)
            ran.get() shouldBe false // not handed over: its renewal (H1) waits in the relay
            link.heal()
            val outcome = withTimeout(15.seconds) { waiter.await() }
            val e = outcome.exceptionOrNull().shouldBeInstanceOf<QueuedRequestLostException>()
            println("late grant: ${e.message}")
            e.message!! shouldContain "had already ended on the server"
            ran.get() shouldBe false
            b.availablePermits() shouldBe 0 // the next holder still holds it, alone
            b.inspect().holders.single().leaseId shouldBe next.id
            b.release(next)
            b.availablePermits() shouldBe 1
        }
    }

    test("H1: a grant counted as expired when it arrives (heartbeats longer than the lease) is renewed before it is handed over, and is not declared lost") {
        val name = fresh("old-anchor")
        // Heartbeats every 2 s against a lease of 1 s: a grant is counted from the request's last heartbeat.
        val config = DistributedConfig(leaseTime = 1.seconds, waiterTimeToLive = 10.seconds, heartbeatInterval = 2.seconds)
        RedisSemaphoreClient.connect(server.uri).use { a ->
            runBlocking {
                val b = direct.semaphore(name, 1, config)
                val held = b.acquire()
                val waiter = async { a.semaphore(name, 1, config).acquire() }
                awaitCondition("queued") { b.queueLength() == 1 }
                delay(1500)
                b.release(held)
                val lease = withTimeout(10.seconds) { waiter.await() }
                println("old anchor: handed over with ${lease.remaining} left (renewInterval ${config.renewInterval})")
                lease.remaining shouldBeGreaterThanOrEqualTo config.renewInterval
                delay(1500) // more than the lease time: kept alive by renewals
                lease.isLost shouldBe false
                server.reply("ZSCORE", redisKeys(name)[3], "${lease.id}:1").size shouldBe 1
                a.semaphore(name, 1, config).release(lease)
                b.availablePermits() shouldBe 1
            }
        }
    }

    test("K3: a release that hangs past the lease's expiry is not looked at again and again: the keeper stays idle, and the release settles it once answered") {
        throughLink { link, a ->
            val name = fresh("hung-release")
            val config = DistributedConfig(leaseTime = 1.seconds)
            val s = a.semaphore(name, 1, config)
            val lease = s.acquire()
            link.hold(toServer = true, toClient = false) // the release waits in the relay
            val release = async(Dispatchers.Default) { runCatching { s.release(lease) } }
            delay(1500) // past the lease's end by the client's count
            val before = a.looks.get()
            delay(1000)
            val looked = a.looks.get() - before
            println("hung release: the keeper looked $looked times in 1 s after the lease's end")
            looked shouldBeLessThanOrEqualTo 2L
            link.heal()
            withTimeout(15.seconds) { release.await() }.getOrThrow() // answered: released (or found gone after it was sent live, L2)
            lease.isLost shouldBe false
            withTimeout(5.seconds) { lease.awaitEnd() } // ended normally
            awaitCondition("the permit back") { direct.semaphore(name, 1, config).availablePermits() == 1 }
        }
    }

    context("T1: a timed acquire returns within its timeout plus WITHDRAWAL_WAIT whatever the link does, holds nothing, and its withdrawal reaches the server once the link heals") {
        val config = DistributedConfig(leaseTime = 2.seconds, waiterTimeToLive = 3.seconds, heartbeatInterval = 200.milliseconds)
        val timeout = 1500.milliseconds

        /** Runs a timed acquire by [call] through a link that [cut] cuts; checks its time, its result and the server after the heal. */
        suspend fun timed(name: String, busy: Boolean, cut: suspend (FaultyLink) -> Unit, call: suspend (DistributedSemaphore, FaultyLink) -> Lease?) {
            FaultyLink(server.port).use { link ->
                RedisSemaphoreClient.connect(link.uri).use { a ->
                    val b = direct.semaphore(name, 2, config)
                    val held = if (busy) b.acquire(2) else null
                    val s = a.semaphore(name, 2, config)
                    s.availablePermits() // connected before the cut
                    cut(link)
                    val start = TimeSource.Monotonic.markNow()
                    val lease = withContext(Dispatchers.Default) { call(s, link) }
                    val took = start.elapsedNow()
                    println("$name: returned ${lease?.let { "a lease" } ?: "null"} after $took (timeout $timeout)")
                    lease.shouldBeNull()
                    took shouldBeLessThan timeout + slack
                    delay(1000) // the partition goes on past the timeout
                    link.heal()
                    if (held != null) b.release(held)
                    // Nothing held, nothing queued: the withdrawal reached the server, or the server dropped the request.
                    awaitCondition("$name: every permit back and nobody in line", 15.seconds) {
                        b.availablePermits() == 2 && b.queueLength() == 0
                    }
                    awaitCondition("$name: the background withdrawals ended") { a.withdrawalCount == 0 } // T2 ends with the answer
                }
            }
        }

        test("partitioned both ways before the call: the acquire script itself gets no answer") {
            timed(fresh("cut-before"), busy = false, { it.partition() }) { s, _ -> s.tryAcquire(timeout) }
        }
        test("partitioned both ways while the request waits in line") {
            timed(fresh("cut-in-line"), busy = true, {}) { s, link ->
                val b = direct.semaphore(s.name, 2, config)
                coroutineScope {
                    launch {
                        awaitCondition("queued") { b.queueLength() == 1 }
                        delay(300)
                        link.partition()
                    }
                    s.tryAcquire(timeout)
                }
            }
        }
        test("one way, server to client: requests arrive, answers do not") {
            timed(fresh("one-way"), busy = true, { it.hold(toServer = false, toClient = true) }) { s, _ -> s.tryAcquire(timeout) }
        }
        test("a DistributedLock's tryLock(timeout), partitioned both ways") {
            timed(fresh("lock-cut"), busy = false, { it.partition() }) { s, _ ->
                s.handle().client.lock(s.name, config).tryLock(timeout)
            }
        }
        test("Java: acquireBlocking(permits, timeout), partitioned both ways") {
            timed(fresh("java-blocking-cut"), busy = false, { it.partition() }) { s, _ ->
                AsyncDistributedSemaphore.of(s).acquireBlocking(1, JavaDuration.ofMillis(timeout.inWholeMilliseconds)).orElse(null)?.let {
                    error("granted in a partition: $it")
                }
            }
        }
        test("Java: acquire(permits, timeout)'s future fails with TimeoutException, partitioned both ways") {
            timed(fresh("java-future-cut"), busy = false, { it.partition() }) { s, _ ->
                val future = AsyncDistributedSemaphore.of(s).acquire(1, JavaDuration.ofMillis(timeout.inWholeMilliseconds))
                val e = shouldThrow<ExecutionException> { future.get(30, TimeUnit.SECONDS) }
                (e.cause is TimeoutException) shouldBe true
                null
            }
        }
    }

    test("a connection reset while a reply is on its way fails the call with RedisUnavailableException (never the socket's own exception), and nothing is held") {
        throughLink { link, a ->
            val name = fresh("reset-mid-reply")
            val s = a.semaphore(name, 1)
            val outcomes = mutableMapOf<String, Int>()
            repeat(20) {
                link.hold(toServer = false, toClient = true) // the request arrives; its reply waits in the relay
                val call = async(Dispatchers.Default) { runCatching { s.tryAcquire() } }
                delay(50)
                link.reset()
                link.heal()
                val outcome = withTimeout(15.seconds) { call.await() }
                val e = outcome.exceptionOrNull()
                outcomes.merge(e?.javaClass?.simpleName ?: "granted", 1, Int::plus)
                if (e != null) e.shouldBeInstanceOf<RedisUnavailableException>()
                outcome.getOrNull()?.let { s.release(it) }
                awaitCondition("nothing held") { direct.semaphore(name, 1).availablePermits() == 1 }
            }
            println("reset mid-reply: $outcomes")
        }
    }

    test("close() of a client cut off both ways returns within 3 s; its waiting callers fail with SemaphoreClosedException, and its leases end at their expiry") {
        FaultyLink(server.port).use { link ->
            val a = RedisSemaphoreClient.connect(link.uri)
            runBlocking {
                val name = fresh("closed-in-partition")
                val config = DistributedConfig(leaseTime = 2.seconds)
                val s = a.semaphore(name, 1, config)
                val lease = s.acquire()
                val waiter = async(Dispatchers.Default) { runCatching { s.acquire() } }
                awaitCondition("queued") { direct.semaphore(name, 1, config).queueLength() == 1 }
                link.partition()
                val start = TimeSource.Monotonic.markNow()
                a.close()
                val took = start.elapsedNow()
                println("close() in a partition took $took")
                took shouldBeLessThan 3.seconds
                withTimeout(5.seconds) { waiter.await() }.exceptionOrNull().shouldBeInstanceOf<dev.semaphore.SemaphoreClosedException>()
                link.heal()
                lease.isLost shouldBe false // not renewed any more: it ends on the server at its expiry
                awaitCondition("the permit back, the line empty", 10.seconds) {
                    val d = direct.semaphore(name, 1, config)
                    d.availablePermits() == 1 && d.queueLength() == 0
                }
            }
        }
    }

    test("K2: a lease lost while its renewals reach the server but their answers do not is handed back at once, not kept alive by them") {
        throughLink { link, a ->
            val name = fresh("one-way-renewals")
            val config = DistributedConfig(leaseTime = 3.seconds, renewInterval = 1500.milliseconds)
            val lease = a.semaphore(name, 1, config).acquire()
            link.hold(toServer = false, toClient = true) // renewals extend the lease on the server; their answers wait
            shouldThrow<LeaseLostException> { withTimeout(10.seconds) { lease.awaitEnd() } }
            val lostAt = TimeSource.Monotonic.markNow()
            val b = direct.semaphore(name, 1, config)
            val next = withTimeout(10.seconds) {
                var taken: Lease? = null
                while (taken == null) taken = b.tryAcquire() ?: run { delay(20); null }
                taken
            }
            val after = lostAt.elapsedNow()
            println("one-way renewals: the permit was free again ${after.inWholeMilliseconds} ms after the holder was told of the loss")
            // Without the hand-back, the renewal sent 1.5 s before the loss kept the lease on the server 1.5 s longer.
            after shouldBeLessThan 800.milliseconds
            b.release(next)
            link.heal()
        }
    }

    test("L3: a release that gets no answer throws RedisUnavailableException; the lease then ends at its expiry, not lost, and a second release succeeds") {
        throughLink("?timeout=1s") { link, a ->
            val name = fresh("unanswered-release")
            val config = DistributedConfig(leaseTime = 2.seconds)
            val lost = AtomicInteger()
            a.addListener(object : LeaseListener {
                override fun onLeaseLost(lease: LeaseInfo, cause: LeaseLostException) {
                    lost.incrementAndGet()
                }
            }).use {
                val s = a.semaphore(name, 1, config)
                val lease = s.acquire()
                link.partition()
                shouldThrow<RedisUnavailableException> { s.release(lease) }
                withTimeout(10.seconds) { lease.awaitEnd() } // ends normally at its expiry: given back, not lost
                lease.remaining.isPositive() shouldBe false
                lease.isLost shouldBe false
                lost.get() shouldBe 0
                link.heal()
                s.release(lease) // finds it gone, after an earlier release: done (L2)
                shouldThrow<IllegalStateException> { s.release(lease) } // released once, then no more
                awaitCondition("the permit back") { direct.semaphore(name, 1, config).availablePermits() == 1 }
            }
        }
    }
})

