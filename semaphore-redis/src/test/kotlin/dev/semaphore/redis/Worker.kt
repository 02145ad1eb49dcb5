package dev.semaphore.redis

import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlin.random.Random
import kotlin.system.exitProcess
import kotlin.time.Duration.Companion.milliseconds

/**
 * A separate JVM for the multi-process tests (MultiProcessSpec starts it with the test class path).
 * Prints one line per event on stdout; the parent reads them.
 *
 *   history URI NAME TOTAL COROUTINES ROUNDS
 *       each coroutine acquires 1 or 2 permits, holds them a few ms, releases; per grant it prints
 *       "LEASE token permits queueNumber lastTokenAtRelease", then "DONE".
 *   hold URI NAME TOTAL LEASE_MS
 *       holds 1 permit in withPermit (renewed) and prints "HELD token"; if the lease is lost it prints
 *       "LOST message" and exits with 3.
 *   wait URI NAME TOTAL
 *       queues for 1 permit and prints "QUEUED" once the request is in line (then "GOT token").
 *   demo URI NAME TOTAL LEASE_MS
 *       forever: holds 1 permit for 800 ms in withPermit, printing "HOLDS token" and "RELEASES token".
 */
object Worker {
    @JvmStatic
    fun main(args: Array<String>): Unit = runBlocking {
        val (mode, uri, name, total) = args
        val client = RedisSemaphoreClient.connect(uri)
        when (mode) {
            "history" -> {
                val s = client.semaphore(name, total.toInt()) as RedisSemaphoreHandle
                coroutineScope {
                    repeat(args[4].toInt()) {
                        launch {
                            repeat(args[5].toInt()) {
                                val lease = s.acquire(if (total.toInt() > 1 && Random.nextInt(4) == 0) 2 else 1)
                                delay(Random.nextLong(1, 5))
                                val last = s.releaseReportingLastToken(lease)
                                say("LEASE ${lease.fencingToken} ${lease.permits} ${lease.queueNumber} $last")
                            }
                        }
                    }
                }
                say("DONE")
            }
            "hold" -> {
                val leaseTime = args[4].toLong().milliseconds
                val s = client.semaphore(name, total.toInt(), RedisSemaphoreConfig(leaseTime = leaseTime))
                try {
                    s.withPermit { lease ->
                        say("HELD ${lease.fencingToken}")
                        delay(Long.MAX_VALUE)
                    }
                } catch (e: LeaseLostException) {
                    say("LOST ${e.message}")
                    exitProcess(3)
                }
            }
            "wait" -> {
                val s = client.semaphore(name, total.toInt(), RedisSemaphoreConfig(waiterTimeToLive = 1000.milliseconds, heartbeatInterval = 200.milliseconds))
                coroutineScope {
                    val got = launch { say("GOT ${s.acquire().fencingToken}") }
                    while (s.queueLength() == 0 && got.isActive) delay(10)
                    say("QUEUED")
                }
            }
            "demo" -> {
                val leaseTime = args[4].toLong().milliseconds
                val s = client.semaphore(name, total.toInt(), RedisSemaphoreConfig(leaseTime = leaseTime, heartbeatInterval = 100.milliseconds))
                while (true) {
                    s.withPermit { lease ->
                        say("HOLDS ${lease.fencingToken}")
                        delay(800)
                        say("RELEASES ${lease.fencingToken}")
                    }
                    delay(50)
                }
            }
            else -> error("unknown mode $mode")
        }
        client.close()
    }

    private fun say(line: String) = synchronized(this) {
        println(line)
        System.out.flush()
    }
}
