package dev.semaphore.redis

import dev.semaphore.distributed.*

import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlin.random.Random
import kotlin.system.exitProcess
import kotlin.time.Duration.Companion.milliseconds

/**
 * A separate JVM for the Redis specs that need another process (LeaseKeepingSpec, ResizeAndDeleteSpec, InspectSpec; the
 * multi-process checks both engines pass are the conformance suite's, ConformanceWorker).
 * Prints one line per event on stdout; the parent reads them.
 *
 *   wait URI NAME TOTAL
 *       queues for 1 permit and prints "QUEUED" once the request is in line (then "GOT token").
 *   take URI NAME TOTAL PERMITS LEASE_MS HOLD [START]
 *       takes PERMITS permits with acquire() (not withPermit: the client renews the lease by itself)
 *       from a handle configured with TOTAL and a lease time of LEASE_MS, and prints
 *       "HELD token permits serverTotal". Holds them for HOLD ms, or until a line arrives on stdin
 *       (HOLD = "stdin"), or forever (HOLD = "forever"), checking every 50 ms that the lease is not lost;
 *       then renews it once, releases it and prints "RELEASED token lastTokenAtRelease". If the lease
 *       is lost it prints "LOST message" and exits with 3. With START = "stdin" it connects, prints
 *       "READY" and waits for a line on stdin before it acquires (so that a test can start the JVM early).
 */
object Worker {
    @JvmStatic
    fun main(args: Array<String>): Unit = runBlocking {
        val (mode, uri, name, total) = args
        val client = RedisSemaphoreClient.connect(uri)
        when (mode) {
            "wait" -> {
                val s = client.semaphore(name, total.toInt(), DistributedConfig(waiterTimeToLive = 1000.milliseconds, heartbeatInterval = 200.milliseconds))
                coroutineScope {
                    val got = launch { say("GOT ${s.acquire().fencingToken}") }
                    while (s.queueLength() == 0 && got.isActive) delay(10)
                    say("QUEUED")
                }
            }
            "take" -> take(
                client.semaphore(name, total.toInt(), DistributedConfig(leaseTime = args[5].toLong().milliseconds)) as SemaphoreHandle,
                args[4].toInt(),
                args[6],
                args.getOrNull(7) == "stdin",
            )
            else -> error("unknown mode $mode")
        }
        client.close()
    }

    /** The "take" mode: see the class. */
    private suspend fun take(s: SemaphoreHandle, permits: Int, hold: String, startOnStdin: Boolean) {
        val stdin = java.util.concurrent.LinkedBlockingQueue<String>()
        Thread {
            while (true) stdin.put(readlnOrNull() ?: break)
        }.apply { isDaemon = true }.start()
        if (startOnStdin) {
            say("READY")
            while (stdin.poll() == null) delay(10)
        }
        val lease = s.acquire(permits)
        say("HELD ${lease.fencingToken} ${lease.permits} ${s.totalPermits()}")
        val heldAt = kotlin.time.TimeSource.Monotonic.markNow()
        fun done(): Boolean = when (hold) {
            "stdin" -> stdin.poll() != null
            "forever" -> false
            else -> heldAt.elapsedNow() >= hold.toLong().milliseconds
        }
        try {
            while (!done()) {
                if (lease.isLost || !lease.remaining.isPositive()) {
                    say("LOST while held: isLost=${lease.isLost} remaining=${lease.remaining}")
                    exitProcess(3)
                }
                delay(50)
            }
            s.renew(lease)
            val last = s.releaseReportingLastToken(lease)
            say("RELEASED ${lease.fencingToken} $last")
        } catch (e: LeaseLostException) {
            say("LOST ${e.message}")
            exitProcess(3)
        }
    }

    private fun say(line: String) = synchronized(this) {
        println(line)
        System.out.flush()
    }
}
