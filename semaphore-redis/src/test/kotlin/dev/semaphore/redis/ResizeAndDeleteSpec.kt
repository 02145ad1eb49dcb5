package dev.semaphore.redis

import dev.semaphore.distributed.*

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicInteger
import java.util.logging.Handler
import java.util.logging.LogRecord
import java.util.logging.Logger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * The server's total stands (R2): handles configured with another total work with it, and only a
 * resize changes it, for every JVM at once (a rolling deploy); resizes with queued requests and with
 * debt; delete() of an idle semaphore, refused while in use, and its re-creation (R9).
 */
class ResizeAndDeleteSpec : FunSpec({
    val server = LocalRedisServer.start()
    val a = RedisSemaphoreClient.connect(server.uri)
    val b = RedisSemaphoreClient.connect(server.uri)
    // The worker JVM of the rolling resize (the last test) starts now, and waits to be told to take.
    val rollingName = "rolling"
    val worker = WorkerProcess("take", server.uri, rollingName, "10", "2", "5000", "stdin", "stdin")
    afterSpec {
        worker.close()
        a.close()
        b.close()
        server.close()
    }
    val names = AtomicInteger()
    fun fresh(prefix: String) = "$prefix-${names.incrementAndGet()}"
    val fast = DistributedConfig(waiterTimeToLive = 2.seconds, heartbeatInterval = 200.milliseconds)

    /** The client's warnings (java.util.logging, through System.Logger), collected while the spec runs. */
    val warnings = CopyOnWriteArrayList<String>()
    val clientLogger: Logger = Logger.getLogger("dev.semaphore.distributed") // kept: JUL holds loggers weakly
    val collector = object : Handler() {
        override fun publish(record: LogRecord) {
            warnings += record.message
        }
        override fun flush() {}
        override fun close() {}
    }
    clientLogger.addHandler(collector)
    afterSpec { clientLogger.removeHandler(collector) }

    test("addPermits grants a queued request that now fits, at once") {
        runBlocking {
            val name = fresh("add")
            val s = a.semaphore(name, 2, fast)
            val other = b.semaphore(name, 2, fast)
            val held = s.acquire(2)
            shouldThrow<IllegalArgumentException> { other.acquire(3) }.message!! shouldContain "the total is 2"
            val waiter = async { other.acquire(2) }
            awaitCondition("queued") { s.queueLength() == 1 }
            s.addPermits(1)
            s.totalPermits() shouldBe 3
            s.availablePermits() shouldBe 1
            s.queueLength() shouldBe 1 // 1 free: the head wants 2
            waiter.isActive shouldBe true
            s.addPermits(1) // the resize grants it (R3)
            s.queueLength() shouldBe 0
            val granted = withTimeout(5.seconds) { waiter.await() }
            granted.permits shouldBe 2
            granted.fencingToken shouldBeGreaterThan held.fencingToken
            s.availablePermits() shouldBe 0
            s.release(held)
            other.release(granted)
            s.availablePermits() shouldBe 4
        }
    }

    test("reducePermits below what is held is a debt: availablePermits goes negative, and releases repay it before a waiter is granted") {
        runBlocking {
            val name = fresh("debt")
            val s = a.semaphore(name, 4, fast)
            val other = b.semaphore(name, 4, fast)
            val leases = listOf(s.acquire(), s.acquire(), other.acquire(), other.acquire())
            s.reducePermits(2)
            s.totalPermits() shouldBe 2
            s.availablePermits() shouldBe -2
            val waiter = async { other.acquire(1) }
            awaitCondition("queued") { s.queueLength() == 1 }
            s.tryAcquire().shouldBeNull()
            s.release(leases[0])
            s.availablePermits() shouldBe -1
            s.queueLength() shouldBe 1
            other.release(leases[2])
            s.availablePermits() shouldBe 0
            s.queueLength() shouldBe 1 // repaid, nothing free yet
            waiter.isActive shouldBe true
            s.release(leases[1]) // 1 held of 2: now one is free, and it goes to the waiter
            s.queueLength() shouldBe 0
            val granted = withTimeout(5.seconds) { waiter.await() }
            s.availablePermits() shouldBe 0
            other.release(leases[3])
            other.release(granted)
            s.availablePermits() shouldBe 2
        }
    }

    test("a queued request larger than the reduced total fails with IllegalStateException naming the counts, and leaves nothing behind") {
        runBlocking {
            val name = fresh("toolarge")
            val s = a.semaphore(name, 4, fast)
            val other = b.semaphore(name, 4, fast)
            val held = s.acquire(2)
            val big = async { runCatching { other.acquire(3) } }
            val small = async { other.acquire(1) }
            awaitCondition("both queued") { s.queueLength() == 2 }
            s.reducePermits(2) // total 2 < 3: the head fails; the one behind it waits for a free permit
            val failure = withTimeout(5.seconds) { big.await() }.exceptionOrNull()
            (failure is IllegalStateException) shouldBe true
            failure!!.message!! shouldContain "3 permits"
            failure.message!! shouldContain "reduced to 2"
            s.queueLength() shouldBe 1
            small.isActive shouldBe true
            s.release(held)
            val lease = withTimeout(5.seconds) { small.await() }
            other.release(lease)
            // Nothing of the failed request is left: the hash holds only its own fields, the zsets their sentinels.
            server.keySizes(name).drop(1) shouldBe listOf(1, 1, 1)
            server.reply("HKEYS", redisKeys(name)[0]).filter { it.contains('-') } shouldBe emptyList()
            s.availablePermits() shouldBe 2
        }
    }

    test("delete() is refused while held or queued (nothing changes), removes every key when idle, and the next use creates it again with higher tokens") {
        runBlocking {
            val name = fresh("delete")
            val (s, q, wx, lx) = redisKeys(name)
            val sem = a.semaphore(name, 2, fast)
            val other = b.semaphore(name, 2, fast)
            val held = sem.acquire(2)
            fun snapshot() = listOf(server.reply("HGETALL", s).chunked(2).filter { it[0] != "exp" }, server.reply("ZRANGE", q, "0", "-1"), server.reply("ZRANGE", lx, "0", "-1"))
            val whileHeld = snapshot()
            shouldThrow<IllegalStateException> { other.delete() }.message!! shouldContain "is in use: 2 permits held and 0 requests queued"
            snapshot() shouldBe whileHeld
            val waiter = async { other.acquire(1) }
            awaitCondition("queued") { sem.queueLength() == 1 }
            val whileQueued = snapshot()
            shouldThrow<IllegalStateException> { sem.delete() }.message!! shouldContain "2 permits held and 1 requests queued"
            snapshot() shouldBe whileQueued
            server.existingKeys(name) shouldBe 4
            sem.release(held)
            val second = withTimeout(5.seconds) { waiter.await() } // the waiter kept its place
            shouldThrow<IllegalStateException> { a.lock(name).delete() }.message!! shouldContain "1 permits held"
            other.release(second)

            sem.delete()
            server.existingKeys(name) shouldBe 0
            for (key in listOf(s, q, wx, lx)) server.command("EXISTS", key) shouldBe ":0"
            // Re-created by the next use, with the total its caller configured, and tokens still higher.
            val again = b.semaphore(name, 5, fast)
            val lease = again.acquire()
            lease.fencingToken shouldBeGreaterThan second.fencingToken
            again.totalPermits() shouldBe 5
            server.existingKeys(name) shouldBe 4
            again.release(lease)
        }
    }

    test("delete() of a semaphore whose only lease has expired: it ends the lease first, and its holder is told") {
        runBlocking {
            val name = fresh("delete-expired")
            val fixed = a.semaphore(name, 1, DistributedConfig(leaseTime = 300.milliseconds, autoRenew = false))
            val lease = fixed.acquire()
            delay(500)
            fixed.delete()
            server.existingKeys(name) shouldBe 0
            shouldThrow<LeaseLostException> { withTimeout(2.seconds) { lease.awaitEnd() } }
            val next = fixed.acquire()
            next.fencingToken shouldBeGreaterThan lease.fencingToken
            fixed.release(next)
        }
    }
    test("fencing tokens increase across delete() and re-creation, even within the same millisecond") {
        runBlocking {
            repeat(50) { round ->
                val name = fresh("delete-quick")
                val s = a.semaphore(name, 1, fast)
                // One connection keeps its commands in order: a grant, its release, the delete and the next
                // request run back to back on the server (as from two JVMs, one deleting as the other asks).
                val (first, second) = coroutineScope {
                    val first = async(start = CoroutineStart.UNDISPATCHED) { a.raw(Script.acquire, name, "first", "1", "30000", "10000", "queue") }
                    val released = async(start = CoroutineStart.UNDISPATCHED) { a.raw(Script.release, name, "first", "1", "-") }
                    val deleted = async(start = CoroutineStart.UNDISPATCHED) { s.delete() }
                    val second = async(start = CoroutineStart.UNDISPATCHED) { s.acquire() }
                    val granted = first.await() as List<*> // the semaphore's creation: a slow path, whose reply is a place
                    granted[0] shouldBe "G"
                    (released.await() is Long) shouldBe true
                    deleted.await()
                    granted[2] as Long to second.await()
                }
                check(second.fencingToken > first) { "round $round: the token ${second.fencingToken} after the re-creation is not above $first" }
                s.release(second)
            }
        }
    }

    test("rolling resize across JVMs: handles configured with 10 work with the server's 8 until setPermits(10); then 10 are held at once") {
        val name = rollingName
        runBlocking {
            // The old version: two JVMs configured with 8, which created the semaphore.
            val a8 = a.semaphore(name, 8, fast)
            val b8 = b.semaphore(name, 8, fast)
            val heldA = a8.acquire(3)
            val heldB = b8.acquire(3)
            a8.totalPermits() shouldBe 8
            // The new version starts beside it, configured with 10: here, and in a worker JVM.
            val a10 = a.semaphore(name, 10, fast)
            val b10 = b.semaphore(name, 10, fast)
            a10.configuredPermits shouldBe 10
            a10.totalPermits() shouldBe 8
            worker.next("READY")
            worker.send("take")
            run {
                val (workerToken, workerPermits, workerSawTotal) = worker.next("HELD ").split(' ').drop(1).map { it.toLong() }
                workerPermits shouldBe 2L
                workerSawTotal shouldBe 8L // the worker, configured with 10, works with the server's 8
                // 3 + 3 + 2 = all 8 held: the 10-handles do not see 10.
                a10.availablePermits() shouldBe 0
                a10.tryAcquire().shouldBeNull()
                b10.tryAcquire().shouldBeNull()
                shouldThrow<IllegalArgumentException> { a10.acquire(9) }.message!! shouldContain "the total is 8"
                // A grant to a 10-handle is logged once, naming both totals (no failure). A grant at once does
                // not carry the total: the client asks for it in the background, once per name and total.
                b10.release(heldB)
                val moreB = b10.acquire(3)
                awaitCondition("the warning about the total") { warnings.any { "\"$name\"" in it } }
                warnings.filter { "\"$name\"" in it } shouldContainExactly listOf(
                    "the semaphore \"$name\" has 8 permits on the server, not the 10 its handle was configured with: " +
                        "the server's total stands (it changes only by addPermits, reducePermits or setPermits)",
                )
                // The roll is done: every instance sets the new total (idempotent: 10, not 12).
                a10.setPermits(10)
                b10.setPermits(10)
                a8.totalPermits() shouldBe 10
                b8.availablePermits() shouldBe 2
                val extraA = a10.acquire(1)
                val extraB = b8.acquire(1) // an old handle takes the new permits too
                // 3 + 3 + 2 (the worker) + 1 + 1: 10 held at once, in two JVMs.
                a8.availablePermits() shouldBe 0
                b10.tryAcquire().shouldBeNull()
                worker.send("release")
                val (releasedToken, _) = worker.next("").also { check(it.startsWith("RELEASED ")) { it } }.split(' ').drop(1).map { it.toLong() }
                releasedToken shouldBe workerToken
                a8.release(heldA)
                b10.release(moreB)
                a10.release(extraA)
                b8.release(extraB)
            }
            a8.availablePermits() shouldBe 10
            val all = a8.acquire(10) // an 8-handle may take all 10: the server's total is what counts
            a8.release(all)
        }
    }

})
