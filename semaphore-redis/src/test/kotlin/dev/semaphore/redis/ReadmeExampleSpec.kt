package dev.semaphore.redis

import dev.semaphore.distributed.*

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import java.io.File
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds

/** The README's distributed quickstart ("Quickstart: across JVMs with Redis or PostgreSQL"), on Redis: the same text as readmeExample's body, run on a real server. */
class ReadmeExampleSpec : FunSpec({
    test("the README's Kotlin example is this file's readmeExample, verbatim, and it runs") {
        val readme = File("../README.md").readText()
        val inReadme = readme.substringAfter("## Quickstart: across JVMs with Redis or PostgreSQL").substringAfter("```kotlin\n").substringBefore("```")
        val source = File("src/test/kotlin/dev/semaphore/redis/ReadmeExampleSpec.kt").readText()
        val inCode = source.substringAfter("// README example begins\n").substringBefore("    // README example ends")
            .lines().joinToString("\n") { it.removePrefix("    ") }
        inCode shouldBe inReadme

        LocalRedisServer.start().use { server ->
            val running = AtomicInteger()
            val peak = AtomicInteger()
            val runs = AtomicInteger()
            runBlocking {
                Reports { _, _ ->
                    peak.accumulateAndGet(running.incrementAndGet(), ::maxOf)
                    delay(20)
                    running.decrementAndGet()
                    runs.incrementAndGet()
                }.readmeExample(server.uri)
            }
            runs.get() shouldBe 101
            peak.get() shouldBeLessThanOrEqual 8
        }
    }
})

/** What the README's example calls: [runReport] stands for the user's work. */
private class Reports(private val onRun: suspend (Int, Long) -> Unit) {
    suspend fun runReport(i: Int, fencingToken: Long) = onRun(i, fencingToken)
}

private suspend fun Reports.readmeExample(redisUri: String) {
    // README example begins
    val client: DistributedSemaphoreClient = RedisSemaphoreClient.connect(redisUri) // one per JVM; close() it at shutdown
    // or the same on PostgreSQL:           PostgresSemaphoreClient.connect(jdbcUrl)
    val connections = client.semaphore("db-connections", permits = 8)

    coroutineScope {
        repeat(100) { i ->
            launch {
                connections.withPermit { lease ->
                    // at most 8 of these blocks run at once, across every JVM on this server
                    runReport(i, fencingToken = lease.fencingToken)
                }
            }
        }
    }
    val lease = connections.tryAcquire(5.seconds, permits = 2) ?: return // null: nothing held
    try {
        runReport(100, fencingToken = lease.fencingToken)
    } finally {
        connections.release(lease)
    }
    // README example ends
    client.close()
}
