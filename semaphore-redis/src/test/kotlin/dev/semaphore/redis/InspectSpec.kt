package dev.semaphore.redis

import dev.semaphore.distributed.*

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeGreaterThanOrEqualTo
import io.kotest.matchers.comparables.shouldBeLessThanOrEqualTo
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import io.kotest.matchers.string.shouldStartWith
import io.lettuce.core.RedisClient
import io.lettuce.core.RedisURI
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * `inspect()`: who holds a semaphore or lock and who waits, as any JVM sees it, on a real server. The
 * client `named` has a name from its URI; `b` has the default one ("pid@host").
 */
class InspectSpec : FunSpec({
    val redis = TwoClients()
    val named = RedisSemaphoreClient.connect(redis.server.uri + "?clientName=inspector-a")
    afterSpec {
        named.close()
        redis.close()
    }
    val (server, _, b) = redis
    val fresh = redis::fresh

    test("holders and line: client id and name, permits, fencing token, time left; the line in order with the time waited") {
        runBlocking {
            val name = fresh("both")
            val config = DistributedConfig(leaseTime = 20.seconds)
            val s = named.semaphore(name, 3, config)
            val other = b.semaphore(name, 3, config)
            s.availablePermits() shouldBe 3 // created: the acquires below take the fast path
            val mine = s.acquire(2)
            val theirs = other.acquire(1)
            val waitsForTwo = async { other.acquire(2) }
            awaitCondition("queued") { s.queueLength() == 1 }
            delay(200)
            val waitsForOne = async { s.acquire(1) }
            awaitCondition("both queued") { s.queueLength() == 2 }

            val seen = s.inspect()
            seen.exists shouldBe true
            seen.totalPermits shouldBe 3
            seen.holderCount shouldBe 2
            seen.holders.size shouldBe 2
            val h1 = seen.holders.single { it.leaseId == mine.id }
            h1.clientId shouldBe named.clientId
            h1.clientName shouldBe "inspector-a"
            h1.permits shouldBe 2
            h1.fencingToken shouldBe mine.fencingToken
            h1.remaining shouldBeGreaterThan 10.seconds
            h1.remaining shouldBeLessThanOrEqualTo 20.seconds
            h1.isThisClient shouldBe true
            val h2 = seen.holders.single { it.leaseId == theirs.id }
            h2.clientId shouldBe b.clientId
            h2.clientName shouldBe b.clientName
            h2.permits shouldBe 1
            h2.fencingToken shouldBe theirs.fencingToken
            h2.isThisClient shouldBe false

            seen.heldPermits shouldBe 3 // while requests are queued (the free count is stored lowered, head.lua)
            seen.availablePermits shouldBe 0
            seen.queueLength shouldBe 2
            seen.line.map { it.permits } shouldBe listOf(2, 1)
            seen.line.map { it.position } shouldBe listOf(1, 2)
            seen.line.map { it.clientName } shouldBe listOf(b.clientName, "inspector-a")
            seen.line.map { it.isThisClient } shouldBe listOf(false, true)
            seen.line[0].clientId shouldBe b.clientId
            seen.line[0].waited shouldBeGreaterThanOrEqualTo 200.milliseconds // it joined at least 200 ms before the second
            seen.line[0].waited shouldBeGreaterThan seen.line[1].waited
            seen.line[1].waited shouldBeLessThanOrEqualTo 10.seconds

            // From the other client, the same picture with "this client" the other way round.
            val fromB = other.inspect()
            fromB.holders.single { it.leaseId == mine.id }.isThisClient shouldBe false
            fromB.line.map { it.isThisClient } shouldBe listOf(true, false)

            val dump = seen.toString()
            dump shouldContain "DistributedSemaphore \"$name\": 3 permits, 2 holders, 2 in line"
            dump shouldContain "${mine.id}: 2 permits, fencing token ${mine.fencingToken}"
            dump shouldContain "\"inspector-a\" (this client)"
            dump shouldContain "1. "
            dump shouldContain "2. "
            println(dump)

            // A grant from the line shows its token too.
            s.release(mine)
            val two = waitsForTwo.await()
            val afterGrant = s.inspect()
            afterGrant.holders.single { it.leaseId == two.id }.fencingToken shouldBe two.fencingToken
            afterGrant.queueLength shouldBe 1
            afterGrant.line.single().position shouldBe 1
            other.release(theirs)
            other.release(two)
            val one = waitsForOne.await()
            s.release(one)

            val empty = s.inspect()
            empty.exists shouldBe true
            empty.holders shouldBe emptyList()
            empty.holderCount shouldBe 0
            empty.line shouldBe emptyList()
            empty.queueLength shouldBe 0
            empty.heldPermits shouldBe 0
            empty.availablePermits shouldBe 3
            empty.toString() shouldBe "DistributedSemaphore \"$name\": 3 permits, 0 holders, 0 in line"
            server.reply("HKEYS", redisKeys(name)[0]).filter { '-' in it } shouldBe emptyList() // nothing of them is left
        }
    }

    test("at most limit entries per list, with the true counts; limit 0 gives the counts only") {
        runBlocking {
            val name = fresh("limit")
            val s = named.semaphore(name, 5)
            val leases = (1..5).map { s.acquire() }
            val waiters = (1..7).map { i ->
                async { s.acquire() }.also { awaitCondition("$i queued") { s.queueLength() == i } }
            }
            val full = s.inspect()
            full.holders.size shouldBe 5
            full.line.size shouldBe 7

            val cut = s.inspect(limit = 3)
            cut.holderCount shouldBe 5
            cut.holders.size shouldBe 3
            cut.heldPermits shouldBe 5 // all of them, not only those listed
            cut.queueLength shouldBe 7
            cut.line.map { it.requestId } shouldBe full.line.take(3).map { it.requestId } // the head of the line
            cut.line.map { it.position } shouldBe listOf(1, 2, 3)
            cut.holders.map { it.remaining } shouldBe cut.holders.map { it.remaining }.sorted() // soonest expiry first
            cut.toString() shouldContain "... and 2 more"
            cut.toString() shouldContain "... and 4 more"

            val counts = s.inspect(0)
            counts.holders shouldBe emptyList()
            counts.line shouldBe emptyList()
            counts.holderCount shouldBe 5
            counts.queueLength shouldBe 7
            counts.heldPermits shouldBe 5
            counts.availablePermits shouldBe 0

            leases.forEach { s.release(it) }
            waiters.forEach { s.release(it.await()) } // in line order: each release lets the next in
            s.inspect().holderCount shouldBe 0
        }
    }

    test("read-only: a lease past its expiry and a request past its heartbeat deadline are left out, though not yet purged; nothing is created") {
        runBlocking {
            val name = fresh("expired")
            val s = named.semaphore(name, 1)
            val nothing = s.inspect()
            nothing.exists shouldBe false
            nothing.holderCount shouldBe 0
            nothing.heldPermits shouldBe 0
            nothing.toString() shouldContain "not on the server"
            server.existingKeys(name) shouldBe 0 // inspect did not create it

            s.availablePermits() shouldBe 1 // created
            // A holder and a waiter of clients that died: no renewal, no heartbeat (raw scripts, ids of another library).
            (named.raw(Script.acquire, name, "dead-holder", "1", "400", "400", "queue") is Long) shouldBe true
            (named.raw(Script.acquire, name, "dead-waiter", "1", "30000", "400", "queue") as List<*>)[0] shouldBe "Q"
            val live = s.inspect()
            live.holders.single().run {
                leaseId shouldBe "dead-holder"
                clientId shouldBe "dead-holder" // not an id of this library: the whole id, no name
                clientName.shouldBeNull()
                fencingToken shouldBeGreaterThan 0L
            }
            live.line.single().requestId shouldBe "dead-waiter"
            live.heldPermits shouldBe 1
            live.availablePermits shouldBe 0

            delay(700)
            val later = s.inspect()
            later.holderCount shouldBe 0
            later.holders shouldBe emptyList()
            later.queueLength shouldBe 0
            later.line shouldBe emptyList()
            later.heldPermits shouldBe 0 // the expired lease is not counted, though the free count still counts it
            later.availablePermits shouldBe 1
            server.keySizes(name).drop(1) shouldBe listOf(2, 2, 2) // still on the server: inspect purged nothing
            s.availablePermits() shouldBe 1 // the next operation purges them
            server.keySizes(name).drop(1) shouldBe listOf(1, 1, 1)
        }
    }

    test("heldPermits counts every live lease; availablePermits goes below zero while a reduction is repaid, as availablePermits() does") {
        runBlocking {
            val name = fresh("debt")
            val s = named.semaphore(name, 4)
            val three = s.acquire(3)
            val one = b.semaphore(name, 4).acquire(1)
            s.reducePermits(3)
            val seen = s.inspect(limit = 1)
            seen.totalPermits shouldBe 1
            seen.heldPermits shouldBe 4
            seen.availablePermits shouldBe -3
            seen.availablePermits shouldBe s.availablePermits()
            s.release(three)
            s.inspect().availablePermits shouldBe 0
            b.semaphore(name, 4).release(one)
            s.inspect().let {
                it.heldPermits shouldBe 0
                it.availablePermits shouldBe 1
            }
        }
    }

    test("a lock shows its holder, with its owner in the JVM that holds it, and its line") {
        runBlocking {
            val name = fresh("lock")
            val lock = named.lock(name)
            val owner = Any()
            val lease = lock.lock(owner)
            val waiter = async { b.lock(name).lock() }
            awaitCondition("queued") { lock.queueLength() == 1 }

            val seen = lock.inspect()
            seen.isLocked shouldBe true
            val holder = seen.holder.shouldNotBeNull()
            holder.leaseId shouldBe lease.id
            holder.fencingToken shouldBe lease.fencingToken
            holder.clientName shouldBe "inspector-a"
            seen.owner shouldBe owner
            seen.queueLength shouldBe 1
            seen.line.single().clientName shouldBe b.clientName
            seen.toString() shouldContain "DistributedLock \"$name\": locked, 1 in line, owner $owner"

            val fromB = b.lock(name).inspect(limit = 0)
            fromB.holder.shouldNotBeNull().isThisClient shouldBe false
            fromB.owner.shouldBeNull() // owners are objects of the JVM that holds the lock
            fromB.line shouldBe emptyList()
            fromB.queueLength shouldBe 1

            lock.unlock(lease)
            val next = waiter.await()
            val after = lock.inspect()
            after.holder.shouldNotBeNull().fencingToken shouldBe next.fencingToken
            after.owner.shouldBeNull() // locked without an owner
            b.lock(name).unlock(next)
            lock.inspect().isLocked shouldBe false
        }
    }

    test("another JVM's holder and waiter are listed with that client's name") {
        val name = fresh("jvm")
        // The holder's client has no name: the default, "pid@host" of its JVM. The waiter's is named by its URI.
        WorkerProcess("take", server.uri, name, "2", "2", "30000", "stdin").use { holder ->
            val token = holder.next("HELD ").split(' ')[1].toLong()
            WorkerProcess("wait", server.uri + "?clientName=worker-7", name, "2").use { waiter ->
                waiter.next("QUEUED")
                runBlocking {
                    val seen = named.semaphore(name, 2).inspect()
                    val h = seen.holders.single()
                    h.permits shouldBe 2
                    h.fencingToken shouldBe token
                    h.clientName.shouldNotBeNull() shouldStartWith "${holder.pid}"
                    h.isThisClient shouldBe false
                    h.remaining shouldBeGreaterThan 20.seconds
                    val w = seen.line.single()
                    w.clientName shouldBe "worker-7"
                    w.permits shouldBe 1
                    w.isThisClient shouldBe false
                    w.clientId shouldBe w.requestId.substringBefore('-')

                    holder.send("release")
                    holder.next("RELEASED ")
                    val got = waiter.next("GOT ").split(' ')[1].toLong()
                    val granted = named.semaphore(name, 2).inspect().holders.single()
                    granted.clientName shouldBe "worker-7"
                    granted.fencingToken shouldBe got
                }
            }
        }
    }

    test("a bad limit is refused with its value, nothing sent; client names: from the URI or Lettuce's client, encoded in the ids, checked") {
        runBlocking {
            val s = named.semaphore(fresh("bad"), 1)
            shouldThrow<IllegalArgumentException> { s.inspect(-1) }.message shouldContain "between 0 and 1000, was -1"
            shouldThrow<IllegalArgumentException> { s.inspect(1001) }.message shouldContain "was 1001"
            shouldThrow<IllegalArgumentException> { named.lock("bad-lock").inspect(-5) }.message shouldContain "was -5"
        }
        named.clientName shouldBe "inspector-a"
        b.clientName shouldStartWith "${ProcessHandle.current().pid()}"

        val long = "x".repeat(65)
        shouldThrow<IllegalArgumentException> { RedisSemaphoreClient.connect("${server.uri}?clientName=$long") }.message shouldContain "was \"$long\""

        // Through a Lettuce client the application made: the name of its connections. One with the scripts'
        // separators: the ids carry it encoded, and the inspection reads it back.
        val resources = quickReconnects()
        val lettuce = RedisClient.create(resources, RedisURI.builder().withHost("127.0.0.1").withPort(server.port).withClientName("billing:eu,1%").build())
        try {
            RedisSemaphoreClient.connect(lettuce).use { odd ->
                odd.clientName shouldBe "billing:eu,1%"
                runBlocking {
                    val s = odd.semaphore(fresh("odd"), 1)
                    val lease = s.acquire()
                    lease.id shouldNotContain ":"
                    lease.id shouldNotContain ","
                    s.inspect().holders.single().clientName shouldBe "billing:eu,1%"
                    s.release(lease)
                }
            }
        } finally {
            lettuce.shutdown()
            resources.shutdown()
        }
    }
})
