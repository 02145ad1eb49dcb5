package dev.semaphore

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.test.runTest
import java.io.File

/**
 * The Kotlin example of docs/read-write-lock.md, compiled and run: the text between the "// example:" and
 * "// end" lines below must be in the document, line for line (indentation aside).
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
        fun normalize(lines: List<String>) = lines.map { it.trim() }.filter { it.isNotEmpty() }.joinToString("\n")
        val me = File("src/test/kotlin/dev/semaphore/ReadWritePolicyDocSpec.kt").readLines()
        val start = me.indexOfFirst { it.trim() == "// example: phase-fair" }
        val end = me.indexOfFirst { it.trim() == "// end" }
        val example = normalize(me.subList(start + 1, end))
        example.lines().size shouldBe 3
        normalize(File("../docs/read-write-lock.md").readLines()) shouldContain example
    }
})
