package dev.semaphore.redis

import dev.semaphore.distributed.*

import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

/*
 * What the newer specs read on the server behind the client's back (raw commands on a socket of their
 * own, LocalRedisServer.reply), and their bounded wait.
 */

/** Waits (real time, at most [timeout]) until [condition] holds; fails naming [what] otherwise. */
internal suspend fun awaitCondition(what: String, timeout: Duration = 20.seconds, condition: suspend () -> Boolean) {
    try {
        withTimeout(timeout) { while (!condition()) delay(10) }
    } catch (e: kotlinx.coroutines.TimeoutCancellationException) {
        throw AssertionError("not within $timeout: $what", e)
    }
}

/** The server's clock (TIME) in ms: the clock the scripts count expiries by (R1). */
internal fun LocalRedisServer.timeMs(): Long {
    val (seconds, micros) = reply("TIME")
    return seconds.toLong() * 1000 + micros.toLong() / 1000
}

/** How many of the semaphore [name]'s four keys exist (EXISTS s q wx lx). */
internal fun LocalRedisServer.existingKeys(name: String): Int = command("EXISTS", *redisKeys(name)).removePrefix(":").toInt()

/** `MEMORY USAGE` (every element counted) summed over the semaphore [name]'s four keys; 0 for a missing key. */
internal fun LocalRedisServer.keysMemory(name: String): Long =
    redisKeys(name).sumOf { key -> reply("MEMORY", "USAGE", key, "SAMPLES", "0").singleOrNull()?.toLongOrNull() ?: 0L }

/** The number of fields of the semaphore [name]'s hash and of members of each of its zsets (q, wx, lx). */
internal fun LocalRedisServer.keySizes(name: String): List<Int> {
    val (s, q, wx, lx) = redisKeys(name)
    return listOf(reply("HLEN", s), reply("ZCARD", q), reply("ZCARD", wx), reply("ZCARD", lx)).map { it.single().toInt() }
}

/** A field of INFO (e.g. "used_memory", "connected_clients") as a number. */
internal fun LocalRedisServer.info(section: String, field: String): Long =
    Regex("(?m)^$field:(\\d+)").find(reply("INFO", section).single())?.groupValues?.get(1)?.toLong()
        ?: error("no $field in INFO $section")

/** Writes [line] to the worker's stdin (its "take" mode reads lines there). */
internal fun WorkerProcess.send(line: String) {
    process.outputStream.apply {
        write("$line\n".toByteArray())
        flush()
    }
}

/**
 * A spec's server and its two clients (as two JVMs would have), and fresh semaphore names:
 * `val redis = TwoClients()`, `afterSpec { redis.close() }`, `val (server, a, b) = redis`.
 */
internal class TwoClients : AutoCloseable {
    val server: LocalRedisServer = LocalRedisServer.start()
    val a: RedisSemaphoreClient = RedisSemaphoreClient.connect(server.uri)
    val b: RedisSemaphoreClient = RedisSemaphoreClient.connect(server.uri)
    private val names = java.util.concurrent.atomic.AtomicInteger()

    /** A name no other test of the spec used: [prefix] and a number. */
    fun fresh(prefix: String): String = "$prefix-${names.incrementAndGet()}"

    operator fun component1(): LocalRedisServer = server
    operator fun component2(): RedisSemaphoreClient = a
    operator fun component3(): RedisSemaphoreClient = b

    override fun close() {
        a.close()
        b.close()
        server.close()
    }
}
