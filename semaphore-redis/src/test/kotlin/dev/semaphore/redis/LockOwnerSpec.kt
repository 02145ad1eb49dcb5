package dev.semaphore.redis

import dev.semaphore.distributed.*

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** DistributedLock's owners: not reentrant (the same owner locking again is refused at once), holdsLock, and owners that let go. */
class LockOwnerSpec : FunSpec({
    val redis = TwoClients()
    afterSpec { redis.close() }
    val (server, a, b) = redis
    val fresh = redis::fresh
    val fast = DistributedConfig(waiterTimeToLive = 2.seconds, heartbeatInterval = 200.milliseconds)

    test("the same owner locking again throws IllegalStateException at once, and its first hold is unaffected; another owner waits") {
        runBlocking {
            val name = fresh("owner")
            val lock = a.lock(name, fast)
            val first = Any()
            val second = Any()
            val lease = lock.lock(first)
            lock.holdsLock(first) shouldBe true
            lock.holdsLock(second) shouldBe false
            val again = shouldThrow<IllegalStateException> { withTimeout(2.seconds) { lock.lock(first) } }
            again.message!! shouldContain "already holds"
            again.message!! shouldContain "not reentrant"
            shouldThrow<IllegalStateException> { lock.tryLock(first) }
            shouldThrow<IllegalStateException> { withTimeout(2.seconds) { lock.tryLock(1.seconds, first) } }
            shouldThrow<IllegalStateException> { a.lock(name, fast).lock(first) } // another handle of the same client: the same owners
            lock.queueLength() shouldBe 0 // refused before anything was sent
            lock.holdsLock(first) shouldBe true
            lease.isLost shouldBe false
            lock.isLocked() shouldBe true

            val waiting = async { lock.lock(second) } // another owner waits in line
            awaitCondition("queued") { lock.queueLength() == 1 }
            delay(200)
            waiting.isActive shouldBe true
            lock.holdsLock(second) shouldBe false
            shouldThrow<IllegalStateException> { lock.tryLock(second) } // locking, even before it holds, is refused too
            lock.unlock(lease)
            lock.holdsLock(first) shouldBe false
            val secondLease = withTimeout(5.seconds) { waiting.await() }
            secondLease.fencingToken shouldBeGreaterThan lease.fencingToken
            lock.holdsLock(second) shouldBe true
            // `first` let go: it may lock again (in line behind `second`).
            lock.tryLock(first).shouldBeNull()
            lock.holdsLock(first) shouldBe false
            lock.unlock(secondLease)
            lock.holdsLock(second) shouldBe false
            val again2 = lock.lock(first)
            lock.holdsLock(first) shouldBe true
            lock.unlock(again2)
            lock.isLocked() shouldBe false
        }
    }

    test("an owner that timed out with tryLock(timeout, owner) holds nothing and can lock again; so can one whose lease was lost") {
        runBlocking {
            val name = fresh("owner-timeout")
            val lock = a.lock(name, fast)
            val other = b.lock(name, fast) // another JVM holds it
            val held = other.lock()
            val owner = Any()
            lock.tryLock(300.milliseconds, owner).shouldBeNull()
            lock.holdsLock(owner) shouldBe false
            lock.queueLength() shouldBe 0
            lock.tryLock(300.milliseconds, owner).shouldBeNull() // not refused as "already locking"
            other.unlock(held)
            val lease = lock.tryLock(1.seconds, owner).shouldNotBeNull()
            lock.holdsLock(owner) shouldBe true
            lock.unlock(lease)

            // A fixed lease that runs out: its owner no longer holds the lock, and may lock again.
            val fixed = a.lock(name, DistributedConfig(leaseTime = 300.milliseconds, autoRenew = false))
            val lost = fixed.lock(owner)
            fixed.holdsLock(owner) shouldBe true
            shouldThrow<LeaseLostException> { withTimeout(5.seconds) { lost.awaitEnd() } }
            fixed.holdsLock(owner) shouldBe false
            val next = fixed.lock(owner)
            next.fencingToken shouldBeGreaterThan lost.fencingToken
            fixed.unlock(next)
            lock.holdsLock(owner) shouldBe false
        }
    }

    test("owners are per lock name: one owner may hold two locks") {
        runBlocking {
            val owner = Any()
            val one = a.lock(fresh("owner-x"), fast)
            val two = a.lock(fresh("owner-y"), fast)
            val l1 = one.lock(owner)
            val l2 = two.lock(owner)
            one.holdsLock(owner) shouldBe true
            two.holdsLock(owner) shouldBe true
            one.unlock(l1)
            one.holdsLock(owner) shouldBe false
            two.holdsLock(owner) shouldBe true
            two.unlock(l2)
        }
    }
})
