/*
 * The demo that the README's "Run it" starts first: a Semaphore throttling coroutines, a PrioritySemaphore
 * serving urgent work first, a timeout, a cancellation, and a ReadWriteLock (readers together, a
 * queued writer holding back later readers, an upgrade), each printed in a few lines, and a stall on
 * purpose: who holds, who waits, and a deadlock found. The read-write and stall scenes check their
 * claims: a false one ends the program with an exception (and CI fails).
 */
package dev.semaphore.examples

import dev.semaphore.Diagnostics
import dev.semaphore.Lock
import dev.semaphore.PrioritySemaphore
import dev.semaphore.ReadWriteLock
import dev.semaphore.Semaphore
import dev.semaphore.Tracking
import dev.semaphore.withLock
import dev.semaphore.withPermit
import dev.semaphore.withReadLock
import dev.semaphore.withUpgradableReadLock
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.measureTime

/** Runs the six scenes of the demo. */
fun main(): Unit = runBlocking {
    println("== semaphore demo ==")
    throttling()
    priorities()
    timeout()
    cancellation()
    readWrite()
    stall()
    println("== done ==")
}

/**
 * A stall on purpose: a stuck coroutine holds the pool's permits while others wait, and two transfers
 * take two locks in opposite orders. The dump says who holds and who waits; the deadlock is found.
 */
private suspend fun stall() = coroutineScope {
    val db = Semaphore(2, Diagnostics(name = "db", tracking = Tracking.HOLDERS))
    val stuck = launch(CoroutineName("stuck-report")) { db.withPermit(2) { delay(Long.MAX_VALUE) } }
    val queries = List(2) { i -> launch(CoroutineName("query-$i")) { db.withPermit { } } }
    while (db.queueLength < 2) delay(1)
    println("6. a stall on purpose; the pool's dump:")
    println(db.dump().prependIndent("   "))
    check(db.holders().single().holder.startsWith("coroutine \"stuck-report\"")) { db.dump() }
    check(db.waiters().size == 2) { db.dump() }
    stuck.cancel()
    queries.forEach { it.join() }

    val accounts = Lock(diagnostics = Diagnostics(name = "accounts", detectDeadlocksAfter = 100.milliseconds))
    val ledger = Lock(diagnostics = Diagnostics(name = "ledger", detectDeadlocksAfter = 100.milliseconds))
    val firstLocks = CompletableDeferred<Unit>()
    val t1 = launch(CoroutineName("transfer-1")) { accounts.withLock { firstLocks.await(); ledger.withLock { } } }
    val t2 = launch(CoroutineName("transfer-2")) { ledger.withLock { firstLocks.await(); accounts.withLock { } } }
    while (!accounts.isLocked || !ledger.isLocked) delay(1)
    firstLocks.complete(Unit)
    while (accounts.queueLength + ledger.queueLength < 2) delay(1)
    val deadlock = Diagnostics.findDeadlocks().single()
    println("   two transfers taking two locks in opposite orders; Diagnostics.findDeadlocks():")
    println(deadlock.toString().prependIndent("   "))
    check(deadlock.participants.size == 2) { deadlock.toString() }
    t2.cancel() // one gives up: the other goes on
    t1.join()
}

/** 50 downloads, at most 4 at a time, on a multi-threaded dispatcher. */
private suspend fun throttling() {
    val semaphore = Semaphore(4)
    val running = AtomicInteger()
    val maxRunning = AtomicInteger()
    val took = measureTime {
        coroutineScope {
            repeat(50) {
                launch(Dispatchers.Default) {
                    semaphore.withPermit {
                        maxRunning.accumulateAndGet(running.incrementAndGet(), ::maxOf)
                        delay(10) // "download"
                        running.decrementAndGet()
                    }
                }
            }
        }
    }
    println(
        "1. throttling: 50 downloads through Semaphore(4): at most ${maxRunning.get()} ran at once, " +
            "all done in ${took.inWholeMilliseconds} ms; permits back: ${semaphore.availablePermits}/4",
    )
}

/** One worker slot; batch jobs queue first, then urgent ones arrive and are served before them. */
private suspend fun priorities() = coroutineScope {
    val pool = PrioritySemaphore(permits = 1)
    val served = mutableListOf<String>()
    pool.acquire() // the slot is busy while the queue fills
    for (i in 1..3) launch { pool.withPermit(priority = 0) { served += "batch-$i" } }
    yield()
    for (i in 1..2) launch { pool.withPermit(priority = 10) { served += "URGENT-$i" } }
    yield()
    println("2. priorities: queued ${pool.queueLength(0)} batch jobs (priority 0), then ${pool.queueLength(10)} urgent (priority 10)")
    pool.release()
    while (served.size < 5) yield()
    println("   served in order: ${served.joinToString(" ")}")
}

/** A request that cannot be met in time gives up with nothing held. */
private suspend fun timeout() {
    val semaphore = Semaphore(2)
    semaphore.acquire(2) // everything is held elsewhere
    val got = semaphore.tryAcquire(50.milliseconds)
    println("3. timeout: tryAcquire(50.milliseconds) while all permits are held returned $got; queue length ${semaphore.queueLength}")
    semaphore.release(2)
    println("   after the holder releases: ${semaphore.availablePermits}/2 permits free, nothing lost")
}

/** A waiter cancelled in the queue leaves it, and the one behind it is served. */
private suspend fun cancellation() = coroutineScope {
    val semaphore = Semaphore(3)
    semaphore.acquire(2)
    var bigRan = false
    var smallRan = false
    val big = launch { semaphore.withPermit(permits = 3) { bigRan = true } }
    val small = launch { semaphore.withPermit { smallRan = true } }
    yield()
    check(!smallRan && semaphore.queueLength == 2) { "expected both requests queued: $semaphore" }
    println("4. cancellation: a request for 3 permits waits at the head (1 free), a request for 1 waits behind it (queue ${semaphore.queueLength})")
    big.cancel()
    small.join()
    check(!bigRan && smallRan) { "big ran: $bigRan, small ran: $smallRan" }
    println("   the big request was cancelled; the small one behind it was then served with the free permit")
    semaphore.release(2)
    println("   once the first holder released: queue ${semaphore.queueLength}, permits ${semaphore.availablePermits}/3")
}

/**
 * A cache behind a ReadWriteLock: two readers share it; a writer queues behind them and the reader
 * that comes after the writer waits for it (no writer starvation); then an upgradable reader fills a
 * missing entry without letting a writer in between.
 */
private suspend fun readWrite() = coroutineScope {
    val lock = ReadWriteLock()
    val cache = mutableMapOf("a" to 1)
    val events = mutableListOf<String>()
    lock.lockRead()
    lock.lockRead() // two readers hold it together
    val writer = launch { lock.lockWrite(); cache["a"] = 2; events += "writer wrote a=2"; lock.unlockWrite() }
    yield()
    val lateReader = launch { lock.withReadLock { events += "late reader saw a=${cache["a"]}" } }
    yield()
    check(lock.readHolds == 2 && lock.queueLength == 2) { "expected 2 readers and 2 queued: $lock" }
    println("5. read-write: ${lock.readHolds} readers share the lock; a writer and a later reader wait (queue ${lock.queueLength})")
    lock.unlockRead()
    lock.unlockRead()
    writer.join()
    lateReader.join()
    check(events == listOf("writer wrote a=2", "late reader saw a=2")) { "served out of order: $events" }
    println("   served in order: ${events.joinToString(", ")}")
    val value = lock.withUpgradableReadLock {
        cache["b"] ?: run {
            lock.upgrade() // the readers inside finish first; no writer gets in between
            cache.getOrPut("b") { 42 }
        }
    }
    check(value == 42 && !lock.isWriteLocked && lock.readHolds == 0) { "after the upgrade: $lock" }
    println("   an upgradable reader found b missing, upgraded and stored b=$value; the lock is free again: ${lock.readHolds == 0 && !lock.isWriteLocked}")
}
