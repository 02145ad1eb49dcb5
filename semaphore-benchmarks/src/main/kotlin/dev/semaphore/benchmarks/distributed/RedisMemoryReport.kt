package dev.semaphore.benchmarks.distributed

import dev.semaphore.redis.LocalRedisServer
import dev.semaphore.redis.RedisSemaphoreClient
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import java.util.concurrent.atomic.AtomicLong
import kotlin.system.exitProcess

/**
 * The server memory of one DistributedSemaphore after many acquisitions, for docs/redis.md: 16 coroutines take and release
 * 1 of 8 permits until 10,000, 100,000 and 1,000,000 acquisitions; after each, `MEMORY USAGE` of its four keys and
 * the server's `used_memory`.
 *
 *   java -cp semaphore-benchmarks/target/benchmarks.jar dev.semaphore.benchmarks.distributed.RedisMemoryReport
 */
object RedisMemoryReport {
    @JvmStatic fun main(args: Array<String>) {
        val counts = args.map { it.toLong() }.ifEmpty { listOf(10_000L, 100_000L, 1_000_000L) }
        LocalRedisServer.start().use { server ->
            val version = server.reply("INFO", "server").single().lines().first { it.startsWith("redis_version:") }.substringAfter(':')
            RedisSemaphoreClient.connect(server.uri).use { client ->
                val semaphore = client.semaphore("memory", 8)
                runBlocking { semaphore.release(semaphore.acquire()) } // created
                val baseline = server.reply("INFO", "memory").single().usedMemory()
                println("Redis $version; used_memory after the first acquisition: $baseline bytes")
                println("| acquisitions | `MEMORY USAGE` of the semaphore's keys, bytes | server `used_memory` growth, bytes |\n|---|---|---|")
                val done = AtomicLong(1)
                for (target in counts) {
                    runBlocking(Dispatchers.Default) {
                        repeat(16) { launch { while (done.incrementAndGet() <= target) semaphore.release(semaphore.acquire()) } }
                    }
                    done.set(target)
                    val keys = listOf("s", "q", "wx", "lx").sumOf { key ->
                        server.reply("MEMORY", "USAGE", "dsem:{memory}:$key").singleOrNull()?.toLongOrNull() ?: 0L
                    }
                    val used = server.reply("INFO", "memory").single().usedMemory()
                    println("| %,d | %,d | %,d |".format(target, keys, used - baseline))
                }
            }
        }
        exitProcess(0)
    }

    private fun String.usedMemory(): Long = lines().first { it.startsWith("used_memory:") }.substringAfter(':').trim().toLong()
}
