/*
 * DistributedSemaphoreClient: the client side that every engine shares, and the background work that its handles need
 * while callers of this JVM wait or hold leases (the lines: wake-ups and heartbeats of queued requests; the grants
 * received; the renewal of leases). All of that is this one class's private state (the waiters, the lines, the leases
 * kept), guarded together and ended together by close(). What is sent is the engine's (spi/Engine.kt: RedisEngine in
 * semaphore-redis, PostgresEngine in semaphore-postgres); a semaphore's operations are in SemaphoreHandle.kt.
 */
@file:OptIn(EngineApi::class)

package dev.semaphore.distributed

import dev.semaphore.ListenerRegistration
import dev.semaphore.SemaphoreClosedException
import dev.semaphore.distributed.spi.Engine
import dev.semaphore.distributed.spi.EngineApi
import dev.semaphore.distributed.spi.EngineHost
import dev.semaphore.distributed.spi.Listening
import dev.semaphore.distributed.spi.Place
import dev.semaphore.distributed.spi.RequestIds
import dev.semaphore.distributed.spi.RequestRef
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.cancel
import kotlinx.coroutines.delay
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import java.security.SecureRandom
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicLong
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeMark
import kotlin.time.TimeSource

/**
 * A client of one distributed-semaphore server: Redis (`dev.semaphore.redis.RedisSemaphoreClient.connect`) or
 * PostgreSQL (`dev.semaphore.postgres.PostgresSemaphoreClient.connect`). Every [DistributedSemaphore] and
 * [DistributedLock] made here shares its connections; the engine is chosen by the line that creates the client, and
 * everything else is the same (docs/postgres.md lists where the engines differ).
 *
 * It does the background work of its handles: it renews every lease they granted until it is released (unless
 * `autoRenew` is off), and sends the heartbeats of their queued requests. What it does with the leases (renewed, a
 * renewal failed, lost) it tells the listeners added with [addListener] and JFR (`dev.semaphore.distributed.*`
 * events). Its memory is bounded by what is live: handles are views that keep nothing here, and the state of a
 * semaphore name (its wake-ups, its queued requests' heartbeat) lasts only while a request of this JVM waits on it.
 *
 * Close it when done: its waiting callers fail with `SemaphoreClosedException` and leave the line (as far as the server
 * can still be told), renewals stop (leases then end at their expiry unless released first), and it closes its
 * connections (not a driver client or pool the application passed in: that stays the application's). Every later
 * call of a handle made here throws `SemaphoreClosedException`.
 *
 * The driver's failures do not reach the caller as such: a connection failure or a call that got no answer in time is
 * a [ServerUnavailableException] (of the engine's subtype, with the driver's exception as cause), and so on
 * (DistributedExceptions.kt).
 */
public abstract class DistributedSemaphoreClient @EngineApi protected constructor(
    private val engine: Engine,
) : AutoCloseable {
    /**
     * The name this client's requests carry, for [DistributedSemaphore.inspect] in every JVM: set by the engine's
     * connect call (a Redis client's connection name, for example), else "pid@host" of this JVM.
     */
    public val clientName: String get() = engine.clientName

    /** Renewals, heartbeats and the Java forms' requests run here; cancelled by [close]. */
    internal val background: CoroutineScope = CoroutineScope(SupervisorJob() + Dispatchers.Default)

    /**
     * This client's id: 16 random hexadecimal digits, the start of every request id it makes (so of
     * every [Lease.id]), unique across the clients of a server. [DistributedSemaphore.inspect] shows it.
     */
    public val clientId: String = ByteArray(8).also { SecureRandom().nextBytes(it) }.joinToString("") { "%02x".format(it) }
    private val requestCounter = AtomicLong()

    /** What follows the counter in this client's request ids: "/" and the encoded [clientName] (RequestIds). */
    private val idSuffix = "/" + RequestIds.encodeName(engine.clientName)

    /** Every request of this client now waiting for a grant, by id: one entry per waiting caller. */
    private val waiting = ConcurrentHashMap<String, Waiter>()

    /** The owners holding a DistributedLock through this client (DistributedLock.kt): one entry per held lock with an owner. */
    private val lockOwners = ConcurrentHashMap<LockHandle.OwnerKey, Any>()

    /** The state of each semaphore that a caller of this JVM waits on, by name; removed when none does. */
    private val lines = HashMap<String, Line>() // guarded by itself

    /** Names whose total on the server differed from a handle's configured one and were reported; at most [WARNED_NAMES_MAX]. */
    private val warnedNames: MutableSet<String> = ConcurrentHashMap.newKeySet()

    @Volatile
    private var closed = false

    init {
        engine.start(object : EngineHost {
            override val scope: CoroutineScope get() = background
            override val clientId: String get() = this@DistributedSemaphoreClient.clientId
            override fun granted(id: String, place: Place) {
                val waiter = waiting[id] ?: return
                waiter.grant.complete(place to waiter.anchor)
            }
        })
    }

    /**
     * A handle on the semaphore [name]; if the server has no semaphore of that name, the first operation
     * creates it with [permits] permits. Afterwards the total on the server stands (R2): a handle
     * configured with another total works with the server's, and the client logs a warning that names
     * both. Change it with [DistributedSemaphore.setPermits] and the other resizes.
     *
     * A handle is a view: it keeps nothing in the client and costs nothing to drop; calling this per
     * request is fine. Nothing is sent to the server here.
     * @throws IllegalArgumentException if [name] is empty or contains `{` or `}`, or [permits] < 1.
     * @throws SemaphoreClosedException if this client is closed.
     */
    public fun semaphore(name: String, permits: Int, config: DistributedConfig = DistributedConfig()): DistributedSemaphore {
        require(permits >= 1) { "permits must be at least 1, was $permits" }
        val checked = engine.checkName(name)
        return SemaphoreHandle(this, checked, permits, checkConfig(config), engine.semaphore(checked, permits, config))
    }

    /** A handle on the lock [name]: the semaphore [name] of 1 permit. Throws as [semaphore]. */
    public fun lock(name: String, config: DistributedConfig = DistributedConfig()): DistributedLock {
        val checked = engine.checkName(name)
        return LockHandle(SemaphoreHandle(this, checked, 1, checkConfig(config), engine.semaphore(checked, 1, config)), lockOwners)
    }

    /**
     * Adds [listener], which is told from now on of the renewals, failed renewals and losses of every
     * lease of this client (of any semaphore or lock made here; see [LeaseListener]), until the
     * returned registration is closed (closing it twice does nothing) or this client is. Adding the
     * same listener twice tells it twice.
     * @throws SemaphoreClosedException if this client is closed.
     */
    public fun addListener(listener: LeaseListener): ListenerRegistration {
        val entry = ListenerEntry(listener)
        listeners += entry
        if (closed) { // close() may have emptied the list before the entry went in
            listeners.remove(entry)
            throw closedException()
        }
        return ListenerRegistration { listeners.remove(entry) }
    }

    /** One registration of a listener (removed by identity: the same listener added twice is two entries). */
    private class ListenerEntry(val listener: LeaseListener)

    /** The listeners added by [addListener], one entry per open registration; emptied by [close]. */
    private val listeners = CopyOnWriteArrayList<ListenerEntry>()

    /** The number of listeners registered now (for tests: bounded state). */
    internal val listenerCount: Int get() = listeners.size

    /** Tells the listeners and JFR that the keeper renewed [lease] ([attempt]: the JFR events of [DistributedJfr.beginRenewal]). */
    internal fun renewed(lease: Lease, attempt: Any?) {
        DistributedJfr.renewed(attempt, lease, clientName)
        if (listeners.isEmpty()) return
        val info = LeaseInfo.of(lease)
        tell("onLeaseRenewed") { it.onLeaseRenewed(info) }
    }

    /** Tells the listeners and JFR that a renewal of [lease] by the keeper failed with [cause], and the lease lasts. */
    internal fun renewalFailed(lease: Lease, cause: Throwable, attempt: Any?) {
        DistributedJfr.renewalFailed(attempt, lease, clientName, cause)
        if (listeners.isEmpty()) return
        val info = LeaseInfo.of(lease)
        tell("onRenewalFailed") { it.onRenewalFailed(info, cause) }
    }

    /** Tells the listeners and JFR that [lease] was lost with [cause] (once per lease: when its end fails, [hold]). */
    private fun lost(lease: Lease, cause: LeaseLostException) {
        DistributedJfr.lost(lease, clientName, cause)
        if (listeners.isEmpty()) return
        val info = LeaseInfo.of(lease)
        tell("onLeaseLost") { it.onLeaseLost(info, cause) }
    }

    /** Calls [call] on every listener; what one throws is logged, and the others are still told. */
    private inline fun tell(what: String, call: (LeaseListener) -> Unit) {
        for (entry in listeners) {
            try {
                call(entry.listener)
            } catch (t: Throwable) {
                LOG.log(System.Logger.Level.WARNING, "the LeaseListener ${entry.listener} threw from $what (ignored)", t)
            }
        }
    }

    private fun checkConfig(config: DistributedConfig): DistributedConfig {
        if (closed) throw closedException()
        engine.admit(config)
        return config
    }

    internal fun closedException(cause: Throwable? = null) =
        SemaphoreClosedException("this ${this::class.simpleName} (${engine.servers}) was closed", cause)

    override fun close() {
        closed = true
        listeners.clear()
        val failure = closedException()
        waiting.values.forEach { it.grant.completeExceptionally(failure) }
        background.cancel()
        engine.close()
    }

    internal val isClosed: Boolean get() = closed

    /** A new request id, "clientId-n/name" (head.lua, RequestIds). */
    internal fun newRequestId(): String = "$clientId-${requestCounter.incrementAndGet()}$idSuffix"

    /**
     * A request waiting for its grant: [grant] completes with the place reply that granted it (from
     * pub/sub or a heartbeat), or fails. [anchor] is the moment the last request that found it still
     * queued was sent: the grant came later, so a lease counted from it ends no later than on the
     * server (R4).
     */
    internal class Waiter(@Volatile var anchor: TimeMark) {
        /** The place that settled the request (granted, failed or unknown), and the anchor to count a lease from. */
        val grant = CompletableDeferred<Pair<Place, TimeMark>>()
    }

    /** Registers `id` before its request is sent, so that a grant published before the reply is not missed. */
    internal fun expect(id: String, sent: TimeMark): Waiter {
        val waiter = Waiter(sent)
        waiting[id] = waiter
        if (closed) waiter.grant.completeExceptionally(closedException()) // close() may not have seen it
        return waiter
    }

    internal fun stopExpecting(id: String) {
        waiting.remove(id)
    }

    internal fun waiterFor(id: String): Waiter? = waiting[id]

    // ---- the lines: subscriptions and heartbeats, while a caller of this JVM waits ----------------

    /**
     * The client's side of one semaphore while callers of this JVM wait on it: the subscription to its
     * wake-ups and the heartbeats of their requests. Created by the first [joinLine]; after the last
     * [leaveLine] it lingers for [LINGER] (so that a busy semaphore is not subscribed again for every
     * request), then is removed and its wake-ups stopped. Every change happens under the lock of [lines], and so
     * does every SUBSCRIBE and UNSUBSCRIBE call (Lettuce sends them in call order), so that an
     * unsubscription never overtakes the subscription of a newer Line.
     */
    private inner class Line(val name: String) {
        /** Callers between [joinLine] and [leaveLine]. */
        var users = 0

        /** Its wake-ups (the engine's). */
        val listening: Listening = engine.listen(name)

        /** The queued requests that heartbeats keep in line, by the timings of their handles. */
        val beats = HashMap<SemaphoreHandle.Timing, Beat>()

        var removal: Job? = null
    }

    /** The queued requests of one line whose handles share `timing`, and the job that sends their heartbeats. */
    private class Beat(val semaphore: SemaphoreHandle) {
        val ids = LinkedHashSet<String>()
        var job: Job? = null
    }

    /**
     * Called when the request `id`, sent at [sent], was queued: keeps the wake-ups of [name] on and `id` in
     * line (heartbeats, R5) until [leaveLine]. Returns whether the subscription was confirmed before
     * [sent]; if not, a grant published before it was may have been missed, and the caller must
     * [awaitSubscribed], then ask the server once where its request is.
     */
    internal fun joinLine(name: String, id: String, sent: TimeMark, semaphore: SemaphoreHandle): Boolean = synchronized(lines) {
        if (closed) throw closedException()
        val line = lines.getOrPut(name) { Line(name) }
        if (line.listening.failed) line.listening.retry() // the last attempt failed: again
        line.users++
        line.removal?.cancel()
        line.removal = null
        val beat = line.beats.getOrPut(semaphore.timing) { Beat(semaphore) }
        beat.ids += id
        if (beat.job?.isActive != true) beat.job = background.launch { beat(beat) }
        val at = line.listening.confirmedAt
        at != null && at.elapsedNow() > sent.elapsedNow() // confirmed before the request was sent
    }

    internal suspend fun awaitSubscribed(name: String) {
        val line = synchronized(lines) { lines[name] } ?: return
        call { line.listening.awaitConfirmed() }
    }

    /** Undoes [joinLine] for `id`; the last user's leave starts the line's linger. */
    internal fun leaveLine(name: String, id: String, semaphore: SemaphoreHandle) = synchronized(lines) {
        val line = lines[name] ?: return@synchronized
        val beat = line.beats[semaphore.timing]
        if (beat != null && beat.ids.remove(id) && beat.ids.isEmpty()) {
            beat.job?.cancel()
            line.beats.remove(semaphore.timing)
        }
        if (--line.users == 0 && !closed) {
            line.removal = background.launch {
                delay(LINGER)
                synchronized(lines) {
                    if (line.users == 0 && lines[name] === line) {
                        lines.remove(name)
                        runCatching { line.listening.stop() }
                    }
                }
            }
        }
    }

    /** Sends the heartbeats of [beat]'s requests while there are any (R5, R7). */
    private suspend fun beat(beat: Beat) {
        while (true) {
            delay(beat.semaphore.timing.heartbeatInterval)
            val ids = synchronized(lines) { beat.ids.toTypedArray() }
            if (ids.isEmpty()) return
            beat.semaphore.heartbeat(ids)
        }
    }

    // ---- leases -----------------------------------------------------------------------------

    /**
     * A lease this client keeps alive, and when the keeper must next look at it: to renew it, or (a
     * fixed lease, or one whose release was attempted) to see whether its time ran out.
     */
    internal class Kept(val lease: Lease, val semaphore: SemaphoreHandle, @Volatile var dueAt: TimeSource.Monotonic.ValueTimeMark) {
        /** A look (a renewal) is under way. */
        @Volatile var busy = false

        /** No more renewals: its release was attempted. */
        @Volatile var watchOnly = false

        /** The failure of the last renewal, if it failed (the server out of reach). */
        @Volatile var lastError: Exception? = null
    }

    /**
     * Every lease this client granted and has not seen end, by id (one entry per live lease). One
     * coroutine, the keeper, looks at them when they are due: a lease costs no timer and no thread
     * wake-up of its own, only this entry.
     */
    private val kept = ConcurrentHashMap<String, Kept>()

    /** When the keeper looks next; null while it scans, or while nothing is kept (then a new lease wakes it). */
    @Volatile
    private var keeperNext: TimeSource.Monotonic.ValueTimeMark? = null
    private val keeperWake = Channel<Unit>(Channel.CONFLATED)
    private val keeperStarted = AtomicBoolean()

    /** The keeper's looks at leases so far (for tests: a lease is looked at about once per renewInterval, K2, K3). */
    internal val looks = AtomicLong()

    /** Starts keeping [lease] alive: renewed in the background, or watched until its fixed time runs out (K2). */
    internal fun hold(lease: Lease, semaphore: SemaphoreHandle) {
        val entry = Kept(lease, semaphore, semaphore.nextLook(lease))
        kept[lease.id] = entry
        lease.end.invokeOnCompletion { cause ->
            kept.remove(lease.id, entry)
            if (cause != null) lost(lease, cause as? LeaseLostException ?: lease.lostWith ?: return@invokeOnCompletion)
        }
        wakeKeeperFor(entry.dueAt)
    }

    /** Has the keeper look by [due]: wakes it if it would look later (or not at all). */
    private fun wakeKeeperFor(due: TimeSource.Monotonic.ValueTimeMark) {
        if (keeperStarted.compareAndSet(false, true)) background.launch { keep() }
        val next = keeperNext
        if (next == null || due < next) keeperWake.trySend(Unit)
    }

    /** After a release of [lease] was attempted: no more renewals; if no release is answered, it ends at its expiry (L3). */
    internal fun stopRenewing(lease: Lease) {
        kept[lease.id]?.watchOnly = true
    }

    /** The keeper looks at [entry] no more: its count ran out while its release is under way, which settles it (K3). */
    internal fun forget(entry: Kept) {
        kept.remove(entry.lease.id, entry)
    }

    /** Background withdrawals under way (T2): at most [MAX_WITHDRAWALS]. */
    private val withdrawals = java.util.concurrent.atomic.AtomicInteger()

    /** The number of background withdrawals under way (for tests: bounded state). */
    internal val withdrawalCount: Int get() = withdrawals.get()

    /**
     * T2: finishes the withdrawal of the request (or lease) `id` of [semaphore] in the background: see
     * [SemaphoreHandle.withdrawLater]. Beyond [MAX_WITHDRAWALS] at once, [attempt] is left as it is and nothing is
     * sent again: the server ends the request after waiterTimeToLive and a lease at its expiry by itself.
     */
    internal fun finishWithdrawal(semaphore: SemaphoreHandle, request: RequestRef, permits: Int, attempt: kotlinx.coroutines.Deferred<Place>?) {
        if (withdrawals.incrementAndGet() > MAX_WITHDRAWALS) {
            withdrawals.decrementAndGet()
            return
        }
        val job = background.launch { semaphore.withdrawLater(request, permits, attempt) }
        job.invokeOnCompletion { withdrawals.decrementAndGet() }
    }

    /** The keeper: looks at every kept lease that is due (each look in a coroutine of its own), then sleeps until the next is. */
    private suspend fun keep() {
        while (true) {
            keeperNext = null // a lease held while this scans wakes it again
            var next: TimeSource.Monotonic.ValueTimeMark? = null
            for (entry in kept.values) {
                if (entry.busy) continue
                if (entry.dueAt.hasPassedNow()) {
                    entry.busy = true
                    looks.incrementAndGet()
                    background.launch {
                        try {
                            entry.semaphore.look(entry)
                        } finally {
                            entry.busy = false
                            wakeKeeperFor(entry.dueAt)
                        }
                    }
                } else if (next == null || entry.dueAt < next) {
                    next = entry.dueAt
                }
            }
            keeperNext = next
            if (next == null) keeperWake.receive() else withTimeoutOrNull(-next.elapsedNow()) { keeperWake.receive() }
        }
    }

    /** The names (with a configured total) whose total on the server this client checked (checkTotalOnce); at most [WARNED_NAMES_MAX]. */
    private val checkedNames: MutableSet<String> = ConcurrentHashMap.newKeySet()

    /**
     * A grant at once does not say the server's total (its reply is only a token, to keep the script
     * short): the first one of each name and configured total asks for it, in the background, so that
     * a handle configured with another total is reported as the others are (R2).
     */
    internal fun checkTotalOnce(semaphore: SemaphoreHandle) {
        if (checkedNames.size >= WARNED_NAMES_MAX || !checkedNames.add("${semaphore.name}:${semaphore.configuredPermits}")) return
        background.launch {
            runCatching { semaphore.totalPermits() }.onSuccess { warnTotal(semaphore.name, semaphore.configuredPermits, it) }
        }
    }

    /** Logs, once per name (for at most [WARNED_NAMES_MAX] names), that the server's total is not the configured one (R2). */
    internal fun warnTotal(name: String, configured: Int, onServer: Int) {
        if (configured == onServer) return
        if (warnedNames.size >= WARNED_NAMES_MAX || !warnedNames.add(name)) return
        LOG.log(
            System.Logger.Level.WARNING,
            "the semaphore \"$name\" has $onServer permits on the server, not the $configured its handle was configured " +
                "with: the server's total stands (it changes only by addPermits, reducePermits or setPermits)",
        )
    }

    /**
     * Runs [call] (an engine's call), unless this client is closed: then throws SemaphoreClosedException without
     * calling; a failure that comes after [close] is one too (with the failure as its cause), and so is a cancellation
     * of the call by [close] while its caller is not cancelled.
     */
    internal suspend inline fun <T> call(call: () -> T): T {
        if (closed) throw closedException()
        try {
            return call()
        } catch (e: kotlinx.coroutines.CancellationException) {
            // An engine's call that [close] cancelled (its background work) while the caller itself goes on.
            if (closed && kotlin.coroutines.coroutineContext.isActive) throw closedException(e)
            throw e
        } catch (e: Exception) {
            if (closed && e !is IllegalArgumentException) throw closedException(e)
            throw e
        }
    }

    /** The engine's [ServerUnavailableException] subtype. */
    internal fun unavailable(message: String, cause: Throwable? = null): ServerUnavailableException = engine.unavailable(message, cause)

    override fun toString(): String =
        "${this::class.simpleName}(id=$clientId, name=$clientName, servers=${engine.servers}, waiting=${waiting.size}, " +
            "leases=${kept.size}, lines=${synchronized(lines) { lines.size }})"

    /** The sizes of the client's state, for tests: requests waiting, leases kept, lines (wake-ups). */
    internal fun stateSizes(): Triple<Int, Int, Int> = Triple(waiting.size, kept.size, synchronized(lines) { lines.size })

    private companion object {
        /** The most background withdrawals (T2) a client runs at once. */
        const val MAX_WITHDRAWALS = 10_000

        const val WARNED_NAMES_MAX = 1000

        /** The module's log: listeners' failures, totals that differ from a handle's. */
        val LOG: System.Logger = System.getLogger("dev.semaphore.distributed")

        /** How long a line stays (its wake-ups on) after its last waiter left. */
        val LINGER = 5.seconds
    }
}
