/*
 * The conformance suite: one set of tests that every engine passes, on its real server (as IBM's async-util runs one
 * suite over every implementation). An engine module subclasses DistributedConformanceSpec with a ServerUnderTest that
 * starts its server and makes clients on it: RedisConformanceSpec in semaphore-redis, PostgresConformanceSpec in
 * semaphore-postgres. What one engine does differently (docs/postgres.md, "Where the engines differ") is not here: each
 * engine's own specs test it.
 *
 * It lives in this module's test jar; this module's own build does not run it (it has no server).
 */
package dev.semaphore.distributed.conformance

import dev.semaphore.SemaphoreClosedException
import dev.semaphore.distributed.DistributedConfig
import dev.semaphore.distributed.DistributedSemaphoreClient
import dev.semaphore.distributed.LeaseInfo
import dev.semaphore.distributed.LeaseListener
import dev.semaphore.distributed.LeaseLostException
import dev.semaphore.distributed.QueuedRequestLostException
import dev.semaphore.distributed.ServerUnavailableException
import dev.semaphore.distributed.async.AsyncDistributedLock
import dev.semaphore.distributed.async.AsyncDistributedSemaphore
import dev.semaphore.distributed.asSemaphore
import dev.semaphore.distributed.withLock
import dev.semaphore.distributed.withPermit
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeSortedBy
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeLessThan
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.future.await
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.Continuation
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.coroutines.startCoroutine
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

/** A running server of one engine, and clients on it. Closed after the suite. */
interface ServerUnderTest : AutoCloseable {
    /** The engine's name, for test names. */
    val engine: String

    /** A new client on the server (the suite closes it). */
    fun client(): DistributedSemaphoreClient

    /** The server's URL, and the client class whose static `connect(String)` takes it: for the worker JVMs ([ConformanceWorker]). */
    val url: String
    val clientClass: String
}

/** The suite; [start] starts the engine's server once per spec. */
abstract class DistributedConformanceSpec(start: () -> ServerUnderTest) : FunSpec() {
    init {
        val server = start()
        val a = server.client()
        val b = server.client()
        afterSpec {
            a.close()
            b.close()
            server.close()
        }
        var n = 0
        fun name(what: String) = "conf-$what-${++n}-${System.nanoTime()}"
        // Short leases, renewed every 500 ms: long enough that a loaded 2-core machine answers a renewal in time.
        val short = DistributedConfig(leaseTime = 1500.milliseconds, waiterTimeToLive = 2.seconds)

        test("${server.engine}: two clients share one semaphore: permits held by one are not available to the other; release gives them back") {
            val name = name("share")
            val sa = a.semaphore(name, 3)
            val sb = b.semaphore(name, 3)
            val first = sa.acquire(2)
            sb.availablePermits() shouldBe 1
            sb.tryAcquire(2).shouldBeNull()
            val second = sb.tryAcquire(1).shouldNotBeNull()
            sa.availablePermits() shouldBe 0
            sa.release(first)
            sb.release(second)
            sb.availablePermits() shouldBe 3
            sb.totalPermits() shouldBe 3
        }

        test("${server.engine}: first in, first out across clients, multi-permit requests granted whole, no barging past a waiting head") {
            val name = name("fifo")
            val sa = a.semaphore(name, 4)
            val sb = b.semaphore(name, 4)
            val held = sa.acquire(3)
            val order = CopyOnWriteArrayList<String>()
            coroutineScope {
                val big = async { sb.acquire(4).also { order += "big" } }
                awaitQueue(sa, 1)
                // One permit is free, but the head wants 4: a newcomer for 1 neither barges (try) nor overtakes (queue).
                sa.tryAcquire(1).shouldBeNull()
                val small = async { sa.acquire(1).also { order += "small" } }
                awaitQueue(sa, 2)
                sa.release(held)
                val bigLease = big.await()
                bigLease.permits shouldBe 4
                order shouldContainExactly listOf("big")
                sb.release(bigLease)
                sa.release(small.await())
            }
            order shouldContainExactly listOf("big", "small")
            sa.availablePermits() shouldBe 4
        }

        test("${server.engine}: fencing tokens only increase, grant after grant, across clients") {
            val name = name("tokens")
            val sa = a.semaphore(name, 2)
            val sb = b.semaphore(name, 2)
            val tokens = mutableListOf<Long>()
            repeat(6) { i ->
                val s = if (i % 2 == 0) sa else sb
                val lease = s.acquire()
                tokens += lease.fencingToken
                s.release(lease)
            }
            tokens shouldBeSortedBy { it }
            tokens.toSet().size shouldBe tokens.size
        }

        test("${server.engine}: a timed try that runs out returns null and leaves nothing queued; a cancelled waiter leaves the line") {
            val name = name("timeout")
            val sa = a.semaphore(name, 1)
            val sb = b.semaphore(name, 1)
            val held = sa.acquire()
            val started = TimeSource.Monotonic.markNow()
            sb.tryAcquire(300.milliseconds).shouldBeNull()
            started.elapsedNow() shouldBeGreaterThan 250.milliseconds
            sa.queueLength() shouldBe 0
            coroutineScope {
                val waiter = launch(start = CoroutineStart.UNDISPATCHED) { sb.acquire() }
                awaitQueue(sa, 1)
                waiter.cancel()
                waiter.join()
            }
            // Well within waiterTimeToLive (10 s): a request that only its time to live takes out of the line fails here.
            awaitQueue(sa, 0, within = 3.seconds)
            // Cancelled at any moment, the acquire's call still on the wire included (its answer not yet back).
            repeat(12) { round ->
                val waiter = launch(start = CoroutineStart.UNDISPATCHED) { sb.acquire() }
                delay(round % 4L) // 0: before the first answer could come
                waiter.cancel()
                waiter.join()
                awaitQueue(sa, 0, within = 3.seconds)
            }
            sa.release(held)
            sa.availablePermits() shouldBe 1
        }

        test("${server.engine}: leases are renewed while held, counted down, and given back by release") {
            val name = name("renew")
            val s = a.semaphore(name, 1, short)
            val lease = s.acquire()
            lease.remaining shouldBeGreaterThan 1000.milliseconds
            delay(3200) // more than two lease times: only the renewals keep it
            if (lease.isLost) throw AssertionError("the lease was lost", runCatching { s.release(lease) }.exceptionOrNull())
            lease.remaining shouldBeGreaterThan 0.milliseconds
            b.semaphore(name, 1, short).tryAcquire().shouldBeNull()
            s.release(lease)
            b.semaphore(name, 1, short).availablePermits() shouldBe 1
        }

        test("${server.engine}: a fixed lease ends at its time: its permits come back, and its release says it was lost") {
            val name = name("fixed")
            val fixed = DistributedConfig(leaseTime = 400.milliseconds, autoRenew = false, waiterTimeToLive = 2.seconds)
            val s = a.semaphore(name, 1, fixed)
            val lease = s.acquire()
            val other = b.semaphore(name, 1, fixed)
            val next = withTimeout(5.seconds) { other.acquire() } // granted once the first lease ran out on the server
            next.fencingToken shouldBeGreaterThan lease.fencingToken
            shouldThrow<LeaseLostException> { s.release(lease) }
            lease.isLost shouldBe true
            other.release(next)
        }

        test("${server.engine}: withPermit and withLock release on return and on failure") {
            val name = name("with")
            val s = a.semaphore(name, 2)
            s.withPermit(2) { lease -> lease.permits shouldBe 2; s.availablePermits() shouldBe 0 }
            s.availablePermits() shouldBe 2
            shouldThrow<IllegalStateException> { s.withPermit { error("boom") } }.message shouldBe "boom"
            s.availablePermits() shouldBe 2
            val lock = b.lock(name("lock"))
            lock.withLock { lock.isLocked() shouldBe true }
            lock.isLocked() shouldBe false
        }

        test("${server.engine}: a lock with owners: holdsLock, not reentrant, FIFO between clients") {
            val lockName = name("owner")
            val la = a.lock(lockName)
            val lb = b.lock(lockName)
            val owner = Any()
            val lease = la.lock(owner)
            la.holdsLock(owner) shouldBe true
            shouldThrow<IllegalStateException> { la.tryLock(owner) }.message shouldContain "not reentrant"
            lb.tryLock().shouldBeNull()
            lb.inspect().holder.shouldNotBeNull().isThisClient shouldBe false
            la.inspect().owner shouldBe owner
            coroutineScope {
                val next = async { lb.lock() }
                awaitQueue(la.asSemaphore(), 1)
                la.unlock(lease)
                la.holdsLock(owner) shouldBe false
                lb.unlock(next.await())
            }
            la.isLocked() shouldBe false
        }

        test("${server.engine}: resize: add, reduce below what is held (debt), set; a waiter that can never fit fails; too large is refused") {
            val name = name("resize")
            val s = a.semaphore(name, 2)
            val held = s.acquire(2)
            s.addPermits(2)
            s.totalPermits() shouldBe 4
            s.availablePermits() shouldBe 2
            s.reducePermits(3)
            s.totalPermits() shouldBe 1
            s.availablePermits() shouldBe -1 // in debt until the holder releases
            shouldThrow<IllegalArgumentException> { s.acquire(2) }.message shouldContain "2"
            coroutineScope {
                s.setPermits(3)
                val waiter = async { runCatching { b.semaphore(name, 2).acquire(3) } }
                awaitQueue(s, 1)
                s.setPermits(2) // the queued request for 3 can never be granted now
                val failure = waiter.await().exceptionOrNull()
                (failure is IllegalStateException) shouldBe true
                failure!!.message shouldContain "can never be granted"
            }
            s.release(held)
            s.availablePermits() shouldBe 2
        }

        test("${server.engine}: delete refuses a semaphore in use, then deletes; the next use creates it afresh") {
            val name = name("delete")
            val s = a.semaphore(name, 2)
            val lease = s.acquire()
            shouldThrow<IllegalStateException> { s.delete() }.message shouldContain "in use"
            s.release(lease)
            s.delete()
            s.inspect().exists shouldBe false
            b.semaphore(name, 5).availablePermits() shouldBe 5
        }

        test("${server.engine}: inspect from another client: holders with their tokens and clients, the line in order") {
            val name = name("inspect")
            val sa = a.semaphore(name, 2)
            val held = sa.acquire(2)
            coroutineScope {
                val w1 = async { b.semaphore(name, 2).acquire(1) }
                awaitQueue(sa, 1)
                val w2 = async { a.semaphore(name, 2).acquire(2) }
                awaitQueue(sa, 2)
                val seen = b.semaphore(name, 2).inspect()
                seen.exists shouldBe true
                seen.totalPermits shouldBe 2
                seen.heldPermits shouldBe 2
                seen.holders.single().fencingToken shouldBe held.fencingToken
                seen.holders.single().clientId shouldBe a.clientId
                seen.holders.single().isThisClient shouldBe false
                seen.line.map { it.permits } shouldContainExactly listOf(1, 2)
                seen.line.map { it.clientId } shouldContainExactly listOf(b.clientId, a.clientId)
                seen.line.map { it.position } shouldContainExactly listOf(1, 2)
                sa.release(held)
                b.semaphore(name, 2).release(w1.await())
                sa.release(w2.await())
            }
        }

        test("${server.engine}: bad input throws naming the value, and changes nothing") {
            val name = name("input")
            val s = a.semaphore(name, 2)
            shouldThrow<IllegalArgumentException> { s.acquire(0) }.message shouldContain "0"
            shouldThrow<IllegalArgumentException> { s.tryAcquire(-1) }.message shouldContain "-1"
            shouldThrow<IllegalArgumentException> { s.acquire(3) }.message shouldContain "3"
            shouldThrow<IllegalArgumentException> { s.inspect(1001) }.message shouldContain "1001"
            shouldThrow<IllegalArgumentException> { a.semaphore(name, 0) }.message shouldContain "0"
            shouldThrow<IllegalArgumentException> { s.addPermits(0) }.message shouldContain "0"
            s.availablePermits() shouldBe 2
            s.queueLength() shouldBe 0
            val other = b.semaphore(name("lease"), 1)
            val lease = other.acquire()
            shouldThrow<IllegalArgumentException> { s.release(lease) }.message shouldContain lease.semaphoreName
            other.release(lease)
            shouldThrow<IllegalStateException> { other.release(lease) }.message shouldContain "already released"
        }

        test("${server.engine}: the Java facade: futures, blocking calls and permits on the same line") {
            val name = name("java")
            val sem = AsyncDistributedSemaphore.create(a, name, 2)
            val permit = sem.acquire(2).get(10, TimeUnit.SECONDS)
            sem.tryAcquire().isPresent shouldBe false
            val waiting = AsyncDistributedSemaphore.create(b, name, 2).acquire()
            awaitQueue(a.semaphore(name, 2), 1)
            permit.close()
            val second = waiting.get(10, TimeUnit.SECONDS)
            second.fencingToken() shouldBeGreaterThan permit.fencingToken()
            second.close()
            val lock = AsyncDistributedLock.create(b, name("javalock"))
            lock.lockBlocking().use { held -> held.permits() shouldBe 1 }
            lock.isLocked().get(10, TimeUnit.SECONDS) shouldBe false
        }

        test("${server.engine}: a listener hears every renewal of a held lease") {
            val name = name("listener")
            val renewed = AtomicInteger()
            val registration = a.addListener(object : LeaseListener {
                override fun onLeaseRenewed(lease: LeaseInfo) {
                    if (lease.semaphoreName == name) renewed.incrementAndGet()
                }
            })
            val s = a.semaphore(name, 1, short)
            val lease = s.acquire()
            delay(1800)
            s.release(lease)
            registration.close()
            renewed.get() shouldBeGreaterThan 1
        }

        test("${server.engine}: a closed client refuses every call, and its waiters fail with SemaphoreClosedException") {
            val name = name("closed")
            val c = server.client()
            val s = c.semaphore(name, 1)
            val held = a.semaphore(name, 1).acquire()
            coroutineScope {
                val waiter = async { runCatching { s.acquire() } }
                awaitQueue(a.semaphore(name, 1), 1)
                c.close()
                (waiter.await().exceptionOrNull() is SemaphoreClosedException) shouldBe true
            }
            shouldThrow<SemaphoreClosedException> { s.acquire() }
            shouldThrow<SemaphoreClosedException> { c.semaphore(name, 1) }
            a.semaphore(name, 1).release(held)
            awaitQueue(a.semaphore(name, 1), 0) // its request left the line (or was dropped after its heartbeats stopped)
        }

        test("${server.engine}: 3 JVMs x 10 coroutines x 10 rounds on 3 permits: never more than 3 held, FIFO grants, everything back") {
            val name = name("history")
            val total = 3
            val workers = (1..3).map { ConformanceWorkerProcess(server.clientClass, server.url, "history", name, "$total", "10", "10") }
            val leases = mutableListOf<List<Long>>() // token, permits, queueNumber, last token at release
            try {
                for (w in workers) {
                    while (true) {
                        val line = w.next("")
                        if (line == "DONE") break
                        if (line.startsWith("LEASE ")) leases += line.removePrefix("LEASE ").split(' ').map { it.toLong() }
                    }
                    w.exitCode() shouldBe 0
                }
            } finally {
                workers.forEach { it.close() }
            }
            leases.size shouldBe 300
            // A lease was held from the grant of its own token to the last grant before its release: at the grant of
            // every token, the leases whose interval covers it hold at most the total.
            val grants = leases.map { it[0] }.sorted()
            grants.zipWithNext().forEach { (x, y) -> y shouldBeGreaterThan x } // tokens are unique
            for (x in grants) {
                val held = leases.filter { it[0] <= x && x <= it[3] }.sumOf { it[1] }
                check(held <= total) { "at the grant of token $x, $held permits were held (total $total)" }
            }
            // A request queued before another is granted before it (a lower token), across the JVMs.
            val queued = leases.filter { it[2] > 0 }.sortedBy { it[2] }
            queued.zipWithNext().forEach { (x, y) ->
                check(y[0] > x[0]) { "request ${x[2]} was granted token ${x[0]}, but the later request ${y[2]} got ${y[0]} before it" }
            }
            queued.size shouldBeGreaterThan 30 // the run was contended
            val s = a.semaphore(name, total)
            s.availablePermits() shouldBe total
            s.queueLength() shouldBe 0
        }

        test("${server.engine}: kill -9 of a holder: its permit comes back when its lease ends, not before, to the next in line, with a higher token") {
            val name = name("killed-holder")
            val leaseMs = 1500L
            ConformanceWorkerProcess(server.clientClass, server.url, "hold", name, "$leaseMs").use { holder ->
                val token = holder.next("HELD ").substringAfter(' ').toLong()
                val s = a.semaphore(name, 1, DistributedConfig(leaseTime = 5.seconds, waiterTimeToLive = 1.seconds, heartbeatInterval = 100.milliseconds))
                coroutineScope {
                    val next = async { s.acquire() }
                    awaitQueue(s, 1)
                    val killedAt = TimeSource.Monotonic.markNow()
                    holder.signal("KILL")
                    val lease = withTimeout(20.seconds) { next.await() }
                    val waited = killedAt.elapsedNow()
                    lease.fencingToken shouldBeGreaterThan token
                    // The holder's lease had between leaseTime - renewInterval and leaseTime left when it died (K2).
                    waited shouldBeGreaterThan (leaseMs - leaseMs / 3 - 100).milliseconds
                    waited shouldBeLessThan (leaseMs + 2000).milliseconds // its lease, a heartbeat, slack
                    s.release(lease)
                }
                s.availablePermits() shouldBe 1
            }
        }

        test("${server.engine}: SIGSTOP of a holder past its lease: the next holder gets a higher token; the paused one is told when it wakes") {
            val name = name("paused-holder")
            ConformanceWorkerProcess(server.clientClass, server.url, "hold", name, "1000").use { holder ->
                val token = holder.next("HELD ").substringAfter(' ').toLong()
                holder.signal("STOP")
                try {
                    val s = a.semaphore(name, 1)
                    val lease = withTimeout(20.seconds) { s.acquire() } // after the paused holder's lease ran out
                    lease.fencingToken shouldBeGreaterThan token
                    holder.signal("CONT")
                    // Told by the server ("can no longer be renewed"), or by its own clock first, if it woke after its
                    // lease's expiry as last told ("expired before a renewal reached the server").
                    val lost = holder.next("LOST ")
                    check("can no longer be renewed" in lost || "expired before a renewal reached the server" in lost) { lost }
                    holder.exitCode() shouldBe 3
                    s.availablePermits() shouldBe 0 // still ours: the paused holder's late release changed nothing
                    s.release(lease)
                    s.availablePermits() shouldBe 1
                } finally {
                    if (holder.process.isAlive) holder.signal("CONT")
                }
            }
        }

        test("${server.engine}: kill -9 of a waiting JVM: its request leaves the line after its time to live; the next is served") {
            val name = name("killed-waiter")
            // The held lease outlasts the worker JVM's start on a loaded machine: this test is about the waiter.
            val s = a.semaphore(name, 1, DistributedConfig(leaseTime = 60.seconds, waiterTimeToLive = 1.seconds, heartbeatInterval = 100.milliseconds))
            val held = s.acquire()
            ConformanceWorkerProcess(server.clientClass, server.url, "wait", name).use { waiter ->
                waiter.next("QUEUED")
                coroutineScope {
                    val behind = async { s.acquire() }
                    awaitQueue(s, 2) // the worker, then `behind`
                    val killedAt = TimeSource.Monotonic.markNow()
                    waiter.signal("KILL")
                    awaitQueue(s, 1) // dropped: no heartbeat
                    killedAt.elapsedNow() shouldBeLessThan 3.seconds // its time to live, our heartbeat, slack
                    s.release(held)
                    val lease = withTimeout(5.seconds) { behind.await() }
                    s.queueLength() shouldBe 0
                    s.release(lease)
                }
                s.availablePermits() shouldBe 1
            }
        }

        test("${server.engine}: a caller without a dispatcher (suspend fun main): 100 coroutines on Dispatchers.Default share 8 permits, then it closes its client") {
            // As `suspend fun main` runs: the caller's coroutine has no dispatcher, so it continues on whatever thread
            // completes what it waits for (an engine's I/O thread), and closes its client there.
            val name = name("main")
            val held = AtomicInteger()
            val most = AtomicInteger()
            val done = AtomicInteger()
            val program = CompletableFuture<Long>()
            suspend {
                server.client().use { client ->
                    val s = client.semaphore(name, 8)
                    coroutineScope {
                        repeat(100) {
                            launch(Dispatchers.Default) {
                                s.withPermit {
                                    most.accumulateAndGet(held.incrementAndGet(), ::maxOf)
                                    delay(20)
                                    held.decrementAndGet()
                                }
                                done.incrementAndGet()
                            }
                        }
                    }
                    val lease = s.tryAcquire(5.seconds, permits = 2).shouldNotBeNull()
                    try { lease.fencingToken } finally { s.release(lease) }
                }
            }.startCoroutine(Continuation(EmptyCoroutineContext) { it.fold(program::complete, program::completeExceptionally) })
            withTimeoutOrNull(30.seconds) { program.await() }
                ?: throw AssertionError("the program did not end within 30 s (${done.get()} of 100 withPermit blocks done)")
            done.get() shouldBe 100
            check(most.get() <= 8) { "${most.get()} holders at once on 8 permits" }
            val s = a.semaphore(name, 8)
            s.availablePermits() shouldBe 8
            s.queueLength() shouldBe 0
        }

        test("${server.engine}: a caller without a dispatcher, granted by a wake-up, closes its client at once on the thread that woke it") {
            // The grant's wake-up completes the wait on the engine's own thread (Lettuce's pub/sub, PostgreSQL's
            // listener), where such a caller continues: close() there must not wait for that thread.
            val name = name("woken")
            val held = a.semaphore(name, 1).acquire()
            val program = CompletableFuture<Pair<String, kotlin.time.Duration>>()
            suspend {
                val client = server.client()
                client.semaphore(name, 1, short).acquire() // queued; its lease ends at its expiry after the close
                val thread = Thread.currentThread().name
                val closing = TimeSource.Monotonic.markNow()
                client.close()
                thread to closing.elapsedNow()
            }.startCoroutine(Continuation(EmptyCoroutineContext) { it.fold(program::complete, program::completeExceptionally) })
            awaitQueue(a.semaphore(name, 1), 1)
            a.semaphore(name, 1).release(held)
            val (thread, took) = withTimeoutOrNull(30.seconds) { program.await() }
                ?: throw AssertionError("the program did not end within 30 s")
            check(took < 1.seconds) { "close() on $thread took $took" }
        }

        test("${server.engine}: the exception types are the shared ones") {
            // Not a server call: the types an application catches are the same for every engine.
            val base = dev.semaphore.distributed.DistributedSemaphoreException::class.java
            base.isAssignableFrom(ServerUnavailableException::class.java) shouldBe true
            base.isAssignableFrom(QueuedRequestLostException::class.java) shouldBe true
            server.client().use { c -> c.toString() shouldContain c.clientId }
        }
    }
}

/** Waits (at most 10 s) until the server's line of [semaphore] is [length] long. */
suspend fun awaitQueue(semaphore: dev.semaphore.distributed.DistributedSemaphore, length: Int, within: Duration = 10.seconds) {
    val deadline = TimeSource.Monotonic.markNow() + within
    while (semaphore.queueLength() != length) {
        if (deadline.hasPassedNow()) throw AssertionError("the line of ${semaphore.name} did not reach $length (is ${semaphore.queueLength()})")
        delay(10)
    }
}
