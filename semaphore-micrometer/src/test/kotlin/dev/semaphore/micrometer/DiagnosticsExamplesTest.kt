package dev.semaphore.micrometer

import dev.semaphore.Diagnostics
import dev.semaphore.Semaphore
import dev.semaphore.Tracking
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path
import kotlin.time.Duration.Companion.seconds

/**
 * The Kotlin example that opens docs/diagnostics.md, as compiled and running code: the text between the
 * "// example: overview" line and the next "// end" line below, and the last test checks that the
 * document shows exactly that text.
 */
class DiagnosticsExamplesTest {
    private val registry: MeterRegistry = SimpleMeterRegistry()

    @Test
    fun overview() = runBlocking {
        // example: overview
        val db = Semaphore(8, Diagnostics(name = "db", tracking = Tracking.HOLDERS, longHoldThreshold = 30.seconds))
        println(db.dump())                  // the snapshot, then every holder and every waiter: who, how many, since when
        Diagnostics.findDeadlocks()         // cycles among Locks made with Diagnostics(detectDeadlocksAfter = ...)
        SemaphoreMetrics.of(db).bindTo(registry)   // semaphore-micrometer
        // end
        assertTrue(db.dump().startsWith("Semaphore \"db\": 0/8 held"), db.dump())
        db.acquire(3)
        assertTrue(db.dump().contains("3/8 held"), db.dump())
        assertEquals(3.0, registry.get("semaphore.permits.held").tag("name", "db").gauge().value())
        db.release(3)
    }

    @Test
    fun theDocumentShowsThisExampleVerbatim() {
        val source = Files.readAllLines(Path.of("src/test/kotlin/dev/semaphore/micrometer/DiagnosticsExamplesTest.kt"))
        fun example(name: String): String {
            val start = source.indexOfFirst { it.trim() == "// example: $name" }
            val end = (start + 1 until source.size).first { source[it].trim() == "// end" }
            return normalize(source.subList(start + 1, end))
        }
        val topic = normalize(Files.readAllLines(Path.of("../docs/diagnostics.md")))
        assertTrue(topic.contains(example("overview")), "docs/diagnostics.md does not show the compiled example:\n" + example("overview"))
    }

    private fun normalize(lines: List<String>): String = lines.map { it.trim() }.filter { it.isNotEmpty() }.joinToString("\n")
}
