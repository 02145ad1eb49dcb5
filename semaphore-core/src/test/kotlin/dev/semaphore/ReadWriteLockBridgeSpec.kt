@file:OptIn(InternalSemaphoreApi::class)

package dev.semaphore

import dev.semaphore.bridge.HoldKind
import dev.semaphore.bridge.InternalSemaphoreApi
import dev.semaphore.bridge.JavaBridge
import dev.semaphore.bridge.LockHold
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.launch
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicReference
import kotlin.concurrent.thread
import kotlin.random.Random

private const val FOREVER = Long.MAX_VALUE

private fun ReadWriteLock.shouldBeFreeExactly() {
    withClue("lock: $this") {
        readHolds shouldBe 0
        isWriteLocked shouldBe false
        queueLength shouldBe 0
        (this as ReadWriteLockImpl).holdsSnapshot shouldBe 0L
        waiterQueue.availablePermits shouldBe ReadWriteLockImpl.TOTAL
    }
}

/**
 * [shouldBeFreeExactly] once the racing threads have settled (at most 5 s): a grant that lost to a
 * cancellation is handed back by the thread that made it (W3), which may finish just after the
 * canceller saw its future done.
 */
private fun ReadWriteLock.shouldBecomeFreeExactly() {
    val deadline = System.nanoTime() + 5_000_000_000L
    while ((queueLength != 0 || readHolds != 0 || isWriteLocked) && System.nanoTime() < deadline) Thread.yield()
    shouldBeFreeExactly()
}

private fun ReadWriteLock.future(kind: HoldKind, nanos: Long = FOREVER): CompletableFuture<LockHold> =
    JavaBridge.lockAsync(this, kind, nanos) { it }

// The bridge's calls, in the shape this spec was written in.
private fun ReadWriteLock.lockBlocking(kind: HoldKind, timeout: Long, unit: TimeUnit): LockHold? =
    JavaBridge.lockBlocking(this, kind, unit.toNanos(timeout)) { it }

private fun <T> ReadWriteLock.upgradeAsync(upgradable: LockHold?, timeout: Long, unit: TimeUnit, onGrant: (LockHold) -> T): CompletableFuture<T> =
    JavaBridge.upgradeAsync(this, upgradable, unit.toNanos(timeout), onGrant)

private fun ReadWriteLock.upgradeBlocking(upgradable: LockHold?, timeout: Long, unit: TimeUnit): LockHold? =
    JavaBridge.upgradeBlocking(this, upgradable, unit.toNanos(timeout)) { it }

private fun ReadWriteLock.downgrade(write: LockHold?): LockHold = JavaBridge.downgrade(this, write) { it }

private fun awaitQueued(lock: ReadWriteLock, n: Int) {
    val deadline = System.nanoTime() + 20_000_000_000L
    while (lock.queueLength != n) {
        check(System.nanoTime() < deadline) { "queueLength never became $n: $lock" }
        Thread.yield()
    }
}

/** The JVM bridge of ReadWriteLock (JavaBridge.kt): its holds, upgrade and downgrade, on the engine's one line. */
class ReadWriteLockBridgeSpec : FunSpec({
    test("futures, a blocked thread and a coroutine share one FIFO line; grants are recorded in the holds") {
        val lock = ReadWriteLock()
        val first = lock.future(HoldKind.READ).join()
        val writer = lock.future(HoldKind.WRITE)
        val threadHold = AtomicReference<LockHold?>()
        val t = thread { threadHold.set(lock.lockBlocking(HoldKind.READ, FOREVER, TimeUnit.NANOSECONDS)) }
        awaitQueued(lock, 2)
        @OptIn(kotlinx.coroutines.DelicateCoroutinesApi::class)
        val coroutine = GlobalScope.launch(Dispatchers.Unconfined, CoroutineStart.UNDISPATCHED) { lock.lockRead() }
        lock.queueLength shouldBe 3
        first.unlock()
        val write = writer.join()
        lock.isWriteLocked shouldBe true
        coroutine.isCompleted shouldBe false
        write.unlock()
        t.join(20_000)
        coroutine.join()
        lock.readHolds shouldBe 2
        threadHold.get()!!.unlock()
        lock.unlockRead()
        lock.shouldBeFreeExactly()
    }

    test("a hold ends once: a second unlock throws and changes nothing") {
        val lock = ReadWriteLock()
        val h1 = lock.future(HoldKind.WRITE).join()
        h1.unlock()
        val h2 = lock.future(HoldKind.WRITE).join()
        shouldThrow<IllegalStateException> { h1.unlock() }.message shouldContain "already ended"
        lock.isWriteLocked shouldBe true
        h2.unlock()
        lock.shouldBeFreeExactly()
    }

    test("downgrade and upgrade spend the hold passed in; its unlock then does nothing") {
        val lock = ReadWriteLock()
        val write = lock.future(HoldKind.WRITE).join()
        val read = lock.downgrade(write)
        write.unlock()
        lock.readHolds shouldBe 1
        read.unlock()
        val upgradable = lock.future(HoldKind.UPGRADABLE_READ).join()
        val upgraded = lock.upgradeAsync(upgradable, FOREVER, TimeUnit.NANOSECONDS) { it }.join()
        upgradable.unlock()
        lock.isWriteLocked shouldBe true
        upgraded.unlock()
        lock.shouldBeFreeExactly()
    }

    test("a failed upgrade keeps the upgradable read, as in Kotlin: timeout, zero timeout, interrupt; the hold upgrades later") {
        val lock = ReadWriteLock()
        val reader = lock.future(HoldKind.READ).join()
        val upgradable = lock.future(HoldKind.UPGRADABLE_READ).join()
        val timedOut = lock.upgradeAsync(upgradable, 20, TimeUnit.MILLISECONDS) { it }
        shouldThrow<java.util.concurrent.ExecutionException> { timedOut.get() }.cause as? TimeoutException
            ?: error("not a TimeoutException")
        lock.readHolds shouldBe 2
        lock.upgradeAsync(upgradable, 0, TimeUnit.NANOSECONDS) { it }.isCompletedExceptionally shouldBe true
        lock.readHolds shouldBe 2
        val thrown = AtomicReference<Throwable?>()
        val t = thread {
            try {
                lock.upgradeBlocking(upgradable, FOREVER, TimeUnit.NANOSECONDS)
            } catch (e: Throwable) {
                thrown.set(e)
            }
        }
        awaitQueued(lock, 1)
        t.interrupt()
        t.join(20_000)
        (thrown.get() is InterruptedException) shouldBe true
        lock.readHolds shouldBe 2
        lock.queueLength shouldBe 0
        val upgrade = lock.upgradeAsync(upgradable, FOREVER, TimeUnit.NANOSECONDS) { it }
        reader.unlock()
        val write = upgrade.join()
        lock.isWriteLocked shouldBe true
        upgradable.unlock() // spent by the upgrade: does nothing
        write.unlock()
        lock.shouldBeFreeExactly()
    }

    test("unlocking the upgradable hold while its upgrade waits withdraws the upgrade and ends the read") {
        val lock = ReadWriteLock()
        val reader = lock.future(HoldKind.READ).join()
        val upgradable = lock.future(HoldKind.UPGRADABLE_READ).join()
        val upgrade = lock.upgradeAsync(upgradable, FOREVER, TimeUnit.NANOSECONDS) { it }
        val laterReader = lock.future(HoldKind.READ)
        laterReader.isDone shouldBe false
        upgradable.unlock()
        upgrade.isCancelled shouldBe true
        lock.readHolds shouldBe 2 // the first reader and the later one, let in
        laterReader.join().unlock()
        shouldThrow<IllegalStateException> { upgradable.unlock() }.message shouldContain "already ended"
        reader.unlock()
        lock.shouldBeFreeExactly()
    }

    test("an upgrade granted in the instant it is cancelled or timed out keeps the upgradable read; closing it ends everything") {
        val lock = ReadWriteLock()
        repeat(2_000) {
            val reader = lock.future(HoldKind.READ).join()
            val upgradable = lock.future(HoldKind.UPGRADABLE_READ).join()
            val upgrade = lock.upgradeAsync(upgradable, Random.nextLong(0, 100_000), TimeUnit.NANOSECONDS) { it }
            val closer = thread { reader.unlock() }
            if (Random.nextBoolean()) Thread.yield()
            if (!upgrade.cancel(false) && !upgrade.isCompletedExceptionally) upgrade.join().unlock()
            upgradable.unlock() // at once: its hand-back (W3) may still be running on the closer's thread (H3)
            closer.join()
            lock.shouldBecomeFreeExactly()
        }
    }

    test("misuse throws and changes nothing") {
        val lock = ReadWriteLock()
        val read = lock.future(HoldKind.READ).join()
        shouldThrow<IllegalArgumentException> { lock.downgrade(read) }.message shouldContain "downgrade needs a WRITE hold"
        shouldThrow<IllegalArgumentException> { lock.upgradeAsync(null, FOREVER, TimeUnit.NANOSECONDS) { it } }
            .message shouldContain "no lock hold"
        val other = ReadWriteLock().future(HoldKind.UPGRADABLE_READ).join()
        shouldThrow<IllegalArgumentException> { lock.upgradeBlocking(other, FOREVER, TimeUnit.NANOSECONDS) }
        lock.readHolds shouldBe 1
        read.unlock()
        lock.shouldBeFreeExactly()
        // Kotlin code upgrading the (anonymous) upgradable read: the bridge's upgrade is refused, and the hold stays usable.
        val upgradable = lock.future(HoldKind.UPGRADABLE_READ).join()
        val blocker = lock.future(HoldKind.READ).join()
        @OptIn(kotlinx.coroutines.DelicateCoroutinesApi::class)
        val kotlinUpgrade = GlobalScope.launch(Dispatchers.Unconfined, CoroutineStart.UNDISPATCHED) { lock.upgrade() }
        shouldThrow<IllegalStateException> { lock.upgradeAsync(upgradable, FOREVER, TimeUnit.NANOSECONDS) { it } }
            .message shouldContain "in progress"
        kotlinUpgrade.cancel()
        kotlinUpgrade.join()
        blocker.unlock()
        upgradable.unlock()
        lock.shouldBeFreeExactly()
    }

    test("an upgrade of a closed lock fails and leaves the upgradable read with its handle (future and blocking)") {
        for (blocking in listOf(false, true)) {
            val lock = ReadWriteLock()
            val reader = lock.future(HoldKind.READ).join() // so the upgrade cannot be granted at once
            val upgradable = lock.future(HoldKind.UPGRADABLE_READ).join()
            val cause = RuntimeException("shutdown")
            lock.close(cause)
            if (blocking) {
                shouldThrow<SemaphoreClosedException> { lock.upgradeBlocking(upgradable, FOREVER, TimeUnit.NANOSECONDS) }.cause shouldBe cause
            } else {
                val upgrade = lock.upgradeAsync(upgradable, FOREVER, TimeUnit.NANOSECONDS) { it }
                upgrade.isCompletedExceptionally shouldBe true
                val failure = shouldThrow<java.util.concurrent.ExecutionException> { upgrade.get() }.cause
                (failure as SemaphoreClosedException).cause shouldBe cause
            }
            upgradable.unlock() // still the caller's: ends the upgradable read
            reader.unlock()
            lock.shouldBeFreeExactly()
        }
    }
})
