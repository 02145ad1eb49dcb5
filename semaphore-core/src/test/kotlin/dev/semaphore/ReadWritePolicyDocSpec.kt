package dev.semaphore

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.test.runTest
import java.io.File

/**
 * The Kotlin examples of docs/read-write-lock.md, compiled and run: the text between each "// example:" and
 * the next "// end" line below must be in the document, line for line (indentation aside).
 */
class ReadWritePolicyDocSpec : FunSpec({
    test("the phase-fair example runs, and the document shows it as compiled here") {
        runTest {
            val table = mutableMapOf("tea" to 3)
            // example: phase-fair
            val prices = ReadWriteLock(ReadWritePolicy.PHASE_FAIR)
            val price = prices.withReadLock { table.getValue("tea") } // every reader waiting when a write ends gets in together
            prices.withWriteLock { table["tea"] = price + 1 }         // then the next writer: neither side starves
            // end
            table["tea"] shouldBe 4
            prices.policy shouldBe ReadWritePolicy.PHASE_FAIR
            prices.readHolds shouldBe 0
            prices.isWriteLocked shouldBe false
        }
        exampleShouldBeInTheDocument("phase-fair", lines = 3)
    }

    test("the writers' line example runs, and the document shows it as compiled here") {
        runTest {
            val entries = mutableMapOf<String, Int>()
            // example: writers-line
            val cache = ReadWriteLock(ReadWritePolicy.WRITERS_LINE)
            val hit = cache.withReadLock { entries["tea"] }          // waits behind at most one waiting writer
            if (hit == null) cache.withWriteLock { entries["tea"] = 3 } // writers line up among themselves
            // end
            entries["tea"] shouldBe 3
            cache.policy shouldBe ReadWritePolicy.WRITERS_LINE
            cache.isWriteLocked shouldBe false
        }
        exampleShouldBeInTheDocument("writers-line", lines = 3)
    }
})

/** The lines between "// example: [name]" and the next "// end" in this file are in docs/read-write-lock.md. */
private fun exampleShouldBeInTheDocument(name: String, lines: Int) {
    fun normalize(lines: List<String>) = lines.map { it.trim() }.filter { it.isNotEmpty() }.joinToString("\n")
    val me = File("src/test/kotlin/dev/semaphore/ReadWritePolicyDocSpec.kt").readLines()
    val start = me.indexOfFirst { it.trim() == "// example: $name" }
    val end = (start + 1 until me.size).first { me[it].trim() == "// end" }
    val example = normalize(me.subList(start + 1, end))
    example.lines().size shouldBe lines
    normalize(File("../docs/read-write-lock.md").readLines()) shouldContain example
}
