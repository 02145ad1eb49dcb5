/*
 * The demo the README's first command runs: a Semaphore throttling coroutines, a PrioritySemaphore
 * serving urgent work first, a timeout, and a cancellation, each printed in a few lines.
 */
package dev.semaphore.examples

import dev.semaphore.PrioritySemaphore
import dev.semaphore.Semaphore
import dev.semaphore.withPermit
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.measureTime

/** Runs the four scenes of the demo. */
fun main(): Unit = runBlocking {
    println("== semaphore demo ==")
    throttling()
    priorities()
    timeout()
    cancellation()
    println("== done ==")
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
    val got = semaphore.tryAcquire(permits = 1, timeout = 50.milliseconds)
    println("3. timeout: tryAcquire(timeout = 50ms) while all permits are held returned $got; queue length ${semaphore.queueLength}")
    semaphore.release(2)
    println("   after the holder releases: ${semaphore.availablePermits}/2 permits free, nothing lost")
}

/** A waiter cancelled in the queue leaves it, and the one behind it is served. */
private suspend fun cancellation() = coroutineScope {
    val semaphore = Semaphore(3)
    semaphore.acquire(2)
    val big = launch { semaphore.withPermit(permits = 3) { println("   never printed") } }
    val small = launch { semaphore.withPermit { println("   the small request behind it runs now") } }
    yield()
    println("4. cancellation: a request for 3 permits waits at the head (1 free), a request for 1 waits behind it (queue ${semaphore.queueLength})")
    big.cancel()
    small.join()
    semaphore.release(2)
    println("   after cancelling the big one: queue ${semaphore.queueLength}, permits ${semaphore.availablePermits}/3")
}
