package dev.semaphore.redis

import dev.semaphore.distributed.*

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeGreaterThanOrEqualTo
import io.kotest.matchers.comparables.shouldBeLessThanOrEqualTo
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.matchers.types.shouldBeSameInstanceAs
import dev.semaphore.SemaphoreClosedException
import jdk.jfr.consumer.RecordedEvent
import jdk.jfr.consumer.RecordingStream
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import java.io.File
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import java.util.logging.Handler
import java.util.logging.Level
import java.util.logging.LogRecord
import java.util.logging.Logger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * What a client does with its leases in the background, told to its listeners and to JFR: renewals,
 * a renewal that failed (the server paused with SIGSTOP past the client's command timeout, less than
 * the lease), a loss (the lease's entry deleted on the server), on a real redis-server.
 */
class LeaseEventsSpec : FunSpec({
    val server = LocalRedisServer.start()
    // b connects first: the JVM's first connection loads Lettuce and Netty, which can take longer than a's 200 ms.
    val b = RedisSemaphoreClient.connect(server.uri)
    // Commands time out after 200 ms: a renewal sent while the server is paused fails fast, and is retried.
    val a = RedisSemaphoreClient.connect("${server.uri}?timeout=200ms&clientName=events-a")
    afterSpec {
        a.close()
        b.close()
        server.close()
    }
    val names = java.util.concurrent.atomic.AtomicInteger()
    fun fresh(prefix: String) = "$prefix-${names.incrementAndGet()}"
    val renewing = DistributedConfig(leaseTime = 3.seconds, renewInterval = 200.milliseconds)

    /**
     * The log of the module (java.util.logging, through System.Logger), collected while the spec runs instead of
     * printed: what the tests provoke on purpose is asserted here, not shown in the build's output.
     */
    val logged = CopyOnWriteArrayList<LogRecord>()
    val moduleLogger: Logger = Logger.getLogger("dev.semaphore.distributed") // kept: JUL holds loggers weakly
    val collector = object : Handler() {
        override fun publish(record: LogRecord) {
            logged += record
        }
        override fun flush() {}
        override fun close() {}
    }
    moduleLogger.addHandler(collector)
    moduleLogger.useParentHandlers = false
    afterSpec {
        moduleLogger.removeHandler(collector)
        moduleLogger.useParentHandlers = true
    }

    /** A listener that writes down what it is told. */
    class Recorder : LeaseListener {
        val renewed = CopyOnWriteArrayList<LeaseInfo>()
        val failed = CopyOnWriteArrayList<Pair<LeaseInfo, Throwable>>()
        val lost = CopyOnWriteArrayList<Pair<LeaseInfo, LeaseLostException>>()
        override fun onLeaseRenewed(lease: LeaseInfo) { renewed += lease }
        override fun onRenewalFailed(lease: LeaseInfo, cause: Throwable) { failed += lease to cause }
        override fun onLeaseLost(lease: LeaseInfo, cause: LeaseLostException) { lost += lease to cause }
        fun renewalsOf(lease: Lease) = renewed.count { it.leaseId == lease.id }
    }

    test("renewals, a renewal that failed while the server was paused, and a loss reach the listener, with the lease's figures; a listener that throws is logged and the renewals go on") {
        runBlocking {
            val name = fresh("told")
            val s = a.semaphore(name, 3, renewing)
            val recorder = Recorder()
            val thrower = object : LeaseListener {
                override fun onLeaseRenewed(lease: LeaseInfo) = throw IllegalStateException("a listener's bug, on ${lease.leaseId}")
                override fun toString() = "the throwing listener"
            }
            a.addListener(thrower).use {
                a.addListener(recorder).use {
                    val lease = s.acquire(2)
                    awaitCondition("three renewals told") { recorder.renewalsOf(lease) >= 3 }
                    val renewal = recorder.renewed.first { it.leaseId == lease.id }
                    renewal.semaphoreName shouldBe name
                    renewal.permits shouldBe 2
                    renewal.fencingToken shouldBe lease.fencingToken
                    renewal.remaining shouldBeLessThanOrEqualTo renewing.leaseTime
                    renewal.remaining shouldBeGreaterThan renewing.leaseTime - 1.seconds // just renewed
                    renewal.remainingTime() shouldBe renewal.remaining.let { java.time.Duration.ofNanos(it.inWholeNanoseconds) }
                    // The thrower was logged, and changed nothing: the recorder, added after it, was told.
                    val warning = logged.first { it.thrown?.message == "a listener's bug, on ${lease.id}" }
                    warning.level shouldBe Level.WARNING
                    warning.message shouldContain "the throwing listener"
                    warning.message shouldContain "onLeaseRenewed"

                    // The server paused for 1 s (less than the 3 s lease): renewals time out after 200 ms.
                    server.pause(true)
                    try {
                        awaitCondition("a failed renewal told", 10.seconds) { recorder.failed.any { it.first.leaseId == lease.id } }
                        delay(400)
                    } finally {
                        server.pause(false)
                    }
                    val (failedInfo, cause) = recorder.failed.first { it.first.leaseId == lease.id }
                    cause.shouldBeInstanceOf<RedisUnavailableException>()
                    cause.cause.shouldBeInstanceOf<io.lettuce.core.RedisCommandTimeoutException>()
                    failedInfo.remaining.isPositive() shouldBe true // not lost: time was left to try again
                    failedInfo.fencingToken shouldBe lease.fencingToken
                    val renewalsBefore = recorder.renewalsOf(lease)
                    awaitCondition("renewed again once the server answers") { recorder.renewalsOf(lease) > renewalsBefore }
                    lease.isLost shouldBe false
                    recorder.lost.shouldBeEmpty()

                    // Lost: its entry deleted on the server, the next renewal is refused.
                    server.reply("ZREM", redisKeys(name)[3], "${lease.id}:${lease.permits}") shouldBe listOf("1")
                    val thrown = shouldThrow<LeaseLostException> { withTimeout(10.seconds) { lease.awaitEnd() } }
                    awaitCondition("the loss told") { recorder.lost.isNotEmpty() }
                    val (lostInfo, lostCause) = recorder.lost.single()
                    lostInfo.leaseId shouldBe lease.id
                    lostInfo.semaphoreName shouldBe name
                    lostCause shouldBeSameInstanceAs lease.lostWithForTests()
                    lostCause.message shouldBe thrown.message
                    lostCause.message!! shouldContain "can no longer be renewed"
                    delay(600) // several renewal intervals: a lost lease is told once, and no longer renewed
                    recorder.lost shouldHaveSize 1
                    val renewalsAtLoss = recorder.renewalsOf(lease)
                    delay(400)
                    recorder.renewalsOf(lease) shouldBe renewalsAtLoss
                }
            }
            a.listenerCount shouldBe 0
        }
    }

    test("renewals that fail until the lease's end: each failure told with the time left, then the loss once, whose cause is the last failure") {
        runBlocking {
            val name = fresh("expired")
            val short = DistributedConfig(leaseTime = 1200.milliseconds, renewInterval = 300.milliseconds)
            val recorder = Recorder()
            a.addListener(recorder).use {
                val lease = a.semaphore(name, 1, short).acquire()
                awaitCondition("renewed") { recorder.renewalsOf(lease) >= 1 }
                server.pause(true)
                try {
                    shouldThrow<LeaseLostException> { withTimeout(10.seconds) { lease.awaitEnd() } }
                } finally {
                    server.pause(false)
                }
                val failures = recorder.failed.filter { it.first.leaseId == lease.id }
                failures.size shouldBeGreaterThanOrEqualTo 2 // retried sooner than renewInterval as the end nears
                failures.all { it.first.remaining.isPositive() } shouldBe true
                failures.map { it.first.remaining }.zipWithNext().all { (x, y) -> y < x } shouldBe true
                val (lostInfo, lostCause) = recorder.lost.single()
                lostInfo.leaseId shouldBe lease.id
                lostInfo.remaining.isPositive() shouldBe false
                lostCause.message!! shouldContain "expired before a renewal reached the server"
                lostCause.cause.shouldBeInstanceOf<RedisUnavailableException>()
            }
        }
    }

    test("a lease released is not told lost; a fixed lease is not renewed and is told lost once when it runs out; other clients' leases are theirs") {
        runBlocking {
            val recorder = Recorder()
            val registration = a.addListener(recorder)
            try {
                val name = fresh("quiet")
                val s = a.semaphore(name, 2, renewing)
                val released = s.acquire()
                awaitCondition("renewed") { recorder.renewalsOf(released) >= 1 }
                s.release(released)
                val theirs = b.semaphore(name, 2, renewing).acquire() // b's lease: b renews it, a's listener hears nothing
                val fixed = a.semaphore(fresh("fixed"), 1, DistributedConfig(leaseTime = 500.milliseconds, autoRenew = false)).acquire()
                shouldThrow<LeaseLostException> { withTimeout(5.seconds) { fixed.awaitEnd() } }
                awaitCondition("the fixed lease's end told") { recorder.lost.isNotEmpty() }
                delay(500)
                recorder.lost.single().let { (info, cause) ->
                    info.leaseId shouldBe fixed.id
                    cause.message!! shouldContain "fixed lease time"
                }
                recorder.renewalsOf(fixed) shouldBe 0
                recorder.renewalsOf(theirs) shouldBe 0
                recorder.failed.shouldBeEmpty()
                b.semaphore(name, 2).release(theirs)
            } finally {
                registration.close()
            }
        }
    }

    test("the listeners are the client's: a registration removes its own entry (closing twice does nothing), close() of the client removes them all, and a closed client takes none") {
        val client = RedisSemaphoreClient.connect(server.uri)
        val listener = Recorder()
        val first = client.addListener(listener)
        val second = client.addListener(listener) // the same listener twice: two registrations
        client.listenerCount shouldBe 2
        first.close()
        first.close()
        client.listenerCount shouldBe 1
        runBlocking {
            val lease = client.semaphore(fresh("own"), 1, renewing).acquire()
            awaitCondition("the second registration still tells") { listener.renewalsOf(lease) >= 1 }
        }
        client.addListener(Recorder())
        client.listenerCount shouldBe 2
        client.close()
        client.listenerCount shouldBe 0
        second.close() // after the client's close: nothing
        shouldThrow<SemaphoreClosedException> { client.addListener(Recorder()) }.message!! shouldContain "closed"
        client.listenerCount shouldBe 0
    }

    test("JFR: dev.semaphore.distributed.LeaseRenewed, RenewalFailed and LeaseLost, read back with RecordingStream, with the lease's fields and the client's name") {
        val events = CopyOnWriteArrayList<RecordedEvent>()
        RecordingStream().use { rs ->
            rs.enable("dev.semaphore.distributed.LeaseRenewed").withThreshold(java.time.Duration.ZERO)
            rs.enable("dev.semaphore.distributed.RenewalFailed")
            rs.enable("dev.semaphore.distributed.LeaseLost")
            rs.onEvent { events += it }
            rs.startAsync()
            runBlocking {
                val name = fresh("jfr")
                val s = a.semaphore(name, 2, renewing)
                val lease = s.acquire(2)
                fun of(type: String) = events.filter { it.eventType.name == type && it.getString("leaseId") == lease.id }
                awaitCondition("renewals recorded") { of("dev.semaphore.distributed.LeaseRenewed").size >= 2 }
                server.pause(true)
                try {
                    awaitCondition("a failed renewal recorded", 10.seconds) { of("dev.semaphore.distributed.RenewalFailed").isNotEmpty() }
                } finally {
                    server.pause(false)
                }
                server.reply("ZREM", redisKeys(name)[3], "${lease.id}:${lease.permits}") shouldBe listOf("1")
                shouldThrow<LeaseLostException> { withTimeout(10.seconds) { lease.awaitEnd() } }
                awaitCondition("the loss recorded") { of("dev.semaphore.distributed.LeaseLost").isNotEmpty() }

                val renewed = of("dev.semaphore.distributed.LeaseRenewed").first()
                renewed.getString("semaphore") shouldBe name
                renewed.getString("client") shouldBe "events-a"
                renewed.getInt("permits") shouldBe 2
                renewed.getLong("fencingToken") shouldBe lease.fencingToken
                renewed.getDuration("remaining") shouldBeGreaterThan java.time.Duration.ofMillis(2000)
                renewed.duration shouldBeGreaterThan java.time.Duration.ZERO // the renewal's round trip
                renewed.eventType.categoryNames shouldBe listOf("Semaphore", "Distributed")
                renewed.eventType.label shouldBe "Distributed Lease Renewed"
                renewed.stackTrace shouldBe null

                val failed = of("dev.semaphore.distributed.RenewalFailed").first()
                failed.getString("cause") shouldStartWith RedisUnavailableException::class.java.name
                failed.getString("cause") shouldContain "caused by io.lettuce.core.RedisCommandTimeoutException"
                failed.getDuration("remaining").isNegative shouldBe false
                failed.duration shouldBeGreaterThanOrEqualTo java.time.Duration.ofMillis(150) // it waited for the 200 ms timeout
                failed.getString("client") shouldBe "events-a"

                val lost = of("dev.semaphore.distributed.LeaseLost").single()
                lost.getString("semaphore") shouldBe name
                lost.getString("cause") shouldStartWith LeaseLostException::class.java.name
                lost.getString("cause") shouldContain "can no longer be renewed"
                lost.getLong("fencingToken") shouldBe lease.fencingToken
                lost.eventType.categoryNames shouldBe listOf("Semaphore", "Distributed")
            }
        }
    }

    test("the module loads and works where the jdk.jfr module is absent: renewals and a loss are told to the listener") {
        val java = File(System.getProperty("java.home"), "bin/java").path
        val cp = System.getProperty("java.class.path")
        val p = ProcessBuilder(
            java, "--limit-modules", NoJfrRedisMain.MODULES, "-cp", cp, NoJfrRedisMain::class.java.name, server.uri,
        ).redirectErrorStream(true).start()
        val out = p.inputStream.bufferedReader().readText()
        p.waitFor(60, TimeUnit.SECONDS) shouldBe true
        println(out.lines().filter { it.startsWith("jdk.jfr") || it.startsWith("ok") }.joinToString("\n"))
        out shouldContain "jdk.jfr present: false"
        out shouldContain "ok: renewed at least twice, lost once"
        p.exitValue() shouldBe 0
    }
})

/** The exception a lost lease ended with (the same instance its holder is told). */
private fun Lease.lostWithForTests(): LeaseLostException? = lostWith

/** Run by the test above in a JVM without jdk.jfr: a listener hears renewals and a loss. */
object NoJfrRedisMain {
    /** What Lettuce, Netty and the coroutines need, and not jdk.jfr. */
    const val MODULES = "java.base,java.logging,java.management,java.naming,jdk.unsupported"

    @JvmStatic
    fun main(args: Array<String>) {
        println("jdk.jfr present: ${ModuleLayer.boot().findModule("jdk.jfr").isPresent}")
        val uri = args[0]
        RedisSemaphoreClient.connect(uri).use { client ->
            val renewed = java.util.concurrent.atomic.AtomicInteger()
            val lost = java.util.concurrent.atomic.AtomicInteger()
            client.addListener(object : LeaseListener {
                override fun onLeaseRenewed(lease: LeaseInfo) { renewed.incrementAndGet() }
                override fun onLeaseLost(lease: LeaseInfo, cause: LeaseLostException) { lost.incrementAndGet() }
            })
            val name = "no-jfr"
            runBlocking {
                val s = client.semaphore(name, 1, DistributedConfig(leaseTime = 3.seconds, renewInterval = 100.milliseconds))
                val lease = s.acquire()
                withTimeout(10.seconds) { while (renewed.get() < 2) delay(10) }
                io.lettuce.core.RedisClient.create(uri).let { raw ->
                    raw.connect().use { it.sync().zrem(redisKeys(name)[3], "${lease.id}:${lease.permits}") }
                    raw.shutdown()
                }
                runCatching { withTimeout(10.seconds) { lease.awaitEnd() } }
                withTimeout(10.seconds) { while (lost.get() < 1) delay(10) }
            }
            println("ok: renewed at least twice, lost ${if (lost.get() == 1) "once" else "${lost.get()} times"}")
        }
    }
}
