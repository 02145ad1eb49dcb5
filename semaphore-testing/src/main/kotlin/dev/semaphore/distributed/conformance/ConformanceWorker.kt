package dev.semaphore.distributed.conformance

import dev.semaphore.distributed.DistributedConfig
import dev.semaphore.distributed.DistributedSemaphoreClient
import dev.semaphore.distributed.LeaseLostException
import dev.semaphore.distributed.SemaphoreHandle
import dev.semaphore.distributed.withPermit
import dev.semaphore.testing.JvmProcess
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlin.random.Random
import kotlin.system.exitProcess
import kotlin.time.Duration.Companion.milliseconds

/**
 * A separate JVM for the conformance suite's multi-process tests, on either engine: its first two arguments are the
 * client class (`dev.semaphore.redis.RedisSemaphoreClient` or `dev.semaphore.postgres.PostgresSemaphoreClient`, whose
 * static `connect(String)` makes the client) and the server's URL. Prints one line per event on stdout.
 *
 *   CLIENT URL history NAME TOTAL COROUTINES ROUNDS
 *       each coroutine acquires 1 or 2 permits, holds them a few ms, releases; per grant it prints
 *       "LEASE token permits queueNumber lastTokenAtRelease", then "DONE".
 *   CLIENT URL hold NAME LEASE_MS
 *       holds the one permit of NAME in withPermit (renewed) and prints "HELD token"; if the lease is lost it prints
 *       "LOST message" and exits with 3.
 *   CLIENT URL wait NAME
 *       queues for the one permit of NAME and prints "QUEUED" once the request is in line (then "GOT token").
 */
object ConformanceWorker {
    @JvmStatic
    fun main(args: Array<String>): Unit = runBlocking {
        val (clientClass, url, mode, name) = args
        val client = Class.forName(clientClass).getMethod("connect", String::class.java).invoke(null, url) as DistributedSemaphoreClient
        when (mode) {
            "history" -> {
                val total = args[4].toInt()
                val s = client.semaphore(name, total) as SemaphoreHandle
                coroutineScope {
                    repeat(args[5].toInt()) {
                        launch {
                            repeat(args[6].toInt()) {
                                val lease = s.acquire(if (total > 1 && Random.nextInt(4) == 0) 2 else 1)
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
                val s = client.semaphore(name, 1, DistributedConfig(leaseTime = args[4].toLong().milliseconds))
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
                val s = client.semaphore(name, 1, DistributedConfig(waiterTimeToLive = 1000.milliseconds, heartbeatInterval = 200.milliseconds))
                coroutineScope {
                    val got = launch { say("GOT ${s.acquire().fencingToken}") }
                    while (s.queueLength() == 0 && got.isActive) delay(10)
                    say("QUEUED")
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

/** A [ConformanceWorker] in its own JVM (the test's class path). */
class ConformanceWorkerProcess(vararg args: String) :
    JvmProcess(ConformanceWorker::class.java.name, args.toList(), listOf("-Xmx256m", "-XX:TieredStopAtLevel=1"))
