package dev.semaphore.postgres

import dev.semaphore.distributed.DistributedSemaphoreClient
import dev.semaphore.distributed.withPermit
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.io.File

/** docs/postgres.md's Kotlin example: the same text as [docExample]'s body, run on a real server. */
class PostgresDocExamplesSpec : FunSpec({
    test("docs/postgres.md shows docExample verbatim, and it runs") {
        val source = File("src/test/kotlin/dev/semaphore/postgres/PostgresDocExamplesSpec.kt").readText()
        val example = source.substringAfter("// docs example begins\n").substringBefore("        // docs example ends")
            .lines().joinToString("\n") { it.removePrefix("        ") }
        File("../docs/postgres.md").readText() shouldContain "```kotlin\n$example```"
        LocalPostgresServer.start().use { server ->
            val tokens = mutableListOf<Long>()
            docExample("jdbc:postgresql://127.0.0.1:${server.port}/postgres?user=postgres", tokens)
            tokens.size shouldBe 1
        }
    }
})

private suspend fun docExample(url: String, tokens: MutableList<Long>) {
    fun runJob(fencingToken: Long) {
        tokens += fencingToken
    }
    val jdbcUrl = url
    run {
        // docs example begins
        val client: DistributedSemaphoreClient = PostgresSemaphoreClient.connect(jdbcUrl) // jdbc:postgresql://db:5432/app?user=app
        val jobs = client.semaphore("nightly-jobs", permits = 4)   // the same calls as on Redis (docs/redis.md)
        jobs.withPermit { lease -> runJob(fencingToken = lease.fencingToken) }
        // docs example ends
        client.close()
    }
}
