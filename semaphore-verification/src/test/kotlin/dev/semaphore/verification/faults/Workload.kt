package dev.semaphore.verification.faults

import dev.semaphore.distributed.Lease
import dev.semaphore.distributed.DistributedSemaphoreClient
import dev.semaphore.distributed.DistributedConfig
import dev.semaphore.distributed.async.AsyncDistributedLock
import dev.semaphore.distributed.async.AsyncDistributedSemaphore
import dev.semaphore.distributed.withLock
import dev.semaphore.distributed.withPermit
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.delay
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.runInterruptible
import java.time.Duration as JavaDuration
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds

/**
 * What the clients of a fault-harness run do, the same in this JVM and in a worker JVM: several coroutines per client,
 * each in a loop that asks for a semaphore or the lock in one of the ways a user would (acquire, a try now, a timed try,
 * withPermit, a lock, a Java blocking call with a timeout), holds what it got for a while, looking at the lease before
 * every step of work as a careful user would (a holder works only while its lease is live by its client's count), and
 * releases it. Every call is recorded ([Event]); the loop stops between calls when the harness quiesces it.
 */
class Workload(
    /** Names this client in the history ("c3", "w1-2"): the prefix of its calls' ids. */
    private val client: String,
    private val distributed: DistributedSemaphoreClient,
    private val plan: Plan,
    private val record: (Event) -> Unit,
    seed: Long,
    /** Where a failure outside the contract is told, once per type, with its stack trace. */
    private val tell: (String) -> Unit,
) {
    /** The semaphores of a run and their timings (the same in every client). */
    data class Plan(val semaphore: String, val permits: Int, val lock: String, val config: DistributedConfig, val coroutines: Int) {
        val totals: Map<String, Int> get() = mapOf(semaphore to permits, lock to 1)
    }

    private val random = Random(seed)

    /** The failure types outside the contract seen so far (each printed once with its stack trace). */
    private val unexpected: MutableSet<String> = java.util.concurrent.ConcurrentHashMap.newKeySet()
    private val calls = AtomicLong()
    private val busy = AtomicInteger()

    @Volatile
    private var paused = false
    private val jobs = mutableListOf<Job>()

    /**
     * Runs each form of call once, unrecorded, before any fault: a JVM's first calls load and compile their classes,
     * which on a busy machine takes longer than a timed call's bound (S4 is about the client, not about class loading).
     */
    suspend fun warmUp() {
        val s = distributed.semaphore(plan.semaphore, plan.permits, plan.config)
        val lock = distributed.lock(plan.lock, plan.config)
        runCatching { s.tryAcquire(100.milliseconds)?.let { s.release(it) } }
        runCatching { s.withPermit { } }
        runCatching { lock.tryLock(100.milliseconds)?.let { lock.unlock(it) } }
        runCatching {
            runInterruptible(Dispatchers.IO) {
                AsyncDistributedSemaphore.of(s).acquireBlocking(1, JavaDuration.ofMillis(100)).ifPresent { it.close() }
                AsyncDistributedLock.of(lock).lockBlocking(JavaDuration.ofMillis(100)).ifPresent { it.close() }
            }
        }
    }

    /** Starts the loops in [scope]. */
    fun start(scope: CoroutineScope) {
        repeat(plan.coroutines) { i ->
            val seed = synchronized(random) { random.nextLong() }
            jobs += scope.launch(Dispatchers.Default) { loop(Random(seed), i) }
        }
    }

    /** Stops starting calls; [isIdle] once every loop is between calls. */
    fun quiesce() {
        paused = true
    }

    fun resume() {
        paused = false
    }

    val isIdle: Boolean get() = paused && busy.get() == 0

    fun stop() {
        jobs.forEach { it.cancel() }
    }

    private suspend fun loop(random: Random, index: Int) {
        while (kotlinx.coroutines.currentCoroutineContext().isActive) {
            if (paused) {
                delay(10)
                continue
            }
            busy.incrementAndGet()
            try {
                if (paused) continue
                oneCall(random, "$client/$index.${calls.incrementAndGet()}")
            } finally {
                busy.decrementAndGet()
            }
            delay(random.nextLong(0, 30))
        }
    }

    private fun now() = System.nanoTime()

    private suspend fun oneCall(random: Random, id: String) {
        val onLock = random.nextInt(3) == 0
        val name = if (onLock) plan.lock else plan.semaphore
        val permits = if (onLock || random.nextInt(4) != 0) 1 else 2
        val lock = distributed.lock(plan.lock, plan.config)
        val s = distributed.semaphore(plan.semaphore, plan.permits, plan.config)
        val timeoutMs = random.nextLong(50, 1500)
        val op = when (random.nextInt(10)) {
            0, 1 -> "acquire"
            2 -> "tryNow"
            3, 4, 5 -> "tryTimed"
            6, 7 -> "withPermit"
            else -> "javaBlocking"
        }
        // A Java call is timed on its own thread, as its caller would time it (the hop to that thread is this harness's).
        if (op != "javaBlocking") record(Event.Call(id, now(), op, name, permits, if (op == "tryTimed") timeoutMs else -1))
        val hold = holdTime(random)
        try {
            when (op) {
                "withPermit" -> {
                    val block: suspend CoroutineScope.(Lease) -> Unit = { lease ->
                        granted(id, lease)
                        if (work(id, lease, hold)) record(Event.End(id, now(), "release"))
                    }
                    if (onLock) lock.withLock(block) else s.withPermit(permits, block)
                    record(Event.Released(id, now(), "ok"))
                    return
                }
                "javaBlocking" -> {
                    val timeout = JavaDuration.ofMillis(timeoutMs)
                    val permit = runInterruptible(Dispatchers.IO) {
                        record(Event.Call(id, now(), op, name, permits, timeoutMs))
                        if (onLock) {
                            AsyncDistributedLock.of(lock).lockBlocking(timeout).orElse(null)
                        } else {
                            AsyncDistributedSemaphore.of(s).acquireBlocking(permits, timeout).orElse(null)
                        }.also { if (it == null) record(Event.None(id, now())) }
                    }
                    if (permit == null) return
                    val lease = permit.lease()
                    granted(id, lease)
                    if (work(id, lease, hold)) record(Event.End(id, now(), "release"))
                    // close() blocks until the server answers: on a thread of its own, as a Java caller's, never on
                    // Dispatchers.Default, whose threads the client's background work needs.
                    released(id) { runInterruptible(Dispatchers.IO) { permit.close() } }
                    return
                }
            }
            val lease = when (op) {
                "acquire" -> if (onLock) lock.lock() else s.acquire(permits)
                "tryNow" -> if (onLock) lock.tryLock() else s.tryAcquire(permits)
                else -> if (onLock) lock.tryLock(timeoutMs.milliseconds) else s.tryAcquire(timeoutMs.milliseconds, permits)
            }
            if (lease == null) {
                record(Event.None(id, now()))
                return
            }
            granted(id, lease)
            if (work(id, lease, hold)) record(Event.End(id, now(), "release"))
            released(id) { if (onLock) lock.unlock(lease) else s.release(lease) }
        } catch (e: CancellationException) {
            if (!kotlinx.coroutines.currentCoroutineContext().isActive) throw e
            record(Event.Fail(id, now(), e.javaClass.simpleName))
        } catch (e: Exception) {
            record(Event.Fail(id, now(), e.javaClass.simpleName))
            if (e !is dev.semaphore.distributed.DistributedSemaphoreException && unexpected.add(e.javaClass.name)) {
                tell("$client: a call ($op) failed with ${e.javaClass.name}, which the contract does not name: ${e.stackTraceToString().take(3000)}")
            }
        }
    }

    private fun granted(id: String, lease: Lease) {
        val before = now()
        record(Event.Grant(id, now(), lease.fencingToken, before + lease.remaining.inWholeNanoseconds))
    }

    private suspend fun released(id: String, release: suspend () -> Unit) {
        val outcome = try {
            release()
            "ok"
        } catch (e: CancellationException) {
            throw e
        } catch (e: Exception) {
            e.javaClass.simpleName
        }
        record(Event.Released(id, now(), outcome))
    }

    /** Mostly short holds; some longer than a renew interval, a few longer than the lease (kept by renewals). */
    private fun holdTime(random: Random): Long {
        val lease = plan.config.leaseTime.inWholeMilliseconds
        return when (random.nextInt(20)) {
            0 -> random.nextLong(lease, 2 * lease)
            in 1..5 -> random.nextLong(50, lease / 2)
            else -> random.nextLong(0, 50)
        }
    }

    /**
     * Works [holdMs] in steps of 10 ms, each after a look at the lease (recorded); returns true if it worked to the
     * end, false if it stopped because the lease was lost (recorded as End "lost").
     */
    private suspend fun work(id: String, lease: Lease, holdMs: Long): Boolean {
        val until = now() + holdMs * 1_000_000
        while (true) {
            val before = now()
            val expiresAt = if (lease.isLost) -1L else before + lease.remaining.inWholeNanoseconds
            val t = now()
            record(Event.Look(id, t, expiresAt))
            if (expiresAt < 0 || t >= expiresAt) {
                record(Event.End(id, now(), "lost"))
                return false
            }
            if (t >= until) return true
            try {
                delay(minOf(10L, (until - t) / 1_000_000 + 1))
            } catch (e: CancellationException) { // withPermit's block, cancelled because its lease was lost
                if (lease.isLost) record(Event.End(id, now(), "lost"))
                throw e
            }
        }
    }
}
