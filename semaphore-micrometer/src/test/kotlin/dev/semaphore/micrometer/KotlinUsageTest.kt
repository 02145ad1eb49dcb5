package dev.semaphore.micrometer

import dev.semaphore.Diagnostics
import dev.semaphore.Lock
import dev.semaphore.PrioritySemaphore
import dev.semaphore.Semaphore
import dev.semaphore.withLock
import dev.semaphore.withPermit
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.Tags
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.time.Duration
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds

/**
 * The binders as a Kotlin caller writes them, on coroutines: waits, a library timeout, a cancelled
 * coroutine and a `withTimeout` around `acquire` (a timeout too), read back from a [SimpleMeterRegistry].
 */
class KotlinUsageTest {
    private val registry: MeterRegistry = SimpleMeterRegistry()

    private fun unique(base: String) = "$base-k${counter.incrementAndGet()}"

    private fun gauge(meter: String, name: String): Double = registry.get(meter).tag("name", name).gauge().value()

    private fun requests(name: String, outcome: String): Double =
        registry.get(SemaphoreMetrics.REQUESTS).tag("name", name).tag("outcome", outcome).functionCounter().count()

    private fun waits(name: String, outcome: String) =
        registry.get(SemaphoreMetrics.ACQUIRE).tag("name", name).tag("outcome", outcome).timer()

    /** Lets the coroutines launched on this runBlocking's thread run until [condition]. */
    private suspend fun CoroutineScope.until(condition: () -> Boolean) {
        repeat(2_000) {
            if (condition()) return
            delay(5)
        }
        error("condition not met within 10 s")
    }

    @Test
    fun `coroutines that wait, time out and are cancelled show in the meters`() = runBlocking {
        val name = unique("db")
        val db = Semaphore(2, Diagnostics(name = name))
        SemaphoreMetrics.of(db).tag("region", "eu").bindTo(registry)

        db.acquire(2)
        val waiter = launch { db.withPermit { delay(20) } }
        val timedOut = async { db.tryAcquire(50.milliseconds) }
        val cancelled = launch { db.acquire() }
        val givesUp = async { withTimeoutOrNull(30.milliseconds) { db.acquire() } }
        until { db.queueLength == 4 }
        assertEquals(4.0, gauge(SemaphoreMetrics.REQUESTS_WAITING, name))
        assertEquals(2.0, gauge(SemaphoreMetrics.PERMITS_HELD, name))

        cancelled.cancelAndJoin()
        assertNull(givesUp.await(), "a withTimeout around acquire: the library counts it as timed out")
        assertFalse(timedOut.await())
        db.release(2)
        waiter.join()

        assertEquals(2.0, requests(name, "acquired"))
        assertEquals(2.0, requests(name, "timed_out"))
        assertEquals(1.0, requests(name, "cancelled"))
        assertEquals(2L, waits(name, "acquired").count())
        assertEquals(2L, waits(name, "timed_out").count())
        // a 50 ms timeout, whose clock starts before the request joins the line (how long before depends on the
        // machine's load), so only a positive wait is certain here
        assertTrue(waits(name, "timed_out").max(TimeUnit.MILLISECONDS) > 0.0) { "waited " + waits(name, "timed_out").max(TimeUnit.MILLISECONDS) }
        assertEquals(1L, waits(name, "cancelled").count())
        val holds = registry.get(SemaphoreMetrics.HOLD).tags(Tags.of("name", name, "region", "eu")).timer()
        assertEquals(2L, holds.count())
        assertTrue(holds.max(TimeUnit.MILLISECONDS) >= 20.0) { "the withPermit block held for 20 ms, max " + holds.max(TimeUnit.MILLISECONDS) }
    }

    @Test
    fun `an unnamed primitive is bound with a name given here`() = runBlocking {
        val name = unique("pool")
        val pool = PrioritySemaphore(1)
        SemaphoreMetrics.of(pool, name).snapshotOnly().bindTo(registry)
        pool.withPermit(priority = 5) {
            assertEquals(1.0, gauge(SemaphoreMetrics.PERMITS_HELD, name))
        }
        assertEquals("PrioritySemaphore", registry.get(SemaphoreMetrics.PERMITS_HELD).tag("name", name).gauge().id.getTag("kind"))
    }

    @Test
    fun `every named primitive, also one created later`() = runBlocking {
        val lockName = unique("lock")
        val lock = Lock(diagnostics = Diagnostics(name = lockName))
        SemaphoreMetrics.allNamed().use { all ->
            all.bindTo(registry)
            lock.withLock { assertEquals(1.0, gauge(SemaphoreMetrics.HOLD_ACTIVE, lockName)) }

            val laterName = unique("later")
            val later = Semaphore(3, Diagnostics(name = laterName))
            all.refresh()
            later.withPermit { assertEquals(2.0, gauge(SemaphoreMetrics.PERMITS_AVAILABLE, laterName)) }
        }
        assertNull(registry.find(SemaphoreMetrics.PERMITS_LIMIT).tag("name", lockName).gauge(), "closed by use {}")
    }

    @Test
    fun `the documented example`() = runBlocking {
        // example: metrics-kotlin
        val db = Semaphore(8, Diagnostics(name = "orders-db"))
        SemaphoreMetrics.of(db).tag("region", "eu").bindTo(registry)

        val uploads = Semaphore(4)                                       // created without a name:
        SemaphoreMetrics.of(uploads, "uploads").snapshotOnly().bindTo(registry) // give the name tag here

        SemaphoreMetrics.allNamed().refreshEvery(Duration.ofSeconds(30)).use { all ->
            all.bindTo(registry)
            db.withPermit { uploads.withPermit { /* ... */ } }
        }
        // end
        assertEquals(1L, waits("orders-db", "acquired").count())
        assertEquals(1.0, requests("uploads", "acquired"))
        assertNull(registry.find(SemaphoreMetrics.ACQUIRE).tag("name", "uploads").timer(), "no listener on uploads")
    }

    private companion object {
        val counter = AtomicInteger()
    }
}
