package dev.semaphore.redis

import dev.semaphore.distributed.*

import dev.semaphore.distributed.micrometer.DistributedSemaphoreMetrics
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import jdk.jfr.consumer.RecordingStream
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import java.io.File
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * The Kotlin examples of docs/redis.md ("Events and metrics", and "Who holds and who waits"), run on a real server. Each is the text
 * between an "// example: NAME" line and the next "// end" line; the last test checks that the
 * document shows each one (and the Java ones, RedisDocExamplesTest) verbatim.
 */
class EventsDocExamplesSpec : FunSpec({
    val server = LocalRedisServer.start()
    val client = RedisSemaphoreClient.connect(server.uri)
    afterSpec {
        client.close()
        server.close()
    }

    /** What the examples log to. */
    val log = object {
        val lines = CopyOnWriteArrayList<String>()
        fun warn(message: String) { lines += "WARN $message" }
        fun error(message: String) { lines += "ERROR $message" }
    }

    test("listener-kotlin: a loss is logged") {
        // example: listener-kotlin
        val registration = client.addListener(object : LeaseListener {
            override fun onRenewalFailed(lease: LeaseInfo, cause: Throwable) =
                log.warn("renewing ${lease.semaphoreName} failed, ${lease.remaining} left: $cause")
            override fun onLeaseLost(lease: LeaseInfo, cause: LeaseLostException) =
                log.error("lost ${lease.semaphoreName} (token ${lease.fencingToken}): ${cause.message}")
        })
        // end
        try {
            runBlocking {
                val fixed = client.semaphore("reports", 1, DistributedConfig(leaseTime = 300.milliseconds, autoRenew = false))
                val lease = fixed.acquire()
                shouldThrow<LeaseLostException> { withTimeout(5.seconds) { lease.awaitEnd() } }
                awaitCondition("logged") { log.lines.isNotEmpty() }
                log.lines.single() shouldStartWith "ERROR lost reports (token ${lease.fencingToken}): "
            }
        } finally {
            registration.close()
        }
    }

    test("jfr-kotlin: every renewal recorded") {
        val seen = CopyOnWriteArrayList<String>()
        // example: jfr-kotlin
        val rs = RecordingStream()
        rs.enable("dev.semaphore.distributed.LeaseRenewed").withThreshold(java.time.Duration.ZERO) // every renewal
        rs.enable("dev.semaphore.distributed.RenewalFailed")
        rs.enable("dev.semaphore.distributed.LeaseLost")
        rs.onEvent { event -> println(event) }
        rs.startAsync()
        // end
        rs.use {
            rs.onEvent { event -> seen += event.getString("semaphore") }
            runBlocking {
                val s = client.semaphore("recorded", 1, DistributedConfig(leaseTime = 3.seconds, renewInterval = 100.milliseconds))
                val lease = s.acquire()
                awaitCondition("a renewal recorded") { "recorded" in seen }
                s.release(lease)
            }
        }
    }

    test("metrics-kotlin: a semaphore and a lock bound") {
        val registry = SimpleMeterRegistry()
        // example: metrics-kotlin
        val db = DistributedSemaphoreMetrics.of(client.semaphore("db", 8))                 // figures read every 10 s
        val jobs = DistributedSemaphoreMetrics.of(client.lock("jobs")).refreshEvery(5.seconds).tag("region", "eu")
        db.bindTo(registry)
        jobs.bindTo(registry)
        // end
        runBlocking {
            awaitCondition("read") { registry.get(DistributedSemaphoreMetrics.PERMITS_AVAILABLE).tag("name", "db").gauge().value() == 8.0 }
            awaitCondition("read") { registry.get(DistributedSemaphoreMetrics.PERMITS_LIMIT).tag("region", "eu").gauge().value() == 1.0 }
        }
        db.close()
        jobs.close()
        registry.meters.shouldBeEmpty()
    }

    test("inspect-kotlin: a client named in its URI lists the holders") {
        val redisUri = server.uri
        val held = runBlocking { client.semaphore("both", 3).acquire() }
        val printed = java.io.ByteArrayOutputStream()
        val out = System.out
        System.setOut(java.io.PrintStream(printed, true))
        try {
            runBlocking {
                // example: inspect-kotlin
                val client = RedisSemaphoreClient.connect("$redisUri?clientName=inspector-a")
                println(client.semaphore("both", 3).inspect())
                // end
                client.close()
            }
        } finally {
            System.setOut(out)
        }
        printed.toString() shouldContain "DistributedSemaphore \"both\": 3 permits, 1 holder"
        runBlocking { client.semaphore("both", 3).release(held) }
    }

    test("docs/redis.md shows every example of this file and of RedisDocExamplesTest verbatim") {
        val doc = File("../docs/redis.md").readText()
        val section = doc.substringAfter("## Events and metrics").substringBefore("\n## ")
        val inspectSection = doc.substringAfter("## Who holds and who waits").substringBefore("\n## ")
        val connectingSection = doc.substringAfter("## Connecting").substringBefore("\n## ")
        val examples = examples(File("src/test/kotlin/dev/semaphore/redis/EventsDocExamplesSpec.kt")) +
            examples(File("src/test/java/dev/semaphore/redis/async/RedisDocExamplesTest.java"))
        examples.keys shouldBe setOf(
            "listener-kotlin", "jfr-kotlin", "metrics-kotlin", "inspect-kotlin", "listener-java", "metrics-java", "lettuce-client-java",
        )
        for ((name, text) in examples) {
            val where = when (name) {
                "inspect-kotlin" -> inspectSection
                "lettuce-client-java" -> connectingSection
                else -> section
            }
            withClue(name) { where shouldContain text }
        }
    }
})

private fun <T> withClue(clue: String, block: () -> T): T = io.kotest.assertions.withClue(clue, block)

/** The examples of [source] by name: the lines between "// example: NAME" and "// end", dedented. */
private fun examples(source: File): Map<String, String> {
    val lines = source.readLines()
    val found = LinkedHashMap<String, String>()
    var i = 0
    while (i < lines.size) {
        val line = lines[i]
        if (line.trim().startsWith("// example: ")) {
            val indent = line.indexOf("//")
            val body = ArrayList<String>()
            i++
            while (lines[i].trim() != "// end") {
                body += lines[i].let { if (it.length >= indent) it.substring(indent) else it.trim() }
                i++
            }
            found[line.trim().removePrefix("// example: ")] = body.joinToString("\n", postfix = "\n")
        }
        i++
    }
    return found
}
