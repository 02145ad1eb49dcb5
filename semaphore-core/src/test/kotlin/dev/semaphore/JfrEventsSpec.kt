package dev.semaphore

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import jdk.jfr.consumer.RecordedEvent
import jdk.jfr.consumer.RecordingStream
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import java.time.Duration
import java.util.Collections
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import kotlin.time.Duration.Companion.milliseconds

/** The JFR events, recorded by a real recording and read back with RecordingStream. */
class JfrEventsSpec : FunSpec({
    test("waits, holds, long holds and statistics are recorded under dev.semaphore.* and read back") {
        val events = Collections.synchronizedList(ArrayList<RecordedEvent>())
        val seen = CountDownLatch(4) // one of each name
        val names = Collections.synchronizedSet(HashSet<String>())
        RecordingStream().use { rs ->
            rs.enable("dev.semaphore.Wait").withThreshold(Duration.ZERO)
            rs.enable("dev.semaphore.Hold").withThreshold(Duration.ZERO)
            rs.enable("dev.semaphore.LongHold")
            rs.enable("dev.semaphore.Statistics").withPeriod(Duration.ofMillis(100))
            rs.onEvent { e ->
                events += e
                if (names.add(e.eventType.name)) seen.countDown()
            }
            rs.startAsync()
            val s = Semaphore(1, Diagnostics(name = "jfr-db", tracking = Tracking.HOLDERS, longHoldThreshold = 50.milliseconds))
            runBlocking {
                withContext(CoroutineName("holder")) { s.acquire() }
                val waiter = launch(CoroutineName("waiter")) { s.acquire(); s.release() }
                delay(150) // long enough for a long hold, and for the waiter to wait
                s.release()
                waiter.join()
            }
            seen.await(20, TimeUnit.SECONDS) shouldBe true
        }
        fun of(name: String) = synchronized(events) { events.filter { it.eventType.name == name } }
        val wait = of("dev.semaphore.Wait").first { it.getString("primitive") == "jfr-db" }
        wait.getString("kind") shouldBe "Semaphore"
        wait.getString("outcome") shouldBe "granted"
        wait.getString("requester") shouldStartWith "coroutine \"waiter\""
        wait.getInt("permits") shouldBe 1
        val asker = Thread.currentThread().name // runBlocking ran both coroutines here; the release ended the wait elsewhere or here
        wait.getThread("requestedOn").javaName shouldBe asker // the thread that asked, whichever thread committed the event
        (wait.duration >= Duration.ofMillis(100)) shouldBe true
        val holds = of("dev.semaphore.Hold").filter { it.getString("primitive") == "jfr-db" }
        holds.any { it.getString("holder").startsWith("coroutine \"holder\"") && it.duration >= Duration.ofMillis(100) } shouldBe true
        holds.filter { it.getString("holder").startsWith("coroutine \"holder\"") }.forEach { it.getThread("takenOn").javaName shouldBe Thread.currentThread().name }
        val long = of("dev.semaphore.LongHold").first { it.getString("primitive") == "jfr-db" }
        long.getString("holder") shouldStartWith "coroutine \"holder\""
        (long.getLong("heldFor") >= 50_000_000L) shouldBe true
        val stats = of("dev.semaphore.Statistics").first { it.getString("primitive") == "jfr-db" }
        stats.getString("kind") shouldBe "Semaphore"
        stats.getInt("totalPermits") shouldBe 1
        stats.eventType.categoryNames shouldBe listOf("Semaphore")
    }
})
