package dev.semaphore.redis

import dev.semaphore.SemaphoreClosedException
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.TimeSource

/**
 * A view of one semaphore on the server: it sends one script per operation (the rules are R1..R9 in
 * RedisSemaphore.kt). It keeps nothing in the client but its own waiters' ids (to fail them on
 * [close]); the client keeps the lines (subscriptions, heartbeats) and the leases' renewals.
 */
internal class RedisSemaphoreHandle(
    val client: RedisSemaphoreClient,
    override val name: String,
    override val configuredPermits: Int,
    val config: RedisSemaphoreConfig,
) : RedisSemaphore {
    private val keys = redisKeys(name)
    private val channel = wakeChannel(name)
    private val leaseMs = config.leaseTime.inWholeMilliseconds.toString()
    private val waiterTtlMs = config.waiterTimeToLive.inWholeMilliseconds.toString()
    private val idleMs = config.idleExpiry.inWholeMilliseconds.toString()

    /** The heartbeat timings of this handle's requests: the client sends one heartbeat per line and timing. */
    data class Timing(val waiterTimeToLive: Duration, val heartbeatInterval: Duration)

    val timing = Timing(config.waiterTimeToLive, config.heartbeatInterval)

    /** This handle's callers now waiting in line, by request id (to fail them on [close]); guarded by itself. */
    private val mine = HashSet<String>()

    @Volatile
    private var closed = false

    override suspend fun acquire(permits: Int): Lease = request(permits, null)!!

    override suspend fun tryAcquire(permits: Int): Lease? {
        checkRequest(permits)
        while (true) {
            val sent = TimeSource.Monotonic.markNow()
            val id = client.newRequestId()
            try {
                val reply = script(Script.acquire, id, permits.toString(), leaseMs, waiterTtlMs, "try")
                return grantedAtOnce(id, permits, reply, sent)
            } catch (e: AskAgain) {
                continue
            } catch (e: Throwable) { // cancelled, or not replicated: a grant is handed back (R8)
                handBack(id, permits, e)
                throw e
            }
        }
    }

    /**
     * The lease that an acquire's [reply] grants at once: its token (the fast path), or a place
     * {"G", ...}; null for another place. An "A" reply (an earlier run of the same request was granted,
     * R6, and its token was not kept) is handed back, and [AskAgain] is thrown: the caller asks again
     * with a new id.
     */
    private suspend fun grantedAtOnce(id: String, permits: Int, reply: Any?, sent: kotlin.time.TimeMark): Lease? {
        if (reply is Long) return granted(Lease(name, id, permits, reply, sent + config.leaseTime), null)
        val place = reply as List<*>
        return when (place[0]) {
            "G" -> granted(leaseOf(name, id, list(place), sent), list(place))
            "A" -> {
                script(Script.cancel, id, permits.toString(), "1")
                throw AskAgain
            }
            else -> null
        }
    }

    /** See [grantedAtOnce]. */
    private object AskAgain : Exception(null, null, false, false) {
        private fun readResolve(): Any = AskAgain
    }

    override suspend fun tryAcquire(timeout: Duration, permits: Int): Lease? =
        if (timeout.isPositive()) request(permits, timeout) else tryAcquire(permits)

    /** Joins the line; waits without limit (null [timeout]) or at most [timeout]. */
    private suspend fun request(permits: Int, timeout: Duration?): Lease? {
        checkRequest(permits)
        while (true) {
            try {
                return requestOnce(permits, timeout)
            } catch (e: AskAgain) {
                continue
            }
        }
    }

    private suspend fun requestOnce(permits: Int, timeout: Duration?): Lease? {
        val id = client.newRequestId()
        val sent = TimeSource.Monotonic.markNow()
        val waiter = client.expect(id, sent)
        var inLine = false
        try {
            val reply = script(Script.acquire, id, permits.toString(), leaseMs, waiterTtlMs, "queue")
            grantedAtOnce(id, permits, reply, sent)?.let { return it }
            val place = list(reply as List<*>)
            check(place[0] == "Q") { "unexpected answer to a request for $permits permits of $name: $place" }
            warnIfResized(place.getOrNull(2))
            val queueNumber = place.getOrNull(1) as? Long ?: 0L // none if this is a repeat (R6)
            synchronized(mine) { mine += id }
            val subscribedBefore = client.joinLine(channel, id, sent, this)
            inLine = true
            if (!subscribedBefore) { // a grant published before the subscription may be lost
                try {
                    client.awaitSubscribed(channel)
                    val asked = TimeSource.Monotonic.markNow()
                    settle(waiter, asked, list(script(Script.heartbeat, "-", waiterTtlMs, id))[0] as List<*>)
                } catch (e: CancellationException) {
                    throw e
                } catch (e: Exception) {
                    // The server is out of reach now: the request stays in line, and the heartbeats, which
                    // also say where it is (R7), find its grant once the server answers again.
                }
            }
            if (closed) waiter.grant.completeExceptionally(closedException())
            val grant = if (timeout == null) waiter.grant.await() else withTimeoutOrNull(timeout) { waiter.grant.await() }
            if (grant != null) {
                return granted(placeLease(id, permits, grant.first, grant.second), grant.first)
                    .also { it.queueNumber = queueNumber }
            }
            // Timed out: leave the line, taking a grant that won the race (R8).
            val sentCancel = TimeSource.Monotonic.markNow()
            val answer = withContext(NonCancellable) { list(script(Script.cancel, id, permits.toString(), "0")) }
            if (answer[0] != "G") return null
            return granted(leaseOf(name, id, answer, sentCancel), answer).also { it.queueNumber = queueNumber }
        } catch (e: AskAgain) {
            throw e
        } catch (e: Throwable) {
            handBack(id, permits, e)
            throw e
        } finally {
            client.stopExpecting(id)
            synchronized(mine) { mine -= id }
            if (inLine) client.leaveLine(channel, id, this)
        }
    }

    /** The lease of a grant that reached a waiter (a request for [permits]), or the failure the server gave instead (R3). */
    private fun placeLease(id: String, permits: Int, place: List<Any?>, anchor: kotlin.time.TimeMark): Lease = when (place[0]) {
        "G" -> leaseOf(name, id, place, anchor)
        "E" -> throw IllegalStateException(
            "the request $id for $permits permits of $name can never be granted: the semaphore's total was reduced " +
                (place.getOrNull(2)?.let { "to $it" } ?: "below $permits") + " (${place[1]})",
        )
        else -> throw QueuedRequestLostException("request $id for $name left the line: ${describeEnd(place)}")
    }

    /**
     * A heartbeat's answer [place] for a waiting request, sent at [sent] (R7): still queued, so a later
     * grant is counted from [sent]; or granted (the server counted its remaining time when the heartbeat
     * ran, after [sent]); or ended.
     */
    private fun settle(waiter: RedisSemaphoreClient.Waiter, sent: kotlin.time.TimeMark, place: List<*>) {
        @Suppress("UNCHECKED_CAST")
        val p = place as List<Any?>
        if (p[0] == "Q") waiter.anchor = sent else waiter.grant.complete(p to sent)
    }

    /** Sends the heartbeat of the queued requests [ids] (of this line and timing) and settles those that moved (R5, R7). */
    suspend fun heartbeat(ids: Array<String>) {
        val sent = TimeSource.Monotonic.markNow()
        val places = try {
            list(script(Script.heartbeat, "-", waiterTtlMs, *ids))
        } catch (e: CancellationException) {
            throw e
        } catch (e: Exception) {
            return // unreachable now; the requests stay in line until waiterTimeToLive
        }
        for ((i, place) in places.withIndex()) {
            settle(client.waiterFor(ids[i]) ?: continue, sent, place as List<*>)
        }
    }

    /**
     * After a request failed with [e] (cancelled, not replicated, or the server unreachable): leaves the
     * line, handing back a grant it may have had (R8). If the server cannot be reached, the request is
     * dropped after waiterTimeToLive, a grant after leaseTime.
     */
    private suspend fun handBack(id: String, permits: Int, e: Throwable) = withContext(NonCancellable) {
        try {
            script(Script.cancel, id, permits.toString(), "1")
        } catch (secondary: Exception) {
            if (secondary !== e) e.addSuppressed(secondary)
        }
    }

    /**
     * [lease], granted by the reply [place], once it may be returned to its caller: confirmed by
     * replicas if config.replicaAcks > 0 (a renewal that restarts its expiry; NotReplicatedException if
     * they did not in time, and the caller hands the grant back), then kept alive by the client (R4).
     */
    private suspend fun granted(lease: Lease, place: List<Any?>?): Lease {
        if (place != null && place.size > 4) warnIfResized(place[4]) else client.checkTotalOnce(this)
        if (config.replicaAcks > 0) {
            try {
                renew(lease)
            } catch (e: NotReplicatedException) {
                throw NotReplicatedException(
                    "the grant of ${lease.permits} permits of $name (${lease.id}) was not acknowledged " +
                        "by ${config.replicaAcks} replicas within ${config.replicaTimeout} (${e.message}); it was handed back",
                    e,
                )
            }
        }
        client.hold(lease, this)
        return lease
    }

    private fun warnIfResized(total: Any?) {
        val onServer = (total as? Long)?.toInt() ?: return
        if (onServer != configuredPermits) client.warnTotal(name, configuredPermits, onServer)
    }

    /** When the client's keeper first looks at [lease]: its first renewal, or (a fixed lease) its expiry. */
    fun firstLook(lease: Lease): TimeSource.Monotonic.ValueTimeMark =
        TimeSource.Monotonic.markNow() + if (config.autoRenew) config.renewInterval else lease.remaining

    /**
     * The keeper's look at a kept lease that is due: renews it ([RedisSemaphoreConfig.autoRenew]), or,
     * for a fixed lease or one whose release was attempted, checks whether its time ran out. If it is
     * lost, says so (Lease.end fails with LeaseLostException, unless a release is under way). Sets when
     * to look next: after renewInterval, sooner while renewals fail (until the lease must have ended).
     */
    suspend fun look(entry: RedisSemaphoreClient.Kept) {
        val lease = entry.lease
        if (lease.end.isCompleted) return
        fun lose(e: LeaseLostException) {
            if (!lease.releasing.get()) lease.lose(e)
        }
        if (!config.autoRenew || entry.watchOnly) {
            if (lease.remaining.isPositive()) {
                entry.dueAt = TimeSource.Monotonic.markNow() + lease.remaining
            } else if (entry.watchOnly) {
                lose(LeaseLostException("$lease expired: its release did not reach the server, and it was no longer renewed"))
            } else {
                lose(LeaseLostException("$lease expired: its fixed lease time (${config.leaseTime}) ran out before it was released"))
            }
            return
        }
        val waitAtMost = maxOf(lease.remaining, 1.milliseconds)
        var failure: Exception? = null
        val attempt = RedisJfr.beginRenewal()
        val answered = try {
            withTimeoutOrNull(waitAtMost) { renew(lease) } != null
        } catch (e: CancellationException) {
            throw e
        } catch (e: LeaseLostException) {
            lose(e) // told to the listeners by the lease's end (RedisSemaphoreClient.hold)
            return
        } catch (e: Exception) { // the server is unreachable: keep trying until the lease must have ended
            failure = e
            false
        }
        if (answered) {
            entry.lastError = null
            entry.dueAt = TimeSource.Monotonic.markNow() + config.renewInterval
            client.renewed(lease, attempt)
            return
        }
        entry.lastError = failure ?: entry.lastError
        if (!lease.remaining.isPositive()) {
            val replicas = if (entry.lastError is NotReplicatedException) " and ${config.replicaAcks} replicas" else ""
            lose(LeaseLostException("$lease expired before a renewal reached the server$replicas", entry.lastError))
        } else {
            entry.dueAt = TimeSource.Monotonic.markNow() + minOf(config.renewInterval, lease.remaining / 4)
            client.renewalFailed(
                lease,
                failure ?: RedisUnavailableException("the renewal of $lease got no answer within $waitAtMost", entry.lastError),
                attempt,
            )
        }
    }

    override suspend fun release(lease: Lease) {
        release(lease, wantToken = false)
    }

    /** [release]; returns the last fencing token granted before the release (the tests' history checker uses it). */
    suspend fun releaseReportingLastToken(lease: Lease): Long = release(lease, wantToken = true)

    private suspend fun release(lease: Lease, wantToken: Boolean): Long {
        checkOwn(lease)
        lease.lostWith?.let { throw LeaseLostException(it.message.orEmpty(), it) }
        check(lease.releasing.compareAndSet(false, true)) { "$lease was already released" }
        client.stopRenewing(lease) // renewals stop now: if the release cannot reach the server, the lease ends at its expiry
        val liveWhenSent = lease.remaining.isPositive()
        val answer = try {
            script(Script.release, lease.id, lease.permits.toString(), if (wantToken) "token" else "-")
        } catch (e: Exception) {
            lease.releasing.set(false) // not settled: the caller may try again
            throw e
        }
        return when {
            answer is Long -> answer.also { lease.released() }
            // R6: the server has no such lease. If it was live when the release was sent, that is this very
            // release, repeated by a reconnect after its first run; otherwise it ended at its expiry.
            liveWhenSent -> -1L.also { lease.released() }
            else -> {
                val lost = LeaseLostException("$lease expired before it was released; its permits already went back")
                lease.lose(lost)
                throw lost
            }
        }
    }

    override suspend fun renew(lease: Lease) {
        checkOwn(lease)
        lease.lostWith?.let { throw LeaseLostException(it.message.orEmpty(), it) }
        if (lease.end.isCompleted) throw LeaseLostException("$lease can no longer be renewed: it was released")
        val sent = TimeSource.Monotonic.markNow()
        val answer = if (config.replicaAcks == 0) {
            list(script(Script.renew, lease.id, lease.permits.toString(), leaseMs, "-"))
        } else {
            val (answer, acks) = client.runAndWait(
                Script.renew, keys, args(lease.id, lease.permits.toString(), leaseMs, "confirm"),
                config.replicaAcks, config.replicaTimeout.inWholeMilliseconds,
            )
            if (answer[0] == "G" && acks < config.replicaAcks) {
                throw NotReplicatedException("$acks of ${config.replicaAcks} replicas acknowledged the renewal in time")
            }
            answer
        }
        if (answer[0] == "G") {
            lease.expiresAt = sent + (answer[3] as Long).milliseconds
        } else {
            throw LeaseLostException("$lease can no longer be renewed: ${describeEnd(answer)}")
        }
    }

    override suspend fun availablePermits(): Int = (state()[0] as Long).toInt()

    override suspend fun queueLength(): Int = (state()[1] as Long).toInt()

    override suspend fun totalPermits(): Int = (state()[2] as Long).toInt()

    private suspend fun state(): List<Any?> = list(script(Script.state, "-"))

    /** One read-only script (inspect.lua): its reply {total, holders, {...}, queued, {...}, held} read into a [RedisSemaphoreInspection]. */
    override suspend fun inspect(limit: Int): RedisSemaphoreInspection {
        checkInspectLimit(limit)
        val reply = list(script(Script.inspect, "-", limit.toString()))
        val total = (reply[0] as Long).toInt()
        val holders = (reply[2] as List<*>).chunked(4).map { (id, permits, token, remainingMs) ->
            val (clientId, clientName) = RequestIds.clientOf(id as String)
            RedisSemaphoreInspection.Holder(
                id, clientId, clientName, (permits as Long).toInt(), token as Long, (remainingMs as Long).milliseconds,
                clientId == client.clientId,
            )
        }
        val line = (reply[4] as List<*>).chunked(3).mapIndexed { i, (id, permits, waitedMs) ->
            val (clientId, clientName) = RequestIds.clientOf(id as String)
            RedisSemaphoreInspection.QueuedRequest(
                id, clientId, clientName, (permits as Long).toInt(), i + 1, (waitedMs as Long).milliseconds,
                clientId == client.clientId,
            )
        }
        return RedisSemaphoreInspection(
            name, total >= 0, maxOf(total, 0), (reply[5] as Long).toInt(), holders, (reply[1] as Long).toInt(), line,
            (reply[3] as Long).toInt(),
        )
    }

    override suspend fun addPermits(permits: Int) {
        require(permits >= 1) { "permits must be at least 1, was $permits" }
        resize("add", permits)
    }

    override suspend fun reducePermits(permits: Int) {
        require(permits >= 1) { "permits must be at least 1, was $permits" }
        resize("reduce", permits)
    }

    override suspend fun setPermits(total: Int) {
        require(total >= 0) { "total must be 0 or more, was $total" }
        resize("set", total)
    }

    /** One resize, under an id of its own so that a repeat of it changes nothing more (R6). */
    private suspend fun resize(mode: String, count: Int) {
        if (client.isClosed) throw client.closedException()
        script(Script.resize, client.newRequestId(), mode, count.toString())
    }

    override suspend fun delete() {
        if (client.isClosed) throw client.closedException()
        script(Script.delete, "-")
    }

    override fun close() {
        closed = true
        val ids = synchronized(mine) { mine.toList() }
        for (id in ids) client.waiterFor(id)?.grant?.completeExceptionally(closedException())
    }

    /** [withPermit]'s body: runs [block] while the client keeps [lease] alive; cancels it if the lease is lost; then releases it. */
    suspend fun <T> withLease(lease: Lease, block: suspend CoroutineScope.(Lease) -> T): T {
        val result = try {
            coroutineScope {
                val watcher = launch { lease.awaitEnd() } // fails this scope, and so cancels block, if the lease is lost
                try {
                    block(lease)
                } finally {
                    watcher.cancel()
                }
            }
        } catch (e: Throwable) {
            if (lease.lostWith == null) { // a lost lease has nothing left to release
                val secondary = withContext(NonCancellable) { releaseWhileItLasts(lease) }
                if (secondary != null && secondary !== e) e.addSuppressed(secondary)
            }
            throw e
        }
        val failure = withContext(NonCancellable) { releaseWhileItLasts(lease) }
        if (failure is LeaseLostException) throw failure // it had expired before the block ended
        return result
    }

    /**
     * Releases [lease], waiting for the server no longer than the lease lasts (the permits come back at
     * its expiry anyway, and Lettuce would wait for its command timeout); returns what went wrong.
     */
    private suspend fun releaseWhileItLasts(lease: Lease): Exception? = try {
        withTimeoutOrNull(maxOf(lease.remaining, 1.milliseconds)) { release(lease) }
        null
    } catch (e: Exception) {
        e
    }

    private fun args(id: String, vararg rest: String): Array<String> =
        arrayOf(id, idleMs, configuredPermits.toString(), client.publishCommand, *rest)

    @Suppress("UNCHECKED_CAST")
    private suspend fun script(script: Script, id: String, vararg rest: String): Any? =
        client.run(script, keys, args(id, *rest))

    /** A reply that is an array (head.lua). */
    private fun list(reply: Any?): List<Any?> = reply as? List<Any?> ?: error("unexpected reply from a script on $name: $reply")

    fun checkRequest(permits: Int) {
        require(permits >= 1) { "permits must be at least 1, was $permits" }
        if (closed) throw closedException()
        if (client.isClosed) throw client.closedException()
    }

    private fun checkOwn(lease: Lease) =
        require(lease.semaphoreName == name) { "$lease belongs to semaphore ${lease.semaphoreName}, not $name" }

    private fun closedException() = SemaphoreClosedException("this handle on $name was closed", null)

    private fun describeEnd(place: List<Any?>): String = when (place[0]) {
        "U" -> "the server has no such request: it ended (a lease past its expiry, a queued request whose heartbeats " +
            "stopped for longer than ${config.waiterTimeToLive}), or the server lost it (restarted without persistence, " +
            "or the semaphore was deleted)"
        "E" -> "the server ended it: ${place[1]}"
        else -> "the server answered $place"
    }

    override fun toString(): String = "RedisSemaphore(name=$name, configuredPermits=$configuredPermits, $config)"
}

/** The largest limit of [RedisSemaphore.inspect]: its reply stays small (about 100 bytes an entry). */
internal const val MAX_INSPECT_LIMIT = 1000

/** @throws IllegalArgumentException if [limit] is not a limit of [RedisSemaphore.inspect], naming it. */
internal fun checkInspectLimit(limit: Int) =
    require(limit in 0..MAX_INSPECT_LIMIT) { "limit must be between 0 and $MAX_INSPECT_LIMIT, was $limit" }

/** The keys of the semaphore [name], in the order the scripts expect them (head.lua): all in one hash slot. */
internal fun redisKeys(name: String): Array<String> = arrayOf("s", "q", "wx", "lx").map { "dsem:{$name}:$it" }.toTypedArray()

/** The pub/sub channel on which the grants of the semaphore [name] are published (in the keys' hash slot). */
internal fun wakeChannel(name: String): String = "dsem:{$name}:wake"
