@file:OptIn(InternalSemaphoreApi::class)

package dev.semaphore

import dev.semaphore.bridge.HoldKind
import dev.semaphore.bridge.InternalSemaphoreApi
import dev.semaphore.bridge.JavaBridge
import dev.semaphore.bridge.LockHold
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.ints.shouldBeGreaterThan
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.cancel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/*
 * Random programs of Locks, ReadWriteLocks (every policy), coroutines and blocked Java threads, run for
 * real, and the deadlock detector (internal/Deadlocks.kt, docs/diagnostics.md "Deadlocks") compared with
 * the truth that the test keeps itself: which actor waits on which lock, and which holds it has.
 *
 * Every actor takes its holds with suspending calls, scoped forms or blocking thread calls, and releases
 * them itself with a release that names its hold (Observer.kt, H1-H2): reads only by withReadLock (or a
 * Java LockHold), so no hold is left unattributed and every real cycle is one the detector must find.
 *
 * Replay one program: -Ddeadlock.random.seed=<seed printed in the failure>.
 */

/** 1 by default, 5 under -Pstress (StressSpec). */
private val randomDeadlockScale: Int = System.getProperty("stress.scale")?.toIntOrNull()?.coerceAtLeast(1) ?: 1

private const val BASE_SEED = 0x5EED_D00DL
private const val ROUNDS = 100

/** How long nothing may change, with every unfinished actor waiting, before the test calls it stuck. */
private const val STABLE_MS = 100L

/** A timed wait that never times out within a round: it waits like the untimed call. */
private val LONG_WAIT = 60.seconds

private enum class Mode { LOCK, READ, WRITE }

/** PLAIN: lock()/lockWrite() and the plain unlock; SCOPED: withLock/withReadLock/withWriteLock; TIMED: tryLock(timeout). */
private enum class Form { PLAIN, SCOPED, TIMED }

/** A scope coroutine around one step (still the same participant): none, withContext(CoroutineName), coroutineScope, withTimeout. */
private enum class Scope { NONE, WITH_CONTEXT, COROUTINE_SCOPE, WITH_TIMEOUT }

private class Step(val lock: Int, val mode: Mode, val form: Form, val scope: Scope, val delayBeforeMs: Long) {
    fun describe(locks: List<LockDef>): String = buildString {
        if (delayBeforeMs > 0) append("sleep ${delayBeforeMs}ms, ")
        append(
            when (mode) {
                Mode.LOCK -> "lock"
                Mode.READ -> "read"
                Mode.WRITE -> "write"
            },
        )
        append(' ').append(locks[lock].short).append(" (").append(form.name.lowercase())
        if (scope != Scope.NONE) append(", in ").append(scope.name.lowercase())
        append(')')
    }
}

private class Script(val name: String, val onThread: Boolean, val steps: List<Step>, val holdMs: Long)

private class LockDef(val index: Int, val name: String, val policy: ReadWritePolicy?) {
    val isRw: Boolean get() = policy != null
    val short: String get() = "L$index"
    override fun toString(): String = "$short=" + (if (policy == null) "Lock" else "ReadWriteLock($policy)") + " \"$name\""
}

private class Program(val seed: Long, val locks: List<LockDef>, val actors: List<Script>, val onPool: Boolean) {
    fun describe(): String = buildString {
        append("program of seed ").append(seed).append(" (replay: -Ddeadlock.random.seed=").append(seed).append("), ")
        append(if (onPool) "coroutines on a 2-thread pool" else "coroutines on Dispatchers.Default").append('\n')
        append("  locks: ").append(locks.joinToString(", ")).append('\n')
        for (a in actors) {
            append("  ").append(a.name).append(if (a.onThread) " (blocked thread): " else " (coroutine): ")
            append(a.steps.joinToString(" -> ") { it.describe(locks) })
            append(" -> hold ").append(a.holdMs).append("ms, release in reverse\n")
        }
    }
}

private fun generate(seed: Long, round: Int): Program {
    val rnd = Random(seed)
    val nLocks = 2 + rnd.nextInt(3)
    val locks = List(nLocks) { i ->
        val policy = if (rnd.nextBoolean()) null else ReadWritePolicy.entries[rnd.nextInt(ReadWritePolicy.entries.size)]
        LockDef(i, "ddr-r$round-L$i", policy)
    }
    val nActors = 2 + rnd.nextInt(3)
    val threadActor = if (rnd.nextInt(100) < 35) rnd.nextInt(nActors) else -1
    val actors = List(nActors) { a ->
        val onThread = a == threadActor
        val k = when (rnd.nextInt(100)) {
            in 0 until 12 -> 1
            in 12 until 62 -> 2
            else -> 3
        }.coerceAtMost(nLocks)
        val chosen = locks.indices.shuffled(rnd).take(k)
        val steps = chosen.map { l ->
            val mode = if (!locks[l].isRw) Mode.LOCK else if (rnd.nextInt(100) < 40) Mode.READ else Mode.WRITE
            val form = when {
                onThread -> if (rnd.nextBoolean()) Form.PLAIN else Form.TIMED
                mode == Mode.READ -> Form.SCOPED // a named release (H2): no hold left unattributed
                else -> Form.entries[rnd.nextInt(Form.entries.size)]
            }
            val scope = if (onThread || rnd.nextInt(100) < 70) Scope.NONE else Scope.entries[1 + rnd.nextInt(Scope.entries.size - 1)]
            Step(l, mode, form, scope, rnd.nextLong(0, 4))
        }
        // Mostly short holds; some long enough that waits pass detectDeadlocksAfter without a deadlock.
        val hold = if (rnd.nextInt(100) < 80) rnd.nextLong(0, 4) else rnd.nextLong(20, 41)
        Script("ddr-r$round-a$a", onThread, steps, hold)
    }
    return Program(seed, locks, actors, onPool = rnd.nextInt(100) < 30)
}

/** What the test knows: who waits on which lock, who holds what, who finished; and a counter of changes. */
private class Truth(n: Int) {
    private val monitor = Any()
    private val waiting = IntArray(n) { -1 }
    private val holds = Array(n) { ArrayList<Int>() }
    private val done = BooleanArray(n)
    private val waitingSince = LongArray(n)
    private var changes = 0L

    /** The longest wait that ended in a hold (nanoseconds): past detectDeadlocksAfter, the watch searched during it. */
    var longestWait = 0L
        private set

    fun waits(a: Int, lock: Int) = synchronized(monitor) { waiting[a] = lock; waitingSince[a] = System.nanoTime(); changes++ }
    fun got(a: Int, lock: Int) = synchronized(monitor) {
        waiting[a] = -1
        holds[a] += lock
        longestWait = maxOf(longestWait, System.nanoTime() - waitingSince[a])
        changes++
    }
    fun gaveUp(a: Int) = synchronized(monitor) { waiting[a] = -1; changes++ }
    fun releasing(a: Int, lock: Int) = synchronized(monitor) { holds[a].remove(lock); changes++ }
    fun finished(a: Int) = synchronized(monitor) { waiting[a] = -1; done[a] = true; changes++ }

    class Snapshot(val waiting: IntArray, val holds: List<List<Int>>, val done: BooleanArray, val changes: Long) {
        val allDone: Boolean get() = done.all { it }
        val unfinished: List<Int> get() = done.indices.filter { !done[it] }
    }

    fun snapshot(): Snapshot = synchronized(monitor) {
        Snapshot(waiting.copyOf(), holds.map { ArrayList(it) }, done.copyOf(), changes)
    }

    val changeCount: Long get() = synchronized(monitor) { changes }
}

private class Tally {
    var rounds = 0
    var deadlocked = 0
    var finished = 0

    /** Finished rounds in which a request waited longer than detectDeadlocksAfter (so the watch searched, and must have found nothing). */
    var finishedAfterLongWaits = 0
    var withThread = 0
    var deadlockedWithThread = 0
    var falseReports = 0
    var missed = 0
    var maxDeadlockSize = 0

    /** How many deadlocked rounds had an actor stuck on each kind of lock ("Lock", "read FIFO", "write PHASE_FAIR", ...). */
    val deadlockedOn = HashMap<String, Int>()
    val failures = ArrayList<String>()
}

class DeadlockDetectorRandomSpec : FunSpec({
    test("random programs of locks, read-write locks, coroutines and blocked threads: the detector reports exactly the real deadlocks") {
        val only = System.getProperty("deadlock.random.seed")?.toLongOrNull()
        val seeds = if (only != null) listOf(only) else List(ROUNDS * randomDeadlockScale) { BASE_SEED + it }
        val tally = Tally()
        val pool = Executors.newFixedThreadPool(2) { r -> Thread(r, "ddr-pool").apply { isDaemon = true } }
        val poolDispatcher = pool.asCoroutineDispatcher()
        // Each deadlock found is also logged (ERROR); this spec makes dozens on purpose, so those lines are left out while it runs.
        val log = java.util.logging.Logger.getLogger("dev.semaphore")
        val previousFilter = log.filter
        log.filter = java.util.logging.Filter { r ->
            !(r.message?.startsWith("deadlock of ") == true && r.message.contains("\"ddr-r")) && (previousFilter?.isLoggable(r) ?: true)
        }
        val started = System.nanoTime()
        try {
            runBlocking {
                for ((round, seed) in seeds.withIndex()) {
                    runRound(round, seed, poolDispatcher, tally)
                }
            }
        } finally {
            log.filter = previousFilter
            poolDispatcher.close()
        }
        val seconds = (System.nanoTime() - started) / 1e9
        println(
            "DeadlockDetectorRandomSpec: rounds=${tally.rounds} deadlocked=${tally.deadlocked} finished=${tally.finished} " +
                "(${tally.finishedAfterLongWaits} after waits > 30ms) " +
                "withThread=${tally.withThread} (deadlocked ${tally.deadlockedWithThread}) largestDeadlock=${tally.maxDeadlockSize} " +
                "deadlockedOn=${tally.deadlockedOn.toSortedMap()} " +
                "falseReports=${tally.falseReports} missed=${tally.missed} in ${"%.1f".format(seconds)}s",
        )
        withClue(tally.failures.take(5).joinToString("\n\n") + if (tally.failures.size > 5) "\n\n... and ${tally.failures.size - 5} more" else "") {
            tally.failures.shouldBeEmpty()
        }
        if (only == null) {
            withClue("the generator must make programs that deadlock and programs that finish") {
                tally.deadlocked shouldBeGreaterThan 0
                tally.finished shouldBeGreaterThan 0
                tally.finishedAfterLongWaits shouldBeGreaterThan 0
                tally.deadlockedWithThread shouldBeGreaterThan 0
            }
        }
    }
})

private val QUOTED = Regex("\"([^\"]*)\"")
private val WHO = Regex("^(?:coroutine|thread) \"([^\"]*)\"")

private suspend fun runRound(round: Int, seed: Long, poolDispatcher: CoroutineDispatcher, tally: Tally) {
    val program = generate(seed, round)
    val names = program.locks.map { it.name }.toSet()
    val heard = CopyOnWriteArrayList<Deadlock>()
    val listener = object : SemaphoreListener {
        override fun onDeadlock(primitive: Inspectable, deadlock: Deadlock) {
            heard += deadlock
        }
    }
    val locks: List<Any> = program.locks.map { d ->
        val diagnostics = Diagnostics(name = d.name, detectDeadlocksAfter = 20.milliseconds)
        val p: Inspectable = if (d.policy == null) Lock(diagnostics = diagnostics) else ReadWriteLock(d.policy, diagnostics)
        p.addListener(listener)
        p
    }
    fun dumps(): String = locks.joinToString("\n") { (it as Inspectable).dump() }
    fun queued(): Int = locks.sumOf { if (it is Lock) it.queueLength else (it as ReadWriteLock).queueLength }
    fun ours(d: Deadlock): Boolean = d.participants.any { p -> QUOTED.find(p.waitsOn)?.groupValues?.get(1) in names }
    fun found(): List<Deadlock> = Diagnostics.findDeadlocks().filter(::ours)

    val truth = Truth(program.actors.size)
    val errors = CopyOnWriteArrayList<Throwable>()
    val dispatcher = if (program.onPool) poolDispatcher else Dispatchers.Default
    val scope = CoroutineScope(SupervisorJob() + dispatcher)
    val gate = CompletableDeferred<Unit>()
    val threadGate = CountDownLatch(1)
    val jobs = ArrayList<Job>()
    val threads = ArrayList<Thread>()
    for ((a, script) in program.actors.withIndex()) {
        if (script.onThread) {
            threads += Thread({
                try {
                    threadGate.await()
                    runThreadSteps(script, a, 0, program, locks, truth)
                } catch (_: InterruptedException) {
                    // broken out of a deadlock by the test
                } catch (t: Throwable) {
                    errors += t
                } finally {
                    truth.finished(a)
                }
            }, script.name).apply { isDaemon = true; start() }
        } else {
            jobs += scope.launch(CoroutineName(script.name)) {
                try {
                    gate.await()
                    runSteps(script, a, 0, program, locks, truth)
                } catch (e: CancellationException) {
                    throw e
                } catch (t: Throwable) {
                    errors += t
                } finally {
                    truth.finished(a)
                }
            }
        }
    }
    gate.complete(Unit)
    threadGate.countDown()

    // The truth: finished, or stuck (every unfinished actor in a lock's line, behind holds of unfinished actors, and nothing changes).
    val sampled = ArrayList<Deadlock>()
    val startNanos = System.nanoTime()
    var lastChanges = -1L
    var stableSince = System.nanoTime()
    var stuck: Truth.Snapshot? = null
    var stuckFound: List<Deadlock> = emptyList()
    val failures = ArrayList<String>()
    fun fail(kind: String, text: String) {
        failures += "$kind in round $round: $text\n${program.describe()}"
    }
    while (true) {
        val snap = truth.snapshot()
        if (snap.allDone) break
        for (d in found()) if (sampled.size < 20 && sampled.none { it.toString() == d.toString() }) sampled += d
        val now = System.nanoTime()
        if (snap.changes != lastChanges) {
            lastChanges = snap.changes
            stableSince = now
        } else if (now - stableSince >= STABLE_MS * 1_000_000 && looksStuck(snap, program, queued())) {
            // Confirm: nothing changes while the detector is asked (a deadlock is permanent; the detector confirms by a second look).
            var seen: List<Deadlock> = emptyList()
            val deadline = System.nanoTime() + 3_000_000_000L
            while (System.nanoTime() < deadline && truth.changeCount == snap.changes) {
                seen = found()
                if (seen.isNotEmpty()) break
                delay(10)
            }
            if (truth.changeCount == snap.changes) {
                stuck = snap
                stuckFound = seen
                break
            }
        }
        if (now - startNanos > 20_000_000_000L) {
            fail("HUNG (neither finished nor a deadlock)", "after 20 s: ${describeTruth(snap, program)}, queued=${queued()}\n${dumps()}")
            break
        }
        delay(5)
    }

    tally.rounds++
    if (program.actors.any { it.onThread }) tally.withThread++
    val finalSnap = stuck
    if (finalSnap == null && failures.isEmpty()) {
        tally.finished++
        if (truth.longestWait >= 30_000_000L) tally.finishedAfterLongWaits++
        // No deadlock existed: whatever was reported is false. Give a late report of the watch a moment to arrive.
        delay(30)
        val reports = sampled + heard.filter(::ours)
        if (reports.isNotEmpty()) {
            tally.falseReports++
            fail("FALSE REPORT (the program finished)", reports.joinToString("\n") { it.toString() })
        }
    } else if (finalSnap != null) {
        tally.deadlocked++
        if (program.actors.any { it.onThread }) tally.deadlockedWithThread++
        val kinds = finalSnap.unfinished.map { a ->
            val step = program.actors[a].steps.first { it.lock == finalSnap.waiting[a] }
            if (step.mode == Mode.LOCK) "Lock" else step.mode.name.lowercase() + " " + program.locks[step.lock].policy
        }
        for (k in kinds.toSet()) tally.deadlockedOn.merge(k, 1, Int::plus)
        if (stuckFound.isEmpty()) {
            tally.missed++
            fail("MISSED DEADLOCK", "every unfinished actor waits and nothing changed for ${STABLE_MS}ms + 3s, yet findDeadlocks() found nothing: ${describeTruth(finalSnap, program)}\n${dumps()}")
        } else {
            // The watch reports it too, to the listeners of the locks in it.
            val watchHeard = withTimeoutOrNull(5.seconds) {
                while (heard.none(::ours)) delay(5)
                true
            } ?: false
            if (!watchHeard) {
                tally.missed++
                fail("MISSED BY THE WATCH", "findDeadlocks() found ${stuckFound.first()}, but no listener heard onDeadlock within 5 s\n${dumps()}")
            }
            tally.maxDeadlockSize = maxOf(tally.maxDeadlockSize, stuckFound.maxOf { it.participants.size })
            // Every report of this round, on demand or by the watch, names only stuck actors, waiting where they wait, holding what they hold.
            val reports = (stuckFound + sampled + heard.filter(::ours)).distinctBy { it.toString() }
            for (d in reports) {
                val wrong = checkAgainstTruth(d, finalSnap, program)
                if (wrong != null) {
                    tally.falseReports++
                    fail("FALSE REPORT (in a deadlocked program)", "$wrong\nreport: $d\ntruth: ${describeTruth(finalSnap, program)}\n${dumps()}")
                }
            }
        }
    }

    // Break the deadlock (or end a hung round): cancel the coroutines, interrupt the threads; each releases what it holds.
    jobs.forEach { it.cancel() }
    threads.forEach { it.interrupt() }
    val ended = withTimeoutOrNull(10.seconds) {
        jobs.forEach { it.join() }
        while (threads.any { it.isAlive }) delay(5)
        true
    } ?: false
    if (!ended) {
        fail("ACTORS DID NOT END after cancel/interrupt", "${describeTruth(truth.snapshot(), program)}\n${dumps()}")
        locks.forEach { if (it is Lock) it.close() else (it as ReadWriteLock).close() }
        threads.forEach { it.join(5_000) }
    }
    scope.cancel()
    for (t in errors) fail("AN ACTOR FAILED", t.stackTraceToString())
    if (ended) {
        val leftover = locks.filter { if (it is Lock) it.isLocked || it.queueLength > 0 else (it as ReadWriteLock).let { rw -> rw.readHolds > 0 || rw.isWriteLocked || rw.queueLength > 0 } }
        if (leftover.isNotEmpty()) fail("HOLDS LEFT after every actor ended", leftover.joinToString("\n") { (it as Inspectable).dump() })
        val after = found()
        if (after.isNotEmpty()) fail("FALSE REPORT (after every actor ended)", after.joinToString("\n"))
    }
    tally.failures += failures
}

/** Every unfinished actor waits on a lock held (as the test knows) by an unfinished actor, and the lines hold exactly them. */
private fun looksStuck(snap: Truth.Snapshot, program: Program, queued: Int): Boolean {
    val unfinished = snap.unfinished
    if (unfinished.isEmpty() || unfinished.any { snap.waiting[it] < 0 }) return false
    for (a in unfinished) {
        val lock = snap.waiting[a]
        if (unfinished.none { lock in snap.holds[it] }) return false // a grant on its way, or a free lock (a liveness bug: the round hangs)
    }
    return queued == unfinished.size
}

private fun describeTruth(snap: Truth.Snapshot, program: Program): String = program.actors.indices.joinToString("; ", "truth: ") { a ->
    val name = program.actors[a].name
    when {
        snap.done[a] -> "$name finished"
        else -> "$name holds [" + snap.holds[a].joinToString(", ") { program.locks[it].short } + "]" +
            (if (snap.waiting[a] >= 0) " waits on ${program.locks[snap.waiting[a]].short}" else " runs")
    }
}

/** Null if every participant of [d] is a stuck actor, waiting where the test knows it waits and holding only what it holds; else why not. */
private fun checkAgainstTruth(d: Deadlock, snap: Truth.Snapshot, program: Program): String? {
    if (d.participants.isEmpty()) return "a deadlock without participants"
    val seen = HashSet<String>()
    for (p in d.participants) {
        val name = WHO.find(p.who)?.groupValues?.get(1) ?: return "participant \"${p.who}\" is none of the actors"
        val a = program.actors.indexOfFirst { it.name == name }
        if (a < 0) return "participant \"${p.who}\" is none of this round's actors"
        if (!seen.add(name)) return "participant $name named twice"
        if (snap.done[a] || snap.waiting[a] < 0) return "participant $name is not stuck"
        val waitsOn = program.locks[snap.waiting[a]]
        if (QUOTED.find(p.waitsOn)?.groupValues?.get(1) != waitsOn.name) return "participant $name said to wait on ${p.waitsOn}, but waits on ${waitsOn.short} \"${waitsOn.name}\""
        for (h in p.holds) {
            val held = QUOTED.find(h)?.groupValues?.get(1)
            val l = program.locks.indexOfFirst { it.name == held }
            // The writer on its way in a writers' line holds that line's permit, shown under the lock it waits on.
            if (l < 0 || (l !in snap.holds[a] && l != snap.waiting[a])) return "participant $name said to hold \"$h\", but holds " + snap.holds[a].map { program.locks[it].short }
        }
    }
    return null
}

private suspend fun runSteps(script: Script, a: Int, i: Int, program: Program, locks: List<Any>, truth: Truth) {
    if (i == script.steps.size) {
        if (script.holdMs > 0) delay(script.holdMs)
        return
    }
    val s = script.steps[i]
    if (s.delayBeforeMs > 0) delay(s.delayBeforeMs)
    when (s.scope) {
        Scope.NONE -> step(script, a, i, program, locks, truth)
        Scope.WITH_CONTEXT -> withContext(CoroutineName("${script.name}-inner$i")) { step(script, a, i, program, locks, truth) }
        Scope.COROUTINE_SCOPE -> coroutineScope { step(script, a, i, program, locks, truth) }
        Scope.WITH_TIMEOUT -> withTimeout(LONG_WAIT) { step(script, a, i, program, locks, truth) }
    }
}

private suspend fun step(script: Script, a: Int, i: Int, program: Program, locks: List<Any>, truth: Truth) {
    val s = script.steps[i]
    val l = s.lock
    suspend fun inner() {
        truth.got(a, l)
        try {
            runSteps(script, a, i + 1, program, locks, truth)
        } finally {
            truth.releasing(a, l)
        }
    }
    suspend fun taken(acquire: suspend () -> Boolean, release: () -> Unit) {
        val ok = try {
            acquire()
        } catch (t: Throwable) {
            truth.gaveUp(a)
            throw t
        }
        check(ok) { "${script.name}: a timed try of ${program.locks[l]} with $LONG_WAIT returned false" }
        try {
            inner()
        } finally {
            release()
        }
    }
    truth.waits(a, l)
    try {
        when (s.mode) {
            Mode.LOCK -> {
                val lock = locks[l] as Lock
                when (s.form) {
                    Form.PLAIN -> taken({ lock.lock(); true }) { lock.unlock() }
                    Form.SCOPED -> lock.withLock { inner() }
                    Form.TIMED -> taken({ lock.tryLock(LONG_WAIT) }) { lock.unlock() }
                }
            }
            Mode.WRITE -> {
                val rw = locks[l] as ReadWriteLock
                when (s.form) {
                    Form.PLAIN -> taken({ rw.lockWrite(); true }) { rw.unlockWrite() }
                    Form.SCOPED -> rw.withWriteLock { inner() }
                    Form.TIMED -> taken({ rw.tryLockWrite(LONG_WAIT) }) { rw.unlockWrite() }
                }
            }
            Mode.READ -> (locks[l] as ReadWriteLock).withReadLock { inner() }
        }
    } catch (t: Throwable) {
        truth.gaveUp(a) // cancelled while waiting in a scoped form: no longer in line
        throw t
    }
}

private fun runThreadSteps(script: Script, a: Int, i: Int, program: Program, locks: List<Any>, truth: Truth) {
    if (i == script.steps.size) {
        if (script.holdMs > 0) Thread.sleep(script.holdMs)
        return
    }
    val s = script.steps[i]
    if (s.delayBeforeMs > 0) Thread.sleep(s.delayBeforeMs)
    val timeout = if (s.form == Form.TIMED) LONG_WAIT.inWholeNanoseconds else JavaBridge.NO_TIMEOUT
    truth.waits(a, s.lock)
    val hold: LockHold? = try {
        when (s.mode) {
            Mode.LOCK -> JavaBridge.lockBlocking(locks[s.lock] as Lock, timeout) { it }
            Mode.READ -> JavaBridge.lockBlocking(locks[s.lock] as ReadWriteLock, HoldKind.READ, timeout) { it }
            Mode.WRITE -> JavaBridge.lockBlocking(locks[s.lock] as ReadWriteLock, HoldKind.WRITE, timeout) { it }
        }
    } catch (t: Throwable) {
        truth.gaveUp(a)
        throw t
    }
    checkNotNull(hold) { "${script.name}: a blocking wait of ${program.locks[s.lock]} with $LONG_WAIT returned nothing" }
    truth.got(a, s.lock)
    try {
        runThreadSteps(script, a, i + 1, program, locks, truth)
    } finally {
        truth.releasing(a, s.lock)
        hold.unlock()
    }
}
