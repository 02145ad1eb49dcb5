package dev.semaphore.distributed.conformance

import dev.semaphore.distributed.DistributedConfig
import dev.semaphore.distributed.DistributedSemaphoreClient
import dev.semaphore.distributed.LeaseLostException
import dev.semaphore.distributed.SemaphoreHandle
import dev.semaphore.distributed.withPermit
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import java.io.File
import java.io.IOException
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit
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

/** A [ConformanceWorker] in its own JVM (the test's class path); its stdout lines are collected as they come. */
class ConformanceWorkerProcess(vararg args: String) : AutoCloseable {
    private val errors: File = File.createTempFile("conformance-worker-", ".err")
    val process: Process = ProcessBuilder(
        File(System.getProperty("java.home"), "bin/java").path, "-Xmx256m", "-XX:TieredStopAtLevel=1",
        "-cp", System.getProperty("java.class.path"), ConformanceWorker::class.java.name, *args,
    ).redirectError(errors).start()
    private val lines = LinkedBlockingQueue<String>()

    @Volatile
    private var closing = false

    init {
        Thread {
            try {
                process.inputStream.bufferedReader().forEachLine { lines.add(it) }
            } catch (e: IOException) {
                if (!closing) throw e // close() closes the stream under a blocked read: expected there only
            }
        }.apply { isDaemon = true }.start()
    }

    /** The next line starting with [prefix] (lines before it are dropped), waiting at most [seconds]. */
    fun next(prefix: String, seconds: Long = 60): String {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
        while (true) {
            val left = deadline - System.nanoTime()
            val line = lines.poll(maxOf(left, 0), TimeUnit.NANOSECONDS)
                ?: error("no \"$prefix\" line from the worker within $seconds s; its stderr: ${errors.readText().take(4000)}")
            if (line.startsWith(prefix)) return line
        }
    }

    fun exitCode(seconds: Long = 60): Int {
        check(process.waitFor(seconds, TimeUnit.SECONDS)) { "the worker did not exit within $seconds s" }
        return process.exitValue()
    }

    /** Sends [signal] ("KILL", "STOP", "CONT") to the process. */
    fun signal(signal: String) {
        check(ProcessBuilder("kill", "-$signal", "${process.pid()}").start().waitFor() == 0) { "kill -$signal failed" }
    }

    override fun close() {
        closing = true
        process.destroyForcibly().waitFor()
        errors.delete()
    }
}
