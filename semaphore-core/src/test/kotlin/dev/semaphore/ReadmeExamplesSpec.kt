package dev.semaphore

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.test.runTest
import java.io.File
import kotlin.time.Duration.Companion.seconds

/**
 * The README's Kotlin quickstart ("Quickstart: Kotlin"), compiled and run: the text between the
 * "// example: quickstart" and "// end" lines below must be in the README, line for line (indentation
 * and blank lines aside).
 */
class ReadmeExamplesSpec : FunSpec({
    test("the Kotlin quickstart runs, and the README shows it as compiled here") {
        val shop = Quickstart()
        runTest { shop.run(this) }
        shop.pages shouldBe listOf("page a", "page b", "page c", "page d", "page e")
        shop.done shouldBe listOf("bigJob", "work", "interactive")
        shop.balance shouldBe 90
        shop.cache shouldBe mapOf("k" to 2)
        shop.value shouldBe 1

        fun normalize(lines: List<String>) = lines.map { it.trim() }.filter { it.isNotEmpty() }.joinToString("\n")
        val me = File("src/test/kotlin/dev/semaphore/ReadmeExamplesSpec.kt").readLines()
        val start = me.indexOfFirst { it.trim() == "// example: quickstart" }
        val end = (start + 1 until me.size).first { me[it].trim() == "// end" }
        val example = normalize(me.subList(start + 1, end))
        normalize(File("../README.md").readLines()) shouldContain example
    }
})

private class ShutdownException : Exception("shutting down")

/** What the quickstart calls: the user's work, recorded. */
private class Quickstart {
    val urls = listOf("a", "b", "c", "d", "e")
    val done = mutableListOf<String>()
    var balance = 100
    val amount = 10
    val cache = mutableMapOf("k" to 1)
    val key = "k"
    val computed = 2
    var pages: List<String> = emptyList()
    var value: Int? = null

    suspend fun download(url: String): String = "page $url"
    fun bigJob() { done += "bigJob" }
    fun work() { done += "work" }
    fun serveInteractiveRequest() { done += "interactive" }

    suspend fun run(scope: CoroutineScope): Unit = with(scope) {
        // example: quickstart
        val semaphore = Semaphore(4)

        // At most 4 downloads at a time; the permit is released however the block ends.
        val pages = urls.map { url -> async { semaphore.withPermit { download(url) } } }.awaitAll()

        // Several permits at once, granted whole when they fit (first in line blocks the rest: no starvation).
        semaphore.withPermit(permits = 2) { bigJob() }

        // Give up after a while, with nothing held (the timeout never loses a permit).
        if (semaphore.tryAcquire(2.seconds)) {
            try { work() } finally { semaphore.release() }
        }

        val lock = Lock()
        lock.withLock(owner = this) { balance -= amount }   // relocking with the same owner throws, not deadlocks

        val pool = PrioritySemaphore(permits = 2, aging = 5.seconds) // +1 effective priority per 5 s waited
        pool.withPermit(priority = 10) { serveInteractiveRequest() }

        val rw = ReadWriteLock()                     // or ReadWriteLock(ReadWritePolicy.WRITERS_LINE), ...PHASE_FAIR
        val value = rw.withReadLock { cache[key] }   // the readers at the head of the line share the lock
        rw.withWriteLock { cache[key] = computed }   // a queued writer makes later readers wait: no starvation

        // Shut down: every waiter fails with SemaphoreClosedException(cause).
        semaphore.close(cause = ShutdownException())
        // end
        this@Quickstart.pages = pages
        this@Quickstart.value = value
        semaphore.isClosed shouldBe true
        semaphore.availablePermits shouldBe 4
    }
}
