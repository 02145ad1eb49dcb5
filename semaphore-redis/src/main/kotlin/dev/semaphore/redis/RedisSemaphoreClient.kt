/*
 * RedisSemaphoreClient: the connections to Redis, and the background work that its handles need while
 * callers of this JVM wait or hold leases (the lines: subscriptions and heartbeats of queued requests;
 * the grants received by pub/sub; the renewal of leases). One file of about 700 lines on purpose: all of
 * that is this one class's private state (the waiters, the lines, the leases kept), guarded together and
 * ended together by close(). What it sends is in RedisScripts.kt (the Lua scripts, the request ids), a
 * semaphore's operations in RedisSemaphoreHandle.kt.
 */
package dev.semaphore.redis

import dev.semaphore.ListenerRegistration
import dev.semaphore.SemaphoreClosedException
import io.lettuce.core.RedisClient
import io.lettuce.core.RedisCommandExecutionException
import io.lettuce.core.RedisException
import io.lettuce.core.RedisNoScriptException
import io.lettuce.core.RedisURI
import io.lettuce.core.ScriptOutputType
import io.lettuce.core.api.StatefulConnection
import io.lettuce.core.api.StatefulRedisConnection
import io.lettuce.core.api.async.RedisScriptingAsyncCommands
import io.lettuce.core.cluster.RedisClusterClient
import io.lettuce.core.pubsub.RedisPubSubAdapter
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.cancel
import kotlinx.coroutines.delay
import kotlinx.coroutines.future.await
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
 * The connections to one Redis server, or to one Redis Cluster, that every [RedisSemaphore] and
 * [RedisLock] made here shares: one for commands (one Lua script per operation; on a cluster, sent to
 * the node of the semaphore's hash slot) and one for pub/sub (a subscription per semaphore name while
 * anyone of this JVM waits on it). Lettuce reconnects both after a drop and re-subscribes; a command it
 * repeats is harmless (R6).
 *
 * It also does the background work of its handles: it renews every lease they granted until it is
 * released (unless `autoRenew` is off), and sends the heartbeats of their queued requests. What it
 * does with the leases (renewed, a renewal failed, lost) it tells the listeners added with
 * [addListener] and JFR (`dev.semaphore.redis.*` events, docs/redis.md). Its memory is
 * bounded by what is live: handles are views that keep nothing here, and the state of a semaphore name
 * (its subscription, its queued requests' heartbeat) lasts only while a request of this JVM waits on it.
 *
 * Close it when done: its waiting callers fail with `SemaphoreClosedException` and leave the line (as
 * far as the server can still be told), renewals stop (leases then end at their expiry unless released
 * first), and it closes its connections; a Lettuce client passed to [connect] or [connectCluster]
 * stays open (its owner closes it). Every later call of a handle made here throws
 * `SemaphoreClosedException`.
 *
 * Lettuce's failures do not reach the caller as such: a connection failure or a command timeout is a
 * [RedisUnavailableException] (with Lettuce's exception as cause), and so on (RedisSemaphoreExceptions.kt).
 * How long a call waits for the server (C1 in docs/redis-protocol.md): a timed acquire at most its timeout
 * plus 100 ms, whatever the network does; a renewal, and `withPermit`'s release, at most what the lease has
 * left; every other call at most the Lettuce client's command timeout (10 s for a client made by [connect]
 * from a URI that sets none, `?timeout=2s` to change it). A wait in line has no limit but its caller's.
 */
public class RedisSemaphoreClient internal constructor(
    /** The server(s), "host:port", for messages (never the URI: it may hold a password). */
    private val servers: String,
    /**
     * The name this client's requests carry, for [RedisSemaphore.inspect] in every JVM: the name of its
     * Redis connections (Lettuce's `clientName`, which `CLIENT LIST` shows too), or if they have none
     * "pid@host" of this JVM (host from the environment's HOSTNAME or COMPUTERNAME, or /etc/hostname;
     * "pid" alone if none is found).
     */
    public val clientName: String,
    private val commands: StatefulConnection<String, String>,
    private val scripting: RedisScriptingAsyncCommands<String, String>,
    private val pubSub: StatefulRedisPubSubConnection<String, String>,
    /** Grants are published with SPUBLISH and received with SSUBSCRIBE (a Redis 7+ cluster), else PUBLISH/SUBSCRIBE. */
    private val sharded: Boolean,
    /**
     * Where grants and renewals are confirmed by replicas (RedisSemaphoreConfig.replicaAcks): a connection
     * of its own, because `WAIT` holds up the commands behind it on the connection. Opened on first use;
     * null on a cluster, where it is not supported.
     */
    private val confirmations: Lazy<StatefulRedisConnection<String, String>>?,
    /** Closes what this client opened: its connections, and the Lettuce client if it made it. */
    private val shutdown: () -> Unit,
    /** C1: takes each handle's timings (RedisConnections.kt): lowers the reconnect delay, or checks an application's client. */
    private val admit: (RedisSemaphoreConfig) -> Unit,
) : AutoCloseable {

    /** Renewals, heartbeats and the Java forms' requests run here; cancelled by [close]. */
    internal val background: CoroutineScope = CoroutineScope(SupervisorJob() + Dispatchers.Default)

    /**
     * This client's id: 16 random hexadecimal digits, the start of every request id it makes (so of
     * every [Lease.id]), unique across the clients of a server. [RedisSemaphore.inspect] shows it.
     */
    public val clientId: String = ByteArray(8).also { SecureRandom().nextBytes(it) }.joinToString("") { "%02x".format(it) }
    private val requestCounter = AtomicLong()

    /** What follows the counter in this client's request ids: "/" and the encoded [clientName] (RequestIds). */
    private val idSuffix = "/" + RequestIds.encodeName(clientName)

    /** The command that scripts publish grants with (in the settings, head.lua's last ARGV). */
    internal val publishCommand: String = if (sharded) "SPUBLISH" else "PUBLISH"

    /** Every request of this client now waiting for a grant, by id: one entry per waiting caller. */
    private val waiting = ConcurrentHashMap<String, Waiter>()

    /** The owners holding a RedisLock through this client (RedisLock.kt): one entry per held lock with an owner. */
    private val lockOwners = ConcurrentHashMap<RedisLockHandle.OwnerKey, Any>()

    /** The state of each semaphore that a caller of this JVM waits on, by channel; removed when none does. */
    private val lines = HashMap<String, Line>() // guarded by itself

    /** Names whose total on the server differed from a handle's configured one and were reported; at most [WARNED_NAMES_MAX]. */
    private val warnedNames: MutableSet<String> = ConcurrentHashMap.newKeySet()

    @Volatile
    private var closed = false

    init {
        pubSub.addListener(object : RedisPubSubAdapter<String, String>() {
            override fun message(channel: String, message: String) = onGrants(message)
            override fun smessage(channel: String, message: String) = onGrants(message)
        })
    }

    /**
     * A handle on the semaphore [name]; if the server has no semaphore of that name, the first operation
     * creates it with [permits] permits. Afterwards the total on the server stands (R2): a handle
     * configured with another total works with the server's, and the client logs a warning that names
     * both. Change it with [RedisSemaphore.setPermits] and the other resizes.
     *
     * A handle is a view: it keeps nothing in the client and costs nothing to drop; calling this per
     * request is fine. Nothing is sent to the server here.
     * @throws IllegalArgumentException if [name] is empty or contains `{` or `}`, or [permits] < 1.
     * @throws SemaphoreClosedException if this client is closed.
     */
    public fun semaphore(name: String, permits: Int, config: RedisSemaphoreConfig = RedisSemaphoreConfig()): RedisSemaphore {
        require(permits >= 1) { "permits must be at least 1, was $permits" }
        return RedisSemaphoreHandle(this, checkName(name), permits, checkConfig(config))
    }

    /** A handle on the lock [name]: the semaphore [name] of 1 permit. Throws as [semaphore]. */
    public fun lock(name: String, config: RedisSemaphoreConfig = RedisSemaphoreConfig()): RedisLock =
        RedisLockHandle(RedisSemaphoreHandle(this, checkName(name), 1, checkConfig(config)), lockOwners)

    /**
     * Adds [listener], which is told from now on of the renewals, failed renewals and losses of every
     * lease of this client (of any semaphore or lock made here; see [RedisLeaseListener]), until the
     * returned registration is closed (closing it twice does nothing) or this client is. Adding the
     * same listener twice tells it twice.
     * @throws SemaphoreClosedException if this client is closed.
     */
    public fun addListener(listener: RedisLeaseListener): ListenerRegistration {
        val entry = Listening(listener)
        listeners += entry
        if (closed) { // close() may have emptied the list before the entry went in
            listeners.remove(entry)
            throw closedException()
        }
        return ListenerRegistration { listeners.remove(entry) }
    }

    /** One registration of a listener (removed by identity: the same listener added twice is two entries). */
    private class Listening(val listener: RedisLeaseListener)

    /** The listeners added by [addListener], one entry per open registration; emptied by [close]. */
    private val listeners = CopyOnWriteArrayList<Listening>()

    /** The number of listeners registered now (for tests: bounded state). */
    internal val listenerCount: Int get() = listeners.size

    /** Tells the listeners and JFR that the keeper renewed [lease] ([attempt]: the JFR events of [RedisJfr.beginRenewal]). */
    internal fun renewed(lease: Lease, attempt: Any?) {
        RedisJfr.renewed(attempt, lease, clientName)
        if (listeners.isEmpty()) return
        val info = LeaseInfo.of(lease)
        tell("onLeaseRenewed") { it.onLeaseRenewed(info) }
    }

    /** Tells the listeners and JFR that a renewal of [lease] by the keeper failed with [cause], and the lease lasts. */
    internal fun renewalFailed(lease: Lease, cause: Throwable, attempt: Any?) {
        RedisJfr.renewalFailed(attempt, lease, clientName, cause)
        if (listeners.isEmpty()) return
        val info = LeaseInfo.of(lease)
        tell("onRenewalFailed") { it.onRenewalFailed(info, cause) }
    }

    /** Tells the listeners and JFR that [lease] was lost with [cause] (once per lease: when its end fails, [hold]). */
    private fun lost(lease: Lease, cause: LeaseLostException) {
        RedisJfr.lost(lease, clientName, cause)
        if (listeners.isEmpty()) return
        val info = LeaseInfo.of(lease)
        tell("onLeaseLost") { it.onLeaseLost(info, cause) }
    }

    /** Calls [call] on every listener; what one throws is logged, and the others are still told. */
    private inline fun tell(what: String, call: (RedisLeaseListener) -> Unit) {
        for (entry in listeners) {
            try {
                call(entry.listener)
            } catch (t: Throwable) {
                LOG.log(System.Logger.Level.WARNING, "the RedisLeaseListener ${entry.listener} threw from $what (ignored)", t)
            }
        }
    }

    private fun checkConfig(config: RedisSemaphoreConfig): RedisSemaphoreConfig {
        require(config.replicaAcks == 0 || confirmations != null) {
            "replicaAcks (${config.replicaAcks}) is not supported on a Redis Cluster client; use 0"
        }
        if (closed) throw closedException()
        admit(config)
        return config
    }

    internal fun closedException(cause: Throwable? = null) =
        SemaphoreClosedException("this RedisSemaphoreClient ($servers) was closed", cause)

    override fun close() {
        closed = true
        listeners.clear()
        val failure = closedException()
        waiting.values.forEach { it.grant.completeExceptionally(failure) }
        background.cancel()
        pubSub.close()
        commands.close()
        if (confirmations?.isInitialized() == true) confirmations.value.close()
        shutdown()
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
        /** The place reply that settled the request ({"G", ...} or {"E", reason} or {"U"}), and the anchor to count a lease from. */
        val grant = CompletableDeferred<Pair<List<Any?>, TimeMark>>()
    }

    /** Registers [id] before its request is sent, so that a grant published before the reply is not missed. */
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
     * channel and the heartbeats of their requests. Created by the first [joinLine]; after the last
     * [leaveLine] it lingers for [LINGER] (so that a busy semaphore is not subscribed again for every
     * request), then is removed and unsubscribed. Every change happens under the lock of [lines], and so
     * does every SUBSCRIBE and UNSUBSCRIBE call (Lettuce sends them in call order), so that an
     * unsubscription never overtakes the subscription of a newer Line.
     */
    private inner class Line(val channel: String) {
        /** Callers between [joinLine] and [leaveLine]. */
        var users = 0

        /** When the server confirmed the subscription; null until then. */
        @Volatile
        var subscribedAt: TimeMark? = null

        /** Completes when the last SUBSCRIBE was answered (or failed: then the next [joinLine] sends another). */
        @Volatile
        var subscribed: CompletableDeferred<Unit> = CompletableDeferred()

        /** Sends SUBSCRIBE (under the lock of [lines]). */
        fun subscribe() {
            val attempt = CompletableDeferred<Unit>()
            subscribed = attempt
            val subscription = if (sharded) pubSub.async().ssubscribe(channel) else pubSub.async().subscribe(channel)
            subscription.whenComplete { _, e ->
                if (e == null) {
                    subscribedAt = kotlin.time.TimeSource.Monotonic.markNow()
                    attempt.complete(Unit)
                } else {
                    attempt.completeExceptionally(e)
                }
            }
        }

        init {
            subscribe()
        }

        /** The queued requests that heartbeats keep in line, by the timings of their handles. */
        val beats = HashMap<RedisSemaphoreHandle.Timing, Beat>()

        var removal: Job? = null
    }

    /** The queued requests of one line whose handles share [timing], and the job that sends their heartbeats. */
    private class Beat(val semaphore: RedisSemaphoreHandle) {
        val ids = LinkedHashSet<String>()
        var job: Job? = null
    }

    /**
     * Called when the request [id], sent at [sent], was queued: keeps [channel] subscribed and [id] in
     * line (heartbeats, R5) until [leaveLine]. Returns whether the subscription was confirmed before
     * [sent]; if not, a grant published before it was may have been missed, and the caller must
     * [awaitSubscribed], then ask the server once where its request is.
     */
    internal fun joinLine(channel: String, id: String, sent: TimeMark, semaphore: RedisSemaphoreHandle): Boolean = synchronized(lines) {
        if (closed) throw closedException()
        val line = lines.getOrPut(channel) { Line(channel) }
        if (line.subscribed.isCompleted && line.subscribedAt == null) line.subscribe() // the last attempt failed: again
        line.users++
        line.removal?.cancel()
        line.removal = null
        val beat = line.beats.getOrPut(semaphore.timing) { Beat(semaphore) }
        beat.ids += id
        if (beat.job?.isActive != true) beat.job = background.launch { beat(beat) }
        val at = line.subscribedAt
        at != null && at.elapsedNow() > sent.elapsedNow() // confirmed before the request was sent
    }

    internal suspend fun awaitSubscribed(channel: String) {
        val line = synchronized(lines) { lines[channel] } ?: return
        val attempt = line.subscribed
        lettuce("SUBSCRIBE $channel") { attempt.await() }
    }

    /** Undoes [joinLine] for [id]; the last user's leave starts the line's linger. */
    internal fun leaveLine(channel: String, id: String, semaphore: RedisSemaphoreHandle) = synchronized(lines) {
        val line = lines[channel] ?: return@synchronized
        val beat = line.beats[semaphore.timing]
        if (beat != null && beat.ids.remove(id) && beat.ids.isEmpty()) {
            beat.job?.cancel()
            line.beats.remove(semaphore.timing)
        }
        if (--line.users == 0 && !closed) {
            line.removal = background.launch {
                delay(LINGER)
                synchronized(lines) {
                    if (line.users == 0 && lines[channel] === line) {
                        lines.remove(channel)
                        runCatching { if (sharded) pubSub.async().sunsubscribe(channel) else pubSub.async().unsubscribe(channel) }
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
    internal class Kept(val lease: Lease, val semaphore: RedisSemaphoreHandle, @Volatile var dueAt: TimeSource.Monotonic.ValueTimeMark) {
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
    internal fun hold(lease: Lease, semaphore: RedisSemaphoreHandle) {
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
     * T2: finishes the withdrawal of the request (or lease) [id] of [semaphore] in the background: see
     * [RedisSemaphoreHandle.withdrawLater]. Beyond [MAX_WITHDRAWALS] at once, [attempt] is left as it is and nothing is
     * sent again: the server ends the request after waiterTimeToLive and a lease at its expiry by itself.
     */
    internal fun finishWithdrawal(semaphore: RedisSemaphoreHandle, id: String, permits: Int, attempt: kotlinx.coroutines.Deferred<List<Any?>>?) {
        if (withdrawals.incrementAndGet() > MAX_WITHDRAWALS) {
            withdrawals.decrementAndGet()
            return
        }
        val job = background.launch { semaphore.withdrawLater(id, permits, attempt) }
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

    /** A message of grants (lib.lua's grant()): "id:permits:token:remainingMs" or "id:E:reason:total", comma-separated (R3, R4). */
    private fun onGrants(message: String) {
        for (entry in message.split(',')) {
            val id = entry.substringBefore(':')
            val waiter = waiting[id] ?: continue
            val parts = entry.split(':')
            val place: List<Any?> = if (parts[1] == "E") {
                listOf("E", parts[2], parts.getOrNull(3)?.toLongOrNull()) // as where() answers: {"E", reason, total}
            } else {
                listOf("G", parts[1].toLong(), parts[2].toLong(), parts[3].toLong())
            }
            waiter.grant.complete(place to waiter.anchor)
        }
    }

    /** The names (with a configured total) whose total on the server this client checked (checkTotalOnce); at most [WARNED_NAMES_MAX]. */
    private val checkedNames: MutableSet<String> = ConcurrentHashMap.newKeySet()

    /**
     * A grant at once does not say the server's total (its reply is only a token, to keep the script
     * short): the first one of each name and configured total asks for it, in the background, so that
     * a handle configured with another total is reported as the others are (R2).
     */
    internal fun checkTotalOnce(semaphore: RedisSemaphoreHandle) {
        if (checkedNames.size >= WARNED_NAMES_MAX || !checkedNames.add("${semaphore.name}:${semaphore.configuredPermits}")) return
        background.launch {
            runCatching { semaphore.totalPermits() }.onSuccess { warnTotal(semaphore.name, semaphore.configuredPermits, it) }
        }
    }

    /** Logs, once per name (for at most [WARNED_NAMES_MAX] names), that the server's total is not the configured one (R2). */
    internal fun warnTotal(name: String, configured: Int, onServer: Int) {
        if (configured == onServer) return
        if (warnedNames.size >= WARNED_NAMES_MAX || !warnedNames.add(name)) return
        System.getLogger(RedisSemaphoreClient::class.java.name).log(
            System.Logger.Level.WARNING,
            "the semaphore \"$name\" has $onServer permits on the server, not the $configured its handle was configured " +
                "with: the server's total stands (it changes only by addPermits, reducePermits or setPermits)",
        )
    }

    // ---- commands -----------------------------------------------------------------------------

    /**
     * Runs [script] on the confirmations connection (it must write, so that the connection's replication
     * offset is at least that of everything before it), then `WAIT`s for [replicas] replicas at most
     * [timeoutMs]; returns the script's answer and how many replicas acknowledged.
     */
    internal suspend fun runAndWait(script: Script, keys: Array<String>, args: Array<String>, replicas: Int, timeoutMs: Long): Pair<List<Any?>, Long> {
        val connection = lettuce("connecting for replicaAcks") { checkNotNull(confirmations) { "replicaAcks on a cluster" }.value.async() }
        @Suppress("UNCHECKED_CAST")
        val answer = run(script, keys, args, connection) as List<Any?>
        return answer to lettuce("WAIT $replicas $timeoutMs") { connection.waitForReplication(replicas, timeoutMs).await() }
    }

    /**
     * Runs [script] (by its SHA; loading it again if the server lost its script cache, e.g. after a
     * restart) on the semaphore whose keys are [keys], and returns its reply (an array or an integer, head.lua). The
     * library's own errors in the reply become its exceptions, Lettuce's as [lettuce] maps them.
     */
    internal suspend fun run(
        script: Script,
        keys: Array<String>,
        args: Array<String>,
        on: RedisScriptingAsyncCommands<String, String> = scripting,
    ): Any? = lettuce("a script on ${keys[0]}") {
        try {
            val reply = try {
                on.evalsha<Any?>(script.sha, ScriptOutputType.OBJECT, keys, *args).await()
            } catch (e: RedisNoScriptException) {
                on.eval<Any?>(script.text, ScriptOutputType.OBJECT, keys, *args).await()
            }
            // Lettuce's OBJECT output hands an integer reply over as a list of that one integer.
            if (script.integerReplies && reply is List<*> && reply.size == 1 && reply[0] is Long) reply[0] else reply
        } catch (e: RedisCommandExecutionException) {
            val message = e.message ?: throw e
            when {
                message.startsWith("PERMITS ") -> throw IllegalArgumentException(message.removePrefix("PERMITS "))
                message.startsWith("IN_USE ") -> throw IllegalStateException(
                    "the semaphore ${keys[0].substringAfter('{').substringBeforeLast('}')} is in use: ${message.removePrefix("IN_USE ")}",
                )
                message.startsWith("MOVED ") || message.startsWith("ASK ") -> throw WrongClusterNodeException(
                    "the server $servers is a Redis Cluster node that does not serve ${keys[0]} ($message): " +
                        "connect with RedisSemaphoreClient.connectCluster",
                    e,
                )
                else -> throw e
            }
        }
    }

    /**
     * Runs [call] (Lettuce commands, awaited), turning Lettuce's failures into this library's: the
     * server unreachable or unable to serve now into [RedisUnavailableException], any other error
     * reply into [RedisSemaphoreException]; [what] names the command in the message. On a closed
     * client, throws SemaphoreClosedException without calling.
     */
    private inline fun <T> lettuce(what: String, call: () -> T): T {
        if (closed) throw closedException()
        try {
            return call()
        } catch (e: RedisException) {
            throw translate(e, what)
        } catch (e: java.io.IOException) { // Lettuce fails a command with the socket's exception when a reply is cut by a reset
            throw translate(e, what)
        } catch (e: io.netty.channel.ChannelException) {
            throw translate(e, what)
        }
    }

    private fun translate(e: Exception, what: String): RuntimeException {
        if (closed) return closedException(e)
        if (e !is RedisCommandExecutionException) { // connection failures, resets, command timeouts, "Connection closed"
            return RedisUnavailableException("the Redis server $servers could not be reached ($what): ${e.message}", e)
        }
        val message = e.message.orEmpty()
        return if (UNAVAILABLE_REPLIES.any { message.startsWith(it) }) {
            RedisUnavailableException("the Redis server $servers cannot serve now ($what): $message", e)
        } else {
            RedisSemaphoreException("the Redis server $servers refused $what: $message", e)
        }
    }

    override fun toString(): String =
        "RedisSemaphoreClient(id=$clientId, name=$clientName, servers=$servers, waiting=${waiting.size}, leases=${kept.size}, " +
            "lines=${synchronized(lines) { lines.size }})"

    /** The sizes of the client's state, for tests: requests waiting, leases kept, lines (subscriptions). */
    internal fun stateSizes(): Triple<Int, Int, Int> = Triple(waiting.size, kept.size, synchronized(lines) { lines.size })

    public companion object {
        /** The error replies that mean "not now" rather than "no": the server is loading, busy, or between masters. */
        private val UNAVAILABLE_REPLIES = listOf("LOADING ", "BUSY ", "CLUSTERDOWN ", "TRYAGAIN ", "MASTERDOWN ", "READONLY ")

        /** The most background withdrawals (T2) a client runs at once. */
        private const val MAX_WITHDRAWALS = 10_000

        private const val WARNED_NAMES_MAX = 1000

        /** The module's log: listeners' failures. */
        private val LOG: System.Logger = System.getLogger("dev.semaphore.redis")

        /** How long a line stays subscribed after its last waiter left. */
        private val LINGER = 5.seconds

        /**
         * Connects to the Redis server at [redisUri], e.g. `redis://127.0.0.1:6379`. The Lettuce client made
         * here (closed with the returned one) is set up for leases (C1 in docs/redis-protocol.md): a call that
         * has no timeout of its own waits for the server at most 10 s, or what `?timeout=5s` says; TCP keepalive
         * is on; and a dropped connection is tried again after 10 ms, then at doubling delays up to at most 1 s
         * and a quarter of what the leases of its semaphores allow.
         * `?clientName=billing-1` names the connections (`CLIENT SETNAME`) and the client ([clientName]).
         * @throws IllegalArgumentException if [redisUri] is not a Redis URI, or its client name is not
         *   1 to 64 characters from `!` to `~`.
         * @throws RedisUnavailableException if the server cannot be reached (Lettuce's exception is its cause).
         */
        @JvmStatic
        public fun connect(redisUri: String): RedisSemaphoreClient {
            val uri = withDefaultTimeout(RedisURI.create(redisUri), redisUri)
            uri.clientName?.let { RequestIds.checkName(it) }
            val delay = LeasePacedDelay()
            val resources = pacedResources(delay)
            val redis = RedisClient.create(resources, uri)
            redis.options = standaloneOptions()
            return standalone(redis, "${uri.host}:${uri.port}", delay::admit) {
                redis.shutdown()
                resources.shutdown()
            }
        }

        /**
         * Connects through [redisClient], a Lettuce client the application already has (with its TLS,
         * authentication, resources and timeouts): opens two connections of its own (three with
         * replicaAcks), which [close] closes. [redisClient] stays the application's: close it after this.
         * The client's name ([clientName]) is that of the connections it makes (its URI's `clientName`).
         *
         * Its settings stand, with two checks (C1 in docs/redis-protocol.md): it must reconnect by itself
         * (auto-reconnect, Lettuce's default), and its reconnect delay must stay short enough for the leases of
         * each semaphore made on it ([semaphore] and [lock] refuse a configuration it does not fit: Lettuce's
         * default delay grows to 30 s; the message says what to build the client with). Its command timeout
         * (Lettuce's default: 60 s) bounds the calls that have no timeout of their own; timed calls, renewals and
         * `withPermit`'s release keep their own bounds. Lettuce's other options do not affect the guarantees
         * (a command that fails is withdrawn on the server, R8). TCP keepalive is the application's to turn on
         * (`SocketOptions.KeepAliveOptions`): without it a connection to a server that vanished is found only
         * when a command times out.
         * @throws IllegalArgumentException if that name is longer than 64 characters, or [redisClient] does not
         *   reconnect by itself.
         * @throws RedisUnavailableException if the server cannot be reached (Lettuce's exception is its cause).
         */
        @JvmStatic
        public fun connect(redisClient: RedisClient): RedisSemaphoreClient {
            val admit = checkApplicationClient(redisClient)
            return standalone(redisClient, "the server of $redisClient", admit) {} // the application's to close
        }

        /** A client on [redis]; [own] closes what was made for it alone (the Lettuce client and its resources), if anything. */
        private fun standalone(redis: RedisClient, servers: String, admit: (RedisSemaphoreConfig) -> Unit, own: () -> Unit): RedisSemaphoreClient {
            val opened = mutableListOf<StatefulConnection<*, *>>()
            val confirmations = lazy { redis.connect().also { synchronized(opened) { opened += it } } }
            val shutdown = {
                if (confirmations.isInitialized()) confirmations.value.close()
                own()
            }
            return connecting(servers, shutdown) {
                val commands = redis.connect()
                val (name, pubSub) = try {
                    clientName(runCatching { commands.sync().clientGetname() }.getOrNull()) to redis.connectPubSub()
                } catch (e: Throwable) {
                    commands.close()
                    throw e
                }
                RedisSemaphoreClient(servers, name, commands, commands.async(), pubSub, sharded = false, confirmations, shutdown, admit)
            }
        }

        /** Runs [connect]; if it fails, [shutdown]s and throws, translating Lettuce's failures. */
        private fun connecting(servers: String, shutdown: () -> Unit, connect: () -> RedisSemaphoreClient): RedisSemaphoreClient =
            try {
                connect()
            } catch (e: Throwable) {
                runCatching(shutdown).exceptionOrNull()?.let { e.addSuppressed(it) }
                if (e !is RedisException && e !is java.io.IOException && e !is io.netty.channel.ChannelException) throw e
                throw RedisUnavailableException("cannot connect to the Redis server $servers: ${e.message}", e)
            }

        /**
         * Connects to the Redis Cluster that [redisUris] (some of its nodes, e.g. `redis://10.0.0.1:7000`)
         * belong to. Each semaphore's keys are in one hash slot, so each operation is one script on the
         * node that serves it. On Redis 7 and later, grants are published with sharded pub/sub (`SPUBLISH`),
         * which reaches only the nodes of that slot's shard; on older servers with `PUBLISH`, which the
         * cluster delivers to every node. [RedisSemaphoreConfig.replicaAcks] is not supported here.
         * The URIs' `?clientName=` names the connections and the client, and the Lettuce client made here is
         * set up as in [connect] (its timeout: the first URI's `?timeout=`, else 10 s).
         * @throws IllegalArgumentException if no URI is given, one is not a Redis URI, or its client name
         *   is not 1 to 64 characters from `!` to `~`.
         * @throws RedisUnavailableException if the cluster cannot be reached (Lettuce's exception is its cause).
         */
        @JvmStatic
        public fun connectCluster(vararg redisUris: String): RedisSemaphoreClient {
            require(redisUris.isNotEmpty()) { "at least one node's URI is needed, was none" }
            val uris = redisUris.map { withDefaultTimeout(RedisURI.create(it), it) }
            for (uri in uris) uri.clientName?.let { RequestIds.checkName(it) }
            val delay = LeasePacedDelay()
            val resources = pacedResources(delay)
            val cluster = RedisClusterClient.create(resources, uris)
            cluster.setOptions(clusterOptions())
            val servers = uris.joinToString(",", "cluster[", "]") { "${it.host}:${it.port}" }
            return cluster(cluster, servers, delay::admit) {
                cluster.shutdown()
                resources.shutdown()
            }
        }

        /**
         * Connects through [clusterClient], a Lettuce cluster client the application already has: as
         * [connectCluster], with two connections of its own that [close] closes; [clusterClient] stays
         * the application's. The client's name is that of the connections it makes, as in [connect]. It is
         * checked as in `connect(RedisClient)`.
         * @throws IllegalArgumentException if that name is longer than 64 characters, or [clusterClient] does
         *   not reconnect by itself.
         * @throws RedisUnavailableException if the cluster cannot be reached (Lettuce's exception is its cause).
         */
        @JvmStatic
        public fun connectCluster(clusterClient: RedisClusterClient): RedisSemaphoreClient {
            val admit = checkApplicationClient(clusterClient)
            return cluster(clusterClient, "the cluster of $clusterClient", admit) {} // the application's to close
        }

        /** A client on [cluster]; [own] closes what was made for it alone, as in [standalone]. */
        private fun cluster(cluster: RedisClusterClient, servers: String, admit: (RedisSemaphoreConfig) -> Unit, own: () -> Unit): RedisSemaphoreClient {
            val shutdown = own
            return connecting(servers, shutdown) {
                val commands = cluster.connect()
                val (name, pubSub) = try {
                    val sharded = majorVersion(commands.sync().info("server")) >= 7
                    clientName(runCatching { commands.sync().clientGetname() }.getOrNull()) to (cluster.connectPubSub() to sharded)
                } catch (e: Throwable) {
                    commands.close()
                    throw e
                }
                RedisSemaphoreClient(servers, name, commands, commands.async(), pubSub.first, pubSub.second, null, shutdown, admit)
            }
        }

        /**
         * The client's name: [connectionName] (what `CLIENT GETNAME` answered on its connection: Lettuce
         * sets it from the URI's `clientName`), or by default "pid@host" ([RequestIds.defaultName]).
         * @throws IllegalArgumentException if [connectionName] is not a valid name (RequestIds.checkName).
         */
        private fun clientName(connectionName: String?): String =
            if (connectionName.isNullOrEmpty()) RequestIds.defaultName else RequestIds.checkName(connectionName)

        /** The major version in an `INFO server` reply ("redis_version:7.2.4"); 0 if absent. */
        internal fun majorVersion(info: String): Int =
            Regex("redis_version:(\\d+)").find(info)?.groupValues?.get(1)?.toInt() ?: 0

        private fun checkName(name: String): String {
            require(name.isNotEmpty() && '{' !in name && '}' !in name) {
                "a semaphore name must be non-empty and without '{' or '}' (they delimit the hash slot), was \"$name\""
            }
            return name
        }
    }
}
