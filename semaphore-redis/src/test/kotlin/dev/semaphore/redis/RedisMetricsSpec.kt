package dev.semaphore.redis

import dev.semaphore.distributed.*

import dev.semaphore.Diagnostics
import dev.semaphore.Semaphore
import dev.semaphore.SemaphoreClosedException
import dev.semaphore.micrometer.SemaphoreMetrics
import dev.semaphore.distributed.micrometer.DistributedSemaphoreMetrics
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeLessThan
import io.kotest.matchers.doubles.shouldBeNaN
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.Tags
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import io.micrometer.prometheusmetrics.PrometheusConfig
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry
import kotlinx.coroutines.Job
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import java.util.concurrent.TimeUnit
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

/**
 * DistributedSemaphoreMetrics on a real redis-server and a real Micrometer registry: the gauges show what the
 * server holds, read in the background (a gauge read never waits for Redis, even with the server
 * paused), the counters count this client's lease events, and the binder removes what it made.
 */
class RedisMetricsSpec : FunSpec({
    val server = LocalRedisServer.start()
    // Commands time out after 1 s, so that a read or a renewal sent to the paused server fails soon. (Not shorter: the
    // timeout also bounds the connection's handshake, which a loaded machine can take 300 ms to answer.)
    val a = RedisSemaphoreClient.connect("${server.uri}?timeout=1s")
    val b = RedisSemaphoreClient.connect(server.uri)
    afterSpec {
        a.close()
        b.close()
        server.close()
    }
    val names = java.util.concurrent.atomic.AtomicInteger()
    fun fresh(prefix: String) = "$prefix-${names.incrementAndGet()}"
    val every = 200.milliseconds

    fun MeterRegistry.gauge(meter: String, kind: String, name: String): Double =
        get(meter).tags("kind", kind, "name", name).gauge().value()
    fun MeterRegistry.oldest(kind: String, name: String): Double =
        get(DistributedSemaphoreMetrics.ACQUIRE_OLDEST).tags("kind", kind, "name", name).timeGauge().value(TimeUnit.MILLISECONDS)
    fun MeterRegistry.count(meter: String, name: String, vararg tags: String): Double =
        get(meter).tags("name", name, *tags).functionCounter().count()

    /** The client's background coroutines now (the keeper, lines, and each binder's read). */
    fun RedisSemaphoreClient.backgroundJobs(): Int = background.coroutineContext[Job]!!.children.count { it.isActive }

    test("the gauges show the server's figures from every JVM, read in the background: total, available, held, leases, line and its oldest wait; a lock's too") {
        runBlocking {
            val registry = SimpleMeterRegistry()
            val name = fresh("figures")
            val s = a.semaphore(name, 3)
            val other = b.semaphore(name, 3)
            val mine = s.acquire(2)
            val theirs = other.acquire(1)
            val waiting = async { other.acquire(2) }
            awaitCondition("queued") { s.queueLength() == 1 }
            val metrics = DistributedSemaphoreMetrics.of(s).refreshEvery(every)
            metrics.bindTo(registry)
            awaitCondition("the first read") { !registry.gauge(DistributedSemaphoreMetrics.PERMITS_LIMIT, "DistributedSemaphore", name).isNaN() }
            delay(150) // the line's head waits longer with each read
            awaitCondition("the oldest wait read") { registry.oldest("DistributedSemaphore", name) >= 100.0 }
            registry.gauge(DistributedSemaphoreMetrics.PERMITS_LIMIT, "DistributedSemaphore", name) shouldBe 3.0
            registry.gauge(DistributedSemaphoreMetrics.PERMITS_AVAILABLE, "DistributedSemaphore", name) shouldBe 0.0
            registry.gauge(DistributedSemaphoreMetrics.PERMITS_HELD, "DistributedSemaphore", name) shouldBe 3.0
            registry.gauge(DistributedSemaphoreMetrics.HOLD_ACTIVE, "DistributedSemaphore", name) shouldBe 2.0 // a's and b's
            registry.gauge(DistributedSemaphoreMetrics.REQUESTS_WAITING, "DistributedSemaphore", name) shouldBe 1.0 // b's

            s.release(mine)
            val granted = waiting.await()
            awaitCondition("the release read") { registry.gauge(DistributedSemaphoreMetrics.REQUESTS_WAITING, "DistributedSemaphore", name) == 0.0 }
            awaitCondition("held read") { registry.gauge(DistributedSemaphoreMetrics.PERMITS_HELD, "DistributedSemaphore", name) == 3.0 }
            registry.oldest("DistributedSemaphore", name) shouldBe 0.0
            other.release(theirs)
            other.release(granted)
            awaitCondition("all free") { registry.gauge(DistributedSemaphoreMetrics.PERMITS_AVAILABLE, "DistributedSemaphore", name) == 3.0 }
            registry.gauge(DistributedSemaphoreMetrics.HOLD_ACTIVE, "DistributedSemaphore", name) shouldBe 0.0
            metrics.close()

            // A lock: kind DistributedLock, one permit.
            val lockName = fresh("lock-figures")
            val lock = a.lock(lockName)
            val held = b.lock(lockName).lock()
            DistributedSemaphoreMetrics.of(lock).refreshEvery(every).use { lockMetrics ->
                lockMetrics.bindTo(registry)
                awaitCondition("the lock's read") { registry.gauge(DistributedSemaphoreMetrics.HOLD_ACTIVE, "DistributedLock", lockName) == 1.0 }
                registry.gauge(DistributedSemaphoreMetrics.PERMITS_LIMIT, "DistributedLock", lockName) shouldBe 1.0
                registry.gauge(DistributedSemaphoreMetrics.PERMITS_AVAILABLE, "DistributedLock", lockName) shouldBe 0.0
            }
            b.lock(lockName).unlock(held)
        }
    }

    test("a semaphore not on the server: no holder and no waiter, the total its handle would create it with; the reads create nothing") {
        val registry = SimpleMeterRegistry()
        val name = fresh("absent")
        DistributedSemaphoreMetrics.of(a.semaphore(name, 5)).refreshEvery(every).use { metrics ->
            metrics.bindTo(registry)
            runBlocking {
                awaitCondition("read") { !registry.gauge(DistributedSemaphoreMetrics.PERMITS_LIMIT, "DistributedSemaphore", name).isNaN() }
                delay(every * 3) // several reads
            }
            registry.gauge(DistributedSemaphoreMetrics.PERMITS_LIMIT, "DistributedSemaphore", name) shouldBe 5.0
            registry.gauge(DistributedSemaphoreMetrics.PERMITS_AVAILABLE, "DistributedSemaphore", name) shouldBe 5.0
            registry.gauge(DistributedSemaphoreMetrics.PERMITS_HELD, "DistributedSemaphore", name) shouldBe 0.0
            registry.gauge(DistributedSemaphoreMetrics.REQUESTS_WAITING, "DistributedSemaphore", name) shouldBe 0.0
            server.existingKeys(name) shouldBe 0
        }
    }

    test("a gauge read never waits for Redis: with the server paused it answers at once, NaN before the first read, the last figures after, NaN once they are 3 periods old") {
        val registry = SimpleMeterRegistry()
        val name = fresh("paused")
        val s = a.semaphore(name, 4)
        runBlocking { s.availablePermits() } // created
        val metrics = DistributedSemaphoreMetrics.of(s).refreshEvery(every)
        server.pause(true)
        try {
            metrics.bindTo(registry) // its first read waits for the paused server
            val reads = TimeSource.Monotonic.markNow()
            repeat(100) { registry.gauge(DistributedSemaphoreMetrics.PERMITS_LIMIT, "DistributedSemaphore", name).shouldBeNaN() }
            reads.elapsedNow() shouldBeLessThan 250.milliseconds // 100 reads, none of them sent (one would wait 300 ms)
        } finally {
            server.pause(false)
        }
        runBlocking {
            awaitCondition("read once the server answers") { registry.gauge(DistributedSemaphoreMetrics.PERMITS_LIMIT, "DistributedSemaphore", name) == 4.0 }
            server.pause(true)
            try {
                val paused = TimeSource.Monotonic.markNow()
                val read = TimeSource.Monotonic.markNow()
                registry.gauge(DistributedSemaphoreMetrics.PERMITS_AVAILABLE, "DistributedSemaphore", name) shouldBe 4.0 // the last figures, at once
                read.elapsedNow() shouldBeLessThan 250.milliseconds // not sent: a command would wait 300 ms
                awaitCondition("NaN once 3 periods old") { registry.gauge(DistributedSemaphoreMetrics.PERMITS_AVAILABLE, "DistributedSemaphore", name).isNaN() }
                paused.elapsedNow() shouldBeGreaterThan every * 2 // kept for about 3 periods, not dropped at the first failure
            } finally {
                server.pause(false)
            }
            awaitCondition("read again") { registry.gauge(DistributedSemaphoreMetrics.PERMITS_AVAILABLE, "DistributedSemaphore", name) == 4.0 }
        }
        metrics.close()
    }

    test("the counters count this client's renewals by outcome and its leases lost, of this name only") {
        val registry = SimpleMeterRegistry()
        val name = fresh("counted")
        val renewing = DistributedConfig(leaseTime = 3.seconds, renewInterval = 150.milliseconds)
        val s = a.semaphore(name, 2, renewing)
        DistributedSemaphoreMetrics.of(s).use { metrics ->
            metrics.bindTo(registry)
            runBlocking {
                val lease = s.acquire()
                val elsewhere = a.semaphore(fresh("not-counted"), 1, renewing).acquire() // another name, same client
                val theirs = b.semaphore(name, 2, renewing).acquire() // same name, another client: b counts it
                awaitCondition("renewals counted") { registry.count(DistributedSemaphoreMetrics.LEASE_RENEWALS, name, "outcome", "renewed") >= 3.0 }
                server.pause(true)
                try {
                    awaitCondition("a failed renewal counted", 10.seconds) {
                        registry.count(DistributedSemaphoreMetrics.LEASE_RENEWALS, name, "outcome", "failed") >= 1.0
                    }
                } finally {
                    server.pause(false)
                }
                registry.count(DistributedSemaphoreMetrics.LEASE_LOST, name) shouldBe 0.0
                server.reply("ZREM", redisKeys(name)[3], "${lease.id}:${lease.permits}") shouldBe listOf("1")
                shouldThrow<LeaseLostException> { withTimeout(10.seconds) { lease.awaitEnd() } }
                awaitCondition("the loss counted") { registry.count(DistributedSemaphoreMetrics.LEASE_LOST, name) == 1.0 }
                // b's renewals of the same name are not this client's: a's count grows only by a's lease,
                // which is lost now and renewed no more.
                val renewed = registry.count(DistributedSemaphoreMetrics.LEASE_RENEWALS, name, "outcome", "renewed")
                delay(600)
                registry.count(DistributedSemaphoreMetrics.LEASE_RENEWALS, name, "outcome", "renewed") shouldBe renewed
                registry.count(DistributedSemaphoreMetrics.LEASE_LOST, name) shouldBe 1.0
                a.semaphore(elsewhere.semaphoreName, 1).release(elsewhere)
                b.semaphore(name, 2).release(theirs)
            }
        }
    }

    test("the binder owns what it made: close() removes its meters, its listener and its background read; the client's close stops the read (NaN)") {
        val client = RedisSemaphoreClient.connect(server.uri)
        try {
            val registry = SimpleMeterRegistry()
            val other = SimpleMeterRegistry()
            val name = fresh("owned")
            val jobsBefore = client.backgroundJobs()
            val metrics = DistributedSemaphoreMetrics.of(client.semaphore(name, 2)).refreshEvery(every)
            metrics.bindTo(registry)
            metrics.bindTo(registry) // again: nothing more
            metrics.bindTo(other) // a second registry: the same read and listener
            registry.meters.size shouldBe 9
            other.meters.size shouldBe 9
            client.listenerCount shouldBe 1
            client.backgroundJobs() shouldBe jobsBefore + 1
            runBlocking { awaitCondition("read") { other.gauge(DistributedSemaphoreMetrics.PERMITS_LIMIT, "DistributedSemaphore", name) == 2.0 } }
            metrics.close()
            metrics.close()
            registry.meters.shouldBeEmpty()
            other.meters.shouldBeEmpty()
            client.listenerCount shouldBe 0
            runBlocking { awaitCondition("the read stopped") { client.backgroundJobs() == jobsBefore } }
            shouldThrow<IllegalStateException> { metrics.bindTo(registry) }.message!! shouldContain "closed"

            val kept = DistributedSemaphoreMetrics.of(client.semaphore(name, 2)).refreshEvery(every)
            kept.bindTo(registry)
            runBlocking { awaitCondition("read") { registry.gauge(DistributedSemaphoreMetrics.PERMITS_LIMIT, "DistributedSemaphore", name) == 2.0 } }
            client.close()
            registry.gauge(DistributedSemaphoreMetrics.PERMITS_LIMIT, "DistributedSemaphore", name).shouldBeNaN() // nobody reads any more
            client.listenerCount shouldBe 0
            kept.close()
            registry.meters.shouldBeEmpty()
        } finally {
            client.close()
        }
    }

    test("bad input: a period under 100 ms or infinite, a tag of the binder's own, a second binder of the same series, a closed client; each named") {
        val s = a.semaphore(fresh("bad"), 1)
        shouldThrow<IllegalArgumentException> { DistributedSemaphoreMetrics.of(s).refreshEvery(50.milliseconds) }.message!! shouldContain "was 50ms"
        shouldThrow<IllegalArgumentException> { DistributedSemaphoreMetrics.of(s).refreshEvery(Duration.INFINITE) }.message!! shouldContain "was Infinity"
        shouldThrow<IllegalArgumentException> { DistributedSemaphoreMetrics.of(s).refreshEvery(java.time.Duration.ofMillis(-1)) }.message!! shouldContain "was -1ms"
        for (key in listOf("name", "kind", "outcome")) {
            shouldThrow<IllegalArgumentException> { DistributedSemaphoreMetrics.of(s).tag(key, "x") }.message!! shouldContain "\"$key\""
        }
        val registry = SimpleMeterRegistry()
        DistributedSemaphoreMetrics.of(s).use { first ->
            first.bindTo(registry)
            val twin = DistributedSemaphoreMetrics.of(a.semaphore(s.name, 1))
            shouldThrow<IllegalStateException> { twin.bindTo(registry) }.message!! shouldContain "DistributedSemaphore \"${s.name}\""
            twin.close()
            // Another client in this JVM binds the same semaphore: told apart by a tag, both are bound.
            DistributedSemaphoreMetrics.of(b.semaphore(s.name, 1)).tag("client", "b").use { tagged ->
                tagged.bindTo(registry)
                registry.find(DistributedSemaphoreMetrics.PERMITS_LIMIT).gauges().size shouldBe 2
            }
            // The same name as a lock is another kind, so another series.
            DistributedSemaphoreMetrics.of(a.lock(s.name)).use { it.bindTo(registry) }
        }
        registry.meters.shouldBeEmpty()
        val closed = RedisSemaphoreClient.connect(server.uri)
        val binder = DistributedSemaphoreMetrics.of(closed.semaphore("x", 1))
        closed.close()
        shouldThrow<SemaphoreClosedException> { binder.bindTo(registry) }
        registry.meters.shouldBeEmpty()
    }

    test("the names are semaphore-micrometer's, and a local and a Redis semaphore share one Prometheus scrape (same types and tag keys)") {
        DistributedSemaphoreMetrics.PERMITS_LIMIT shouldBe SemaphoreMetrics.PERMITS_LIMIT
        DistributedSemaphoreMetrics.PERMITS_AVAILABLE shouldBe SemaphoreMetrics.PERMITS_AVAILABLE
        DistributedSemaphoreMetrics.PERMITS_HELD shouldBe SemaphoreMetrics.PERMITS_HELD
        DistributedSemaphoreMetrics.HOLD_ACTIVE shouldBe SemaphoreMetrics.HOLD_ACTIVE
        DistributedSemaphoreMetrics.REQUESTS_WAITING shouldBe SemaphoreMetrics.REQUESTS_WAITING
        DistributedSemaphoreMetrics.ACQUIRE_OLDEST shouldBe SemaphoreMetrics.ACQUIRE_OLDEST
        DistributedSemaphoreMetrics.TAG_NAME shouldBe SemaphoreMetrics.TAG_NAME
        DistributedSemaphoreMetrics.TAG_KIND shouldBe SemaphoreMetrics.TAG_KIND
        DistributedSemaphoreMetrics.TAG_OUTCOME shouldBe SemaphoreMetrics.TAG_OUTCOME

        val registry = PrometheusMeterRegistry(PrometheusConfig.DEFAULT)
        val local = Semaphore(4, Diagnostics(name = "db"))
        val name = "db" // the same name as the local one: the kinds tell them apart
        val s = a.semaphore(name, 2, DistributedConfig(leaseTime = 3.seconds, renewInterval = 100.milliseconds))
        SemaphoreMetrics.of(local).use { localMetrics ->
            localMetrics.bindTo(registry)
            DistributedSemaphoreMetrics.of(s).refreshEvery(every).use { redisMetrics ->
                    redisMetrics.bindTo(registry)
                    runBlocking {
                        val lease = s.acquire()
                        awaitCondition("read and renewed") {
                            registry.scrape().contains("semaphore_permits_held{kind=\"DistributedSemaphore\",name=\"db\"} 1.0") &&
                                registry.count(DistributedSemaphoreMetrics.LEASE_RENEWALS, name, "outcome", "renewed") >= 1.0
                        }
                        s.release(lease)
                    }
                    val samples = registry.scrape().lines().filter { !it.startsWith("#") && "name=\"db\"" in it }
                        .map { it.substringBeforeLast(' ') }
                    val redis = "{kind=\"DistributedSemaphore\",name=\"db\""
                    samples.filter { "DistributedSemaphore" in it }.sorted() shouldBe listOf(
                        "semaphore_acquire_oldest_seconds$redis}",
                        "semaphore_hold_active$redis}",
                        "semaphore_lease_lost_total$redis}",
                        "semaphore_lease_renewals_total$redis,outcome=\"failed\"}",
                        "semaphore_lease_renewals_total$redis,outcome=\"renewed\"}",
                        "semaphore_permits_available$redis}",
                        "semaphore_permits_held$redis}",
                        "semaphore_permits_limit$redis}",
                        "semaphore_requests_waiting$redis}",
                    )
                    samples shouldContainAll listOf(
                        "semaphore_permits_limit{kind=\"Semaphore\",name=\"db\"}",
                        "semaphore_hold_active{kind=\"Semaphore\",name=\"db\"}",
                        "semaphore_acquire_oldest_seconds{kind=\"Semaphore\",name=\"db\"}",
                    )
                }
        }
    }
})
