package dev.semaphore.verification.faults

import dev.semaphore.distributed.DistributedSemaphoreClient
import dev.semaphore.redis.FaultyLink
import dev.semaphore.testing.JvmProcess
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.debug.DebugProbes
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import java.io.File
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.TimeSource

/**
 * The fault harness, in the spirit of Jepsen: several clients (coroutines of this JVM, and worker JVMs), each talking
 * to a real server of one engine ([FaultTarget]: redis-server with AOF and a replica that every grant waits for, or
 * PostgreSQL with a synchronous standby) through a relay of its own, run the [Workload] while a seeded random schedule
 * of faults hits them; the history of every call is then checked ([Checker]). The same harness, schedule and checker
 * for every engine.
 *
 * A run is [Options.rounds] rounds. In each, every client's relay gets a schedule of its own (partitions both ways,
 * one way, healed one direction first, resets), and the round may stop or kill a worker JVM, restart the server
 * (kill -9, AOF) or fail over to the replica; then everything heals, the clients are quiesced, and the harness checks
 * that every call ended in time after the heal (S5) and that every permit came back (S6). The schedule is a function
 * of the seed and the round: a failing run prints its seed, and [FaultHarnessMain] replays it.
 */
class FaultHarness(private val options: Options) {
    data class Options(
        val seed: Long,
        val rounds: Int,
        /** "redis" or "postgres" ([FaultTarget]). */
        val engine: String = "redis",
        /** Clients in this JVM, each with [coroutines] loops. */
        val clients: Int = 3,
        /** Worker JVMs, each one client with [coroutines] loops. */
        val workers: Int = 2,
        val coroutines: Int = 4,
        /** How long the faults of a round last before everything heals. */
        val faultPhaseMs: Long = 3000,
        val log: (String) -> Unit = ::println,
    )

    /** What a run did and found. */
    class Report(
        val engine: String,
        val seed: Long,
        val rounds: Int,
        val schedules: Int,
        val faults: Map<String, Int>,
        val verdict: Verdict,
        val roundViolations: List<String>,
        val tookMs: Long,
        val worstQuiesceMs: Long,
        val worstPermitsBackMs: Long,
    ) {
        val violations: List<String> get() = roundViolations + verdict.violations

        override fun toString(): String = buildString {
            append("$engine, seed $seed: $rounds rounds, $schedules link schedules, ${faults.values.sum()} faults (")
            append(faults.entries.sortedBy { it.key }.joinToString { "${it.key} ${it.value}" })
            append("), ${tookMs / 1000} s; history: ")
            append(verdict.figures.entries.joinToString { "${it.key} ${it.value}" })
            append("; slowest quiesce after a heal ${worstQuiesceMs} ms, slowest return of every permit ${worstPermitsBackMs} ms; ")
            append(if (violations.isEmpty()) "no violations" else "${violations.size} violations")
        }
    }

    private val plan = Workload.Plan(
        semaphore = "harness-pool", permits = 3, lock = "harness-lock", coroutines = options.coroutines,
        config = Plans.config(
            leaseMs = 800, renewMs = 200, ttlMs = 1200, heartbeatMs = 200, replicaAcks = if (options.engine == "redis") 1 else 0,
            replicaTimeoutMs = 250,
        ),
    )

    /** A client's command (Redis) or socket (PostgreSQL) timeout here: untimed calls on a cut link fail after it. */
    private val timeoutSeconds = 1

    private val history = History()
    private val stopped = CopyOnWriteArrayList<Stopped>()
    private val faults = ConcurrentHashMap<String, AtomicInteger>()
    private val roundViolations = CopyOnWriteArrayList<String>()

    private fun count(kind: String) = faults.getOrPut(kind) { AtomicInteger() }.incrementAndGet()

    /** A call failed with an exception the contract does not name (S7): a violation, with its stack trace logged. */
    private fun unexpected(what: String) {
        roundViolations += "S7: ${what.lineSequence().first()}"
        options.log(what)
    }

    private lateinit var target: FaultTarget
    private val links = mutableListOf<FaultyLink>()
    private lateinit var checkerLink: FaultyLink

    private inner class InJvm(val name: String, val link: FaultyLink) {
        val client: DistributedSemaphoreClient = FaultTarget.connect(options.engine, target.url(link.port, timeoutSeconds))
        val workload = Workload(name, client, plan, history::record, options.seed xor name.hashCode().toLong(), ::unexpected)
    }

    private inner class Worker(val slot: Int, val link: FaultyLink, generation: Int) {
        val name = "w$slot.$generation"
        private val idle = java.util.concurrent.LinkedBlockingQueue<Unit>()
        private val errors: File = File.createTempFile("harness-worker-", ".err")
        val process: Process = ProcessBuilder(
            File(System.getProperty("java.home"), "bin/java").path, "-Xmx256m", "-XX:TieredStopAtLevel=1",
            "-cp", JvmProcess.classPath(), HarnessWorker::class.java.name,
            name, options.engine, target.url(link.port, timeoutSeconds), "${options.seed xor name.hashCode().toLong()}",
            *Plans.args(plan).toTypedArray(),
        ).redirectError(errors).start()
        private val ready = java.util.concurrent.CountDownLatch(1)

        init {
            Thread {
                try {
                    process.inputStream.bufferedReader().forEachLine { line ->
                        when (line) {
                            "READY" -> ready.countDown()
                            "IDLE" -> idle.put(Unit)
                            else -> if (line.startsWith("X ")) unexpected(line.substring(2).replace('|', '\n')) else Event.parse(line)?.let(history::record)
                        }
                    }
                } catch (e: java.io.IOException) {
                    // kill() destroys the process and the JDK closes its stdout under a blocked read ("Stream closed"):
                    // expected there (the worker is already recorded as stopped for good). Anywhere else, a failure.
                    if (!killed) unexpected("reading worker $name's output: $e")
                }
            }.apply { isDaemon = true }.start()
            check(ready.await(60, TimeUnit.SECONDS)) { "worker $name did not start: ${errors.readText().take(2000)}" }
        }

        fun send(command: String) {
            runCatching {
                process.outputStream.write("$command\n".toByteArray())
                process.outputStream.flush()
            }
        }

        fun awaitIdle(ms: Long): Boolean = idle.poll(ms, TimeUnit.MILLISECONDS) != null

        fun signal(signal: String) {
            ProcessBuilder("kill", "-$signal", "${process.pid()}").start().waitFor()
        }

        @Volatile
        private var killed = false

        fun kill() {
            killed = true
            process.destroyForcibly().waitFor()
            errors.delete()
        }
    }

    private val inJvm = mutableListOf<InJvm>()
    private val workers = mutableListOf<Worker>()
    private val generations = mutableMapOf<Int, Int>()

    fun run(): Report {
        val start = TimeSource.Monotonic.markNow()
        if (!DebugProbes.isInstalled) {
            DebugProbes.enableCreationStackTraces = false
            DebugProbes.install()
        }
        target = FaultTarget.start(options.engine)
        checkerLink = FaultyLink(target.primaryPort)
        val checker = FaultTarget.connect(options.engine, target.url(checkerLink.port, 2))
        val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
        var worstQuiesce = 0L
        var worstPermits = 0L
        var schedules = 0
        var seen = 0
        try {
            repeat(options.clients) { i ->
                val link = FaultyLink(target.primaryPort).also { links += it }
                inJvm += InJvm("c$i", link).also {
                    runBlocking { it.workload.warmUp() }
                    it.workload.start(scope)
                }
            }
            repeat(options.workers) { i ->
                val link = FaultyLink(target.primaryPort).also { links += it }
                generations[i] = 1
                workers += Worker(i, link, 1)
            }
            for (round in 1..options.rounds) {
                val random = Random(options.seed * 1_000_003 + round)
                inJvm.forEach { it.workload.resume() }
                workers.forEach { it.send("RESUME") }
                schedules += faultPhase(round, random)
                val quiesced = quiesce(round)
                worstQuiesce = maxOf(worstQuiesce, quiesced)
                worstPermits = maxOf(worstPermits, permitsBack(round, checker))
                val events = history.snapshot()
                val outcomes = events.subList(seen, events.size).filter { it is Event.Grant || it is Event.None || it is Event.Fail }
                    .groupingBy { if (it is Event.Fail) it.error else it.javaClass.simpleName }.eachCount()
                seen = events.size
                options.log("round $round (${GLOBAL_FAULTS[(round - 1) % GLOBAL_FAULTS.size] ?: "no process fault"}): outcomes $outcomes; " +
                    "quiesced in $quiesced ms; faults so far ${faults.entries.sortedBy { it.key }.joinToString { "${it.key} ${it.value}" }}")
            }
        } finally {
            inJvm.forEach { it.workload.stop() }
            scope.cancel()
            workers.forEach {
                it.send("STOP")
                if (!it.process.waitFor(5, TimeUnit.SECONDS)) it.kill()
            }
            inJvm.forEach { runCatching { it.client.close() } }
            runCatching { checker.close() }
            links.forEach { it.close() }
            checkerLink.close()
            runCatching { target.close() }
        }
        // S2 allows the time between the hand-over and the workload's recording of it (a busy machine, a GC): half of
        // renewInterval. A grant handed over late (H1 broken) arrives with nothing left, or less than nothing.
        val verdict = Checker(plan.totals, minRemainingNanos = plan.config.renewInterval.inWholeNanoseconds / 2, timeoutSlackNanos = TIMEOUT_SLACK_MS * 1_000_000)
            .check(history.snapshot(), stopped)
        return Report(
            options.engine, options.seed, options.rounds, schedules, faults.mapValues { it.value.get() }, verdict, roundViolations,
            start.elapsedNow().inWholeMilliseconds, worstQuiesce, worstPermits,
        )
    }

    /** Runs the round's faults for [Options.faultPhaseMs], then heals everything. Returns the link schedules it ran. */
    private fun faultPhase(round: Int, random: Random): Int {
        val phase = options.faultPhaseMs
        val linkSchedules = links.map { link -> link to linkSchedule(random, phase) }
        // One of these per round, in turn, so that every run of 4 rounds or more has each: a worker JVM killed, a
        // failover, the server restarted, a worker JVM stopped for a while; at a random moment of the phase.
        val global = GLOBAL_FAULTS[(round - 1) % GLOBAL_FAULTS.size]?.let { it to random.nextLong(0, phase / 2) }
        val target = random.nextInt(workers.size.coerceAtLeast(1))
        val pauseMs = random.nextLong(100, 2 * plan.config.leaseTime.inWholeMilliseconds)
        runBlocking {
            coroutineScope {
                for ((link, steps) in linkSchedules) launch(Dispatchers.IO) { runLinkSchedule(link, steps) }
                if (global != null) launch(Dispatchers.IO) {
                    delay(global.second)
                    when (global.first) {
                        "pause" -> if (workers.isNotEmpty()) pause(workers[target], pauseMs)
                        "kill" -> if (workers.isNotEmpty()) killAndReplace(target)
                        "restart" -> restartServer()
                        "failover" -> failover()
                    }
                }
                delay(phase)
            }
        }
        links.forEach { it.heal() }
        return linkSchedules.count { it.second.isNotEmpty() }
    }

    /** One fault on one link: what, when (from the phase's start), for how long. */
    private data class Step(val kind: String, val atMs: Long, val forMs: Long)

    /** A link's schedule for a phase: faults one after another, none overlapping, two or three a second. */
    private fun linkSchedule(random: Random, phase: Long): List<Step> {
        val steps = mutableListOf<Step>()
        var at = random.nextLong(0, 300)
        val lease = plan.config.leaseTime.inWholeMilliseconds
        while (at < phase - 100) {
            val length = when (random.nextInt(5)) {
                0 -> random.nextLong(lease, 2 * lease) // longer than a lease
                else -> random.nextLong(30, lease / 2)
            }
            val kind = when (random.nextInt(12)) {
                0, 1, 2 -> "partition"
                3, 4 -> "to-server-held"
                5, 6 -> "to-client-held"
                7, 8 -> "partition-healed-to-client-first"
                9 -> "partition-healed-to-server-first"
                else -> "reset"
            }
            steps += Step(kind, at, if (kind == "reset") 0 else length)
            at += steps.last().forMs + random.nextLong(20, 300)
        }
        return steps
    }

    private suspend fun runLinkSchedule(link: FaultyLink, steps: List<Step>) {
        val started = TimeSource.Monotonic.markNow()
        for (step in steps) {
            val wait = step.atMs - started.elapsedNow().inWholeMilliseconds
            if (wait > 0) delay(wait)
            count(step.kind)
            when (step.kind) {
                "reset" -> link.reset()
                "partition" -> link.partition()
                "to-server-held" -> link.hold(toServer = true, toClient = false)
                "to-client-held" -> link.hold(toServer = false, toClient = true)
                else -> link.partition()
            }
            if (step.forMs > 0) {
                delay(step.forMs)
                when (step.kind) {
                    "partition-healed-to-client-first" -> {
                        link.hold(toServer = true, toClient = false)
                        delay(100)
                    }
                    "partition-healed-to-server-first" -> {
                        link.hold(toServer = false, toClient = true)
                        delay(100)
                    }
                }
                link.heal()
            }
        }
    }

    private suspend fun pause(worker: Worker, ms: Long) {
        count("worker-paused")
        val from = System.nanoTime()
        worker.signal("STOP")
        delay(ms)
        worker.signal("CONT")
        stopped += Stopped(worker.name, from, System.nanoTime())
    }

    private fun killAndReplace(slot: Int) {
        count("worker-killed")
        val old = workers[slot]
        stopped += Stopped(old.name, System.nanoTime(), Long.MAX_VALUE)
        old.kill()
        val generation = generations.getValue(slot) + 1
        generations[slot] = generation
        workers[slot] = Worker(slot, old.link, generation)
    }

    private fun restartServer() {
        count("server-restarted")
        target.restart() // kill -9, then the same port and directory: Redis's AOF (fsync always) or PostgreSQL's WAL keeps every write
    }

    /** The primary dies; its replica or standby (which confirmed every grant handed over) is promoted, and every link moves to it. */
    private fun failover() {
        count("failover")
        val port = target.failover()
        for (link in links + checkerLink) {
            link.targetPort = port
            link.reset()
        }
        target.replaceReplica()
    }

    /** Quiesces every client after the heal; every call under way must end within [LIVENESS_MS] (S5). Returns how long it took. */
    private fun quiesce(round: Int): Long {
        val start = TimeSource.Monotonic.markNow()
        inJvm.forEach { it.workload.quiesce() }
        workers.forEach { it.send("QUIESCE") }
        val deadline = start + LIVENESS_MS.milliseconds
        for (c in inJvm) {
            while (!c.workload.isIdle && !deadline.hasPassedNow()) Thread.sleep(5)
            if (!c.workload.isIdle) roundViolations += "S5: round $round: client ${c.name} still had calls under way $LIVENESS_MS ms after the heal"
        }
        if (inJvm.any { !it.workload.isIdle }) dumpStuckCalls(round)
        for (w in workers) {
            val left = -deadline.elapsedNow().inWholeMilliseconds
            if (!w.awaitIdle(maxOf(left, 1))) roundViolations += "S5: round $round: worker ${w.name} still had calls under way $LIVENESS_MS ms after the heal"
        }
        return start.elapsedNow().inWholeMilliseconds
    }

    /** Prints where the calls of this JVM that did not end are suspended (once per run: the dump is long). */
    private fun dumpStuckCalls(round: Int) {
        if (dumped) return
        dumped = true
        val stuck = DebugProbes.dumpCoroutinesInfo().filter { info ->
            info.lastObservedStackTrace().any { it.className.endsWith("Workload") && it.methodName.startsWith("oneCall") }
        }
        options.log("S5, round $round: ${stuck.size} calls of this JVM under way; where each is suspended:")
        for (info in stuck) {
            options.log("  ${info.state} ${info.context[kotlinx.coroutines.CoroutineName] ?: ""}")
            info.lastObservedStackTrace().filter { it.className.startsWith("dev.semaphore") }.take(12).forEach { options.log("    at $it") }
        }
    }

    @Volatile
    private var dumped = false

    /** Once every client is quiet, every permit must come back within [PERMITS_BACK_MS] (S6). Returns how long it took. */
    private fun permitsBack(round: Int, checker: DistributedSemaphoreClient): Long = runBlocking {
        val start = TimeSource.Monotonic.markNow()
        val deadline = start + PERMITS_BACK_MS.milliseconds
        for ((name, total) in plan.totals) {
            val s = checker.semaphore(name, total, plan.config)
            var last = "never read"
            while (true) {
                val seen = runCatching { s.inspect(5) }.getOrNull()
                if (seen != null) {
                    last = "${seen.availablePermits} of ${seen.totalPermits} free, holders ${seen.holders.map { it.leaseId }}, ${seen.queueLength} queued"
                    if (seen.availablePermits == total && seen.holderCount == 0 && seen.queueLength == 0) break
                }
                if (deadline.hasPassedNow()) {
                    roundViolations += "S6: round $round: $name not whole $PERMITS_BACK_MS ms after every client was quiet: $last"
                    break
                }
                delay(20)
            }
        }
        start.elapsedNow().inWholeMilliseconds
    }

    companion object {
        /** The process and server faults, one per round in this order (null: none that round): any 4 rounds have each. */
        private val GLOBAL_FAULTS = listOf("kill", "failover", "restart", "pause", "pause", null)

        /**
         * S4: how much later than its timeout a timed call may return: T1's 100 ms, and a busy 2-core machine's delays;
         * 500 ms unless `-Dfaults.timeoutSlackMs` says otherwise (the default build's two harnesses at once: its pom).
         */
        val TIMEOUT_SLACK_MS: Long = System.getProperty("faults.timeoutSlackMs")?.let { v ->
            requireNotNull(v.toLongOrNull()?.takeIf { it > 0 }) { "faults.timeoutSlackMs must be a positive number of ms, was '$v'" }
        } ?: 500L

        /**
         * S5: after a heal, every call ends within this: the command timeout (1 s), a waiter's time to live (1.2 s),
         * a lease (0.8 s), the longest hold (1.6 s), and the holds ahead in the line.
         */
        const val LIVENESS_MS = 15_000L

        /** S6: once quiet, every permit is back within this: a dead waiter's time to live and a lease, and slack. */
        const val PERMITS_BACK_MS = 5_000L
    }
}
