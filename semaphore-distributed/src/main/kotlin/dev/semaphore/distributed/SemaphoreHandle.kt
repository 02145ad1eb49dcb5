@file:OptIn(EngineApi::class)

package dev.semaphore.distributed

import dev.semaphore.SemaphoreClosedException
import dev.semaphore.distributed.spi.EngineApi
import dev.semaphore.distributed.spi.EngineSemaphore
import dev.semaphore.distributed.spi.Place
import dev.semaphore.distributed.spi.Place.Kind
import dev.semaphore.distributed.spi.RequestIds
import dev.semaphore.distributed.spi.RequestRef
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.TimeMark
import kotlin.time.TimeSource

/**
 * A view of one semaphore on the server: it makes one engine call per operation ([ops]; the client's rules are in
 * docs/redis-protocol.md, H1-T2, for every engine). It keeps nothing in the client but its own waiters' ids (to fail
 * them on [close]); the client keeps the lines (wake-ups, heartbeats) and the leases' renewals.
 */
internal class SemaphoreHandle(
    val client: DistributedSemaphoreClient,
    override val name: String,
    override val configuredPermits: Int,
    val config: DistributedConfig,
    /** The engine's calls about this semaphore. */
    private val ops: EngineSemaphore,
) : DistributedSemaphore {
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
                val place = client.call { ops.acquire(id, permits, queue = false) }
                val lease = grantedAtOnce(id, permits, place, sent) ?: return null
                return handOver(ready(lease, place), 0)
            } catch (e: AskAgain) {
                continue
            } catch (e: Throwable) { // cancelled, not replicated, unreachable: a grant is handed back (R8)
                withdrawAfter(e, RequestRef(id), permits)
                throw e
            }
        }
    }

    /**
     * The lease that an acquire's answer [place] grants at once, or null for another place. An AGAIN answer (an earlier
     * run of the same request was granted, R6, and its token was not kept) is handed back, and [AskAgain] is thrown: the
     * caller asks again with a new id.
     */
    private suspend fun grantedAtOnce(id: String, permits: Int, place: Place, sent: TimeMark): Lease? = when (place.kind) {
        Kind.GRANTED -> leaseOf(id, place, sent)
        Kind.AGAIN -> {
            client.call { ops.cancel(RequestRef(id, place.slot), permits, handBack = true) }
            throw AskAgain
        }
        else -> null
    }

    /** A grant's lease from its place, its expiry counted from [anchor]. */
    private fun leaseOf(id: String, place: Place, anchor: TimeMark): Lease =
        Lease(name, id, place.permits, place.token, anchor + place.remainingMs.milliseconds).also { it.slot = place.slot }

    /** See [grantedAtOnce]. */
    private object AskAgain : Exception(null, null, false, false) {
        private fun readResolve(): Any = AskAgain
    }

    override suspend fun tryAcquire(timeout: Duration, permits: Int): Lease? =
        if (timeout.isPositive()) request(permits, TimeSource.Monotonic.markNow() + timeout) else tryAcquire(permits)

    /**
     * [tryAcquire] with a timeout that ends at [deadline]: for the Java forms, which start counting when their caller
     * calls, not when the request's coroutine starts (T1).
     */
    suspend fun tryAcquireUntil(deadline: TimeMark, permits: Int): Lease? =
        if (deadline.hasPassedNow()) tryAcquire(permits) else request(permits, deadline)

    /** Joins the line; waits without limit (null [deadline]) or until [deadline] (T1). */
    private suspend fun request(permits: Int, deadline: TimeMark?): Lease? {
        checkRequest(permits)
        while (true) {
            try {
                return requestOnce(permits, deadline)
            } catch (e: AskAgain) {
                continue
            }
        }
    }

    /** One request while it is made: what the server said of it so far. */
    private class Request(val id: String, val permits: Int) {
        /** Where the server keeps it (engines with slots), once it answered. */
        var slot = 0

        val ref: RequestRef get() = RequestRef(id, slot)

        /** Its number in the line, once queued (0 if granted at once, or a repeat, R6). */
        var queueNumber = 0L

        /** Between [DistributedSemaphoreClient.joinLine] and [DistributedSemaphoreClient.leaveLine]. */
        var inLine = false

        /** Its lease once it may be handed over (H1): set before the wait for it can time out. */
        @Volatile var ready: Lease? = null
    }

    /**
     * One request, waiting for its grant until [deadline] (none: without limit). At the deadline the wait stops wherever it
     * is (the acquire script, the subscription, the line, the hand-over's renewal), and the request is withdrawn (T1).
     */
    private suspend fun requestOnce(permits: Int, deadline: TimeMark?): Lease? {
        val request = Request(client.newRequestId(), permits)
        val sent = TimeSource.Monotonic.markNow()
        val waiter = client.expect(request.id, sent)
        try {
            if (deadline == null) {
                waitForGrant(request, waiter, sent)
            } else {
                // The lease goes out through request.ready, never as the block's value: a timeout that fires just as
                // the block returns would drop that value, and with it a granted lease.
                withTimeoutOrNull(-deadline.elapsedNow()) { waitForGrant(request, waiter, sent) }
            }
            val lease = request.ready ?: return withdrawTimedOut(request)
            return handOver(lease, request.queueNumber)
        } catch (e: AskAgain) {
            throw e
        } catch (e: Throwable) {
            withdrawAfter(e, request.ref, permits)
            throw e
        } finally {
            client.stopExpecting(request.id)
            synchronized(mine) {
                mine -= request.id
                slots -= request.id
            }
            if (request.inLine) client.leaveLine(name, request.id, this)
        }
    }

    /** Sends [request], joins the line if it was not granted at once, and waits for its grant; sets [Request.ready]. */
    private suspend fun waitForGrant(request: Request, waiter: DistributedSemaphoreClient.Waiter, sent: TimeMark) {
        val (id, permits) = request.id to request.permits
        val place = client.call { ops.acquire(id, permits, queue = true) }
        request.slot = place.slot
        grantedAtOnce(id, permits, place, sent)?.let {
            request.ready = ready(it, place)
            return
        }
        check(place.kind == Kind.QUEUED) { "unexpected answer to a request for $permits permits of $name: $place" }
        warnIfResized(place.total)
        request.queueNumber = place.number // 0 if this is a repeat (R6)
        synchronized(mine) {
            mine += id
            slots[id] = place.slot
        }
        val subscribedBefore = client.joinLine(name, id, sent, this)
        request.inLine = true
        if (!subscribedBefore) { // a grant published before the subscription may be lost
            try {
                client.awaitSubscribed(name)
                val asked = TimeSource.Monotonic.markNow()
                settle(waiter, asked, client.call { ops.heartbeat(listOf(request.ref)) }[0])
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                // The server is out of reach now: the request stays in line, and the heartbeats, which
                // also say where it is (R7), find its grant once the server answers again.
            }
        }
        if (closed) waiter.grant.completeExceptionally(closedException())
        val (granted, anchor) = waiter.grant.await()
        request.ready = ready(placeLease(id, permits, granted, anchor), granted)
    }

    /** The slots of the requests of this handle now in line, by id (for their heartbeats); guarded by [mine]. */
    private val slots = HashMap<String, Int>()

    /** The lease of a grant that reached a waiter (a request for [permits]), or the failure the server gave instead (R3). */
    private fun placeLease(id: String, permits: Int, place: Place, anchor: TimeMark): Lease = when (place.kind) {
        Kind.GRANTED -> leaseOf(id, place, anchor)
        Kind.FAILED -> throw IllegalStateException(
            "the request $id for $permits permits of $name can never be granted: the semaphore's total was reduced " +
                (if (place.total >= 0) "to ${place.total}" else "below $permits") + " (${place.reason})",
        )
        else -> throw QueuedRequestLostException("request $id for $name left the line: ${describeEnd(place)}")
    }

    /**
     * A heartbeat's answer [place] for a waiting request, sent at [sent] (R7): still queued, so a later
     * grant is counted from [sent]; or granted (the server counted its remaining time when the heartbeat
     * ran, after [sent]); or ended.
     */
    private fun settle(waiter: DistributedSemaphoreClient.Waiter, sent: TimeMark, place: Place) {
        if (place.kind == Kind.QUEUED) waiter.anchor = sent else waiter.grant.complete(place to sent)
    }

    /**
     * Sends the heartbeats of the queued requests [ids] (of this line and timing), at most [HEARTBEAT_IDS] per script
     * (R5), and settles those that moved (R7).
     */
    suspend fun heartbeat(ids: Array<String>) {
        for (chunk in ids.asList().chunked(HEARTBEAT_IDS)) {
            val sent = TimeSource.Monotonic.markNow()
            val refs = synchronized(mine) { chunk.map { RequestRef(it, slots[it] ?: 0) } }
            val places = try {
                client.call { ops.heartbeat(refs) }
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                return // unreachable now; the requests stay in line until waiterTimeToLive
            }
            for ((i, place) in places.withIndex()) {
                settle(client.waiterFor(chunk[i]) ?: continue, sent, place)
            }
        }
    }

    /**
     * H1 (docs/redis-protocol.md): [lease], granted by the reply [place], once it may go to its caller. A lease is handed
     * over only with at least renewInterval left by the client's count: a grant with less (it reached this client late,
     * after a partition or a pause, or its last heartbeat is older than the lease allows) is renewed first, which gives
     * it a fresh count, or finds that it ended on the server: then the request failed, with nothing held
     * ([QueuedRequestLostException]). With replicaAcks, every grant is renewed first: that renewal is the replicas'
     * confirmation ([NotReplicatedException] if they did not confirm in time; the caller hands the grant back). A
     * renewal whose answer itself came late leaves too little again: it is renewed again, at most [HANDOVER_RENEWALS]
     * times, then the request fails with [ServerUnavailableException] (the caller hands the grant back).
     */
    private suspend fun ready(lease: Lease, place: Place): Lease {
        if (place.total >= 0) warnIfResized(place.total) else client.checkTotalOnce(this)
        var renewals = 0
        while ((config.replicaAcks > 0 && renewals == 0) || lease.remaining < config.renewInterval) {
            if (renewals == HANDOVER_RENEWALS) {
                throw client.unavailable(
                    "the grant of ${lease.permits} permits of $name (${lease.id}) could not be handed over with renewInterval " +
                        "(${config.renewInterval}) left: the answers of $renewals renewals came too late (${lease.remaining} left); " +
                        "it was handed back",
                )
            }
            renewals++
            try {
                renewOnce(lease)
            } catch (e: LeaseLostException) {
                throw QueuedRequestLostException(
                    "the grant of ${lease.permits} permits of $name (${lease.id}) reached this client with " +
                        "${lease.remaining} left by its count, and had already ended on the server when it was renewed " +
                        "(this client could not hear the server for longer than the lease time, ${config.leaseTime}); nothing is held",
                    e,
                )
            } catch (e: NotReplicatedException) {
                throw NotReplicatedException(
                    "the grant of ${lease.permits} permits of $name (${lease.id}) was not acknowledged " +
                        "by ${config.replicaAcks} replicas within ${config.replicaTimeout} (${e.message}); it was handed back",
                    e,
                )
            }
        }
        return lease
    }

    /** Gives [lease] (ready, H1) to its caller: from now on the client keeps it (K2). Does not suspend. */
    private fun handOver(lease: Lease, queueNumber: Long): Lease {
        lease.queueNumber = queueNumber
        client.hold(lease, this)
        return lease
    }

    /**
     * T1: a timed request whose time ran out. It is withdrawn, taking a grant that won the race (R8) if that grant may
     * be handed over at once (renewInterval left by the count from the withdrawal's sending, and no replicas to wait
     * for); the caller waits for the answer at most [WITHDRAWAL_WAIT], then gets null while the withdrawal goes on (T2).
     */
    private suspend fun withdrawTimedOut(request: Request): Lease? {
        val sent = TimeSource.Monotonic.markNow()
        val answer = withdraw(request.ref, request.permits, keepGrant = config.replicaAcks == 0) ?: return null
        if (answer.kind != Kind.GRANTED) return null
        val lease = leaseOf(request.id, answer, sent)
        if (lease.remaining < config.renewInterval) {
            client.finishWithdrawal(this, lease.ref, lease.permits, null)
            return null
        }
        return handOver(lease, request.queueNumber)
    }

    /** After a request failed with [e] (cancelled, not replicated, unreachable): withdraws it, handing back a grant (R8, T1). */
    private suspend fun withdrawAfter(e: Throwable, request: RequestRef, permits: Int) {
        try {
            withdraw(request, permits, keepGrant = false)
        } catch (secondary: Exception) {
            if (secondary !== e) e.addSuppressed(secondary)
        }
    }

    /**
     * Sends the withdrawal of the request `id` for [permits] (cancel.lua: out of the line; a grant handed back, or with
     * [keepGrant] kept and answered as a place, granted) and waits for its answer at most [WITHDRAWAL_WAIT], even if
     * the caller is cancelled. Returns the answer, or null if none came in time: then the withdrawal goes on in the
     * background (T2), and a grant it answers later is handed back. Throws what the withdrawal failed with in time.
     */
    private suspend fun withdraw(request: RequestRef, permits: Int, keepGrant: Boolean): Place? = withContext(NonCancellable) {
        val attempt = client.background.async { client.call { ops.cancel(request, permits, handBack = !keepGrant) } }
        withTimeoutOrNull(WITHDRAWAL_WAIT) { attempt.join() }
        if (attempt.isCancelled) {
            null // the client was closed: the server ends the request and any grant by itself
        } else if (attempt.isCompleted) {
            attempt.await() // at once: it completed (throws what it failed with)
        } else {
            client.finishWithdrawal(this@SemaphoreHandle, request, permits, attempt)
            null
        }
    }

    /**
     * T2: what [withdraw] leaves to the background: waits for [attempt] (if any), hands back a grant it answers, and sends
     * the withdrawal (handing back) again every heartbeatInterval while it fails, until the server must have ended the
     * request and any grant by itself (waiterTimeToLive + leaseTime from now).
     */
    suspend fun withdrawLater(request: RequestRef, permits: Int, attempt: Deferred<Place>?) {
        val until = TimeSource.Monotonic.markNow() + config.waiterTimeToLive + config.leaseTime
        var answer: Place? = attempt?.let { runCatching { it.await() }.getOrNull() }
        var sent = if (attempt == null) 0 else 1
        while (true) {
            if (answer != null && answer.kind != Kind.GRANTED) return // gone, or handed back (granted only from a withdrawal that kept it)
            if (answer == null) {
                if (until.hasPassedNow() || client.isClosed) return
                if (sent > 0) delay(config.heartbeatInterval) // the first hand-back goes at once, the next ones paced
            }
            sent++
            answer = runCatching { client.call { ops.cancel(request, permits, handBack = true) } }.getOrNull()
        }
    }

    private fun warnIfResized(onServer: Int) {
        if (onServer >= 0 && onServer != configuredPermits) client.warnTotal(name, configuredPermits, onServer)
    }

    /**
     * K2: when the client's keeper next looks at [lease]. An autoRenew lease: when its count has dropped to
     * `leaseTime - renewInterval`, so renewInterval after its last renewal was sent, and at once for a grant that
     * arrived with less (H1 leaves it at least renewInterval); a fixed lease: at its end.
     */
    fun nextLook(lease: Lease): TimeSource.Monotonic.ValueTimeMark =
        TimeSource.Monotonic.markNow() + if (config.autoRenew) lease.remaining - (config.leaseTime - config.renewInterval) else lease.remaining

    /**
     * The keeper's look at a kept lease that is due (K2, K3): renews it ([DistributedConfig.autoRenew]), or, for a
     * fixed lease or one whose release was tried, checks whether its time ran out. Sets when to look next: [nextLook]
     * after a renewal, sooner while renewals fail, until the count runs out; then the lease is lost (its holder told)
     * and handed back on the server in the background, so that a renewal still on its way cannot revive it.
     */
    suspend fun look(entry: DistributedSemaphoreClient.Kept) {
        val lease = entry.lease
        if (lease.end.isCompleted) return
        if (entry.watchOnly) { // K3: a release was tried; no more renewals
            when {
                lease.remaining.isPositive() -> entry.dueAt = TimeSource.Monotonic.markNow() + lease.remaining
                lease.releasing.get() -> client.forget(entry) // the release under way settles it (L3); never looked at again
                else -> lease.released() // L3: given back at its expiry, after a release that got no answer
            }
            return
        }
        fun lose(e: LeaseLostException) {
            if (!lease.releasing.get()) lease.lose(e)
        }
        if (!config.autoRenew) {
            if (lease.remaining.isPositive()) {
                entry.dueAt = TimeSource.Monotonic.markNow() + lease.remaining
            } else {
                lose(LeaseLostException("$lease expired: its fixed lease time (${config.leaseTime}) ran out before it was released"))
            }
            return
        }
        val waitAtMost = lease.remaining
        var failure: Exception? = null
        val attempt = DistributedJfr.beginRenewal()
        val answered = waitAtMost.isPositive() && try {
            withTimeoutOrNull(waitAtMost) { renewOnce(lease) } != null
        } catch (e: CancellationException) {
            throw e
        } catch (e: LeaseLostException) {
            lose(e) // told to the listeners by the lease's end (DistributedSemaphoreClient.hold)
            return
        } catch (e: Exception) { // the server is unreachable: keep trying until the lease must have ended
            failure = e
            false
        }
        if (answered) {
            entry.lastError = null
            entry.dueAt = nextLook(lease)
            client.renewed(lease, attempt)
            return
        }
        entry.lastError = failure ?: entry.lastError
        if (!lease.remaining.isPositive()) {
            val replicas = if (entry.lastError is NotReplicatedException) " and ${config.replicaAcks} replicas" else ""
            lose(LeaseLostException("$lease expired before a renewal reached the server$replicas", entry.lastError))
            client.finishWithdrawal(this, lease.ref, lease.permits, null) // K2: a late renewal cannot revive it
        } else {
            entry.dueAt = TimeSource.Monotonic.markNow() + minOf(config.renewInterval, lease.remaining / 4)
            client.renewalFailed(
                lease,
                failure ?: client.unavailable("the renewal of $lease got no answer within $waitAtMost", entry.lastError),
                attempt,
            )
        }
    }

    override suspend fun release(lease: Lease) {
        release(lease, wantToken = false)
    }

    /** [release]; returns the last fencing token granted before the release (the tests' history checker uses it). */
    suspend fun releaseReportingLastToken(lease: Lease): Long = release(lease, wantToken = true)

    /** L1-L3 (docs/redis-protocol.md). */
    private suspend fun release(lease: Lease, wantToken: Boolean): Long {
        checkOwn(lease)
        lease.lostWith?.let { throw LeaseLostException(it.message.orEmpty(), it) }
        check(lease.releasing.compareAndSet(false, true)) { "$lease was already released" }
        client.stopRenewing(lease) // L3: renewals stop now; if no release is answered, the lease ends at its expiry
        val liveWhenSent = lease.remaining.isPositive()
        val triedBefore = lease.releaseTried
        lease.releaseTried = true
        val answer = try {
            client.call { ops.release(lease.ref, lease.permits, wantToken) }
        } catch (e: Throwable) { // no answer (or cancelled): not settled, the caller may try again
            lease.releasing.set(false)
            if (!lease.remaining.isPositive()) lease.released() // L3: its time is up; the keeper may no longer look
            throw e
        }
        return when {
            answer != null -> answer.also { lease.released() }
            // L2: the server has no such lease. If it was live when the release was sent, that is this very release,
            // repeated by a reconnect after its first run (R6); after an earlier release that got no answer, that one
            // ran, or the lease ended at its expiry (L3): given back either way. Otherwise it ended at its expiry.
            liveWhenSent || triedBefore -> -1L.also { lease.released() }
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
        renewOnce(lease)
    }

    /** One renewal of [lease] (with replicaAcks, confirmed by the replicas): a fresh count from its sending, or LeaseLostException. */
    private suspend fun renewOnce(lease: Lease) {
        val sent = TimeSource.Monotonic.markNow()
        val answer = client.call { ops.renew(lease.ref, lease.permits) }
        if (answer.kind == Kind.GRANTED) {
            lease.expiresAt = sent + answer.remainingMs.milliseconds
        } else {
            throw LeaseLostException("$lease can no longer be renewed: ${describeEnd(answer)}")
        }
    }

    override suspend fun availablePermits(): Int = state().available

    override suspend fun queueLength(): Int = state().queued

    override suspend fun totalPermits(): Int = state().total

    private suspend fun state() = client.call { ops.state() }

    /** One read-only call: what the engine read, as a [SemaphoreInspection]. */
    override suspend fun inspect(limit: Int): SemaphoreInspection {
        checkInspectLimit(limit)
        val seen = client.call { ops.inspect(limit) }
        val holders = seen.holders.map { entry ->
            val (clientId, clientName) = RequestIds.clientOf(entry.id)
            SemaphoreInspection.Holder(
                entry.id, clientId, clientName, entry.permits, entry.token, entry.millis.milliseconds, clientId == client.clientId,
            )
        }
        val line = seen.queued.mapIndexed { i, entry ->
            val (clientId, clientName) = RequestIds.clientOf(entry.id)
            SemaphoreInspection.QueuedRequest(
                entry.id, clientId, clientName, entry.permits, i + 1, entry.millis.milliseconds, clientId == client.clientId,
            )
        }
        return SemaphoreInspection(
            name, seen.total >= 0, maxOf(seen.total, 0), seen.heldPermits, holders, seen.holderCount, line, seen.queuedCount,
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
        client.call { ops.resize(client.newRequestId(), mode, count) }
    }

    override suspend fun delete() {
        if (client.isClosed) throw client.closedException()
        client.call { ops.delete() }
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
        if (!lease.remaining.isPositive() && lease.lostWith == null) {
            // The count ran out before the block ended, and the keeper had not yet said so: the block may have run past
            // the lease, so it did not run under it. Lost, as the keeper would have found (K2).
            lease.lose(LeaseLostException("$lease ran out (${lease.remaining} left by the client's count) before its block ended"))
            client.finishWithdrawal(this, lease.ref, lease.permits, null)
        }
        lease.lostWith?.let { throw LeaseLostException(it.message.orEmpty(), it) }
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

    fun checkRequest(permits: Int) {
        require(permits >= 1) { "permits must be at least 1, was $permits" }
        if (closed) throw closedException()
        if (client.isClosed) throw client.closedException()
    }

    private fun checkOwn(lease: Lease) =
        require(lease.semaphoreName == name) { "$lease belongs to semaphore ${lease.semaphoreName}, not $name" }

    private fun closedException() = SemaphoreClosedException("this handle on $name was closed", null)

    private fun describeEnd(place: Place): String = when (place.kind) {
        Kind.UNKNOWN -> "the server has no such request: it ended (a lease past its expiry, a queued request whose heartbeats " +
            "stopped for longer than ${config.waiterTimeToLive}), or the server lost it (restarted without persistence, " +
            "or the semaphore was deleted)"
        Kind.FAILED -> "the server ended it: ${place.reason}"
        else -> "the server answered $place"
    }

    override fun toString(): String = "DistributedSemaphore(name=$name, configuredPermits=$configuredPermits, $config)"
}

/**
 * T1 (docs/redis-protocol.md): how long a caller waits for the server's answer to a withdrawal (a timed request whose
 * time ran out, a cancelled or failed one) before it returns and leaves the withdrawal to the background (T2).
 */
internal val WITHDRAWAL_WAIT = 100.milliseconds

/** H1: the most renewals a grant gets before it is handed over, when their answers keep arriving too late. */
internal const val HANDOVER_RENEWALS = 3

/** The most queued requests one heartbeat script asks about (R5: every script does bounded work). */
internal const val HEARTBEAT_IDS = 100

/** The largest limit of [DistributedSemaphore.inspect]: its reply stays small (about 100 bytes an entry). */
internal const val MAX_INSPECT_LIMIT = 1000

/** @throws IllegalArgumentException if [limit] is not a limit of [DistributedSemaphore.inspect], naming it. */
internal fun checkInspectLimit(limit: Int) =
    require(limit in 0..MAX_INSPECT_LIMIT) { "limit must be between 0 and $MAX_INSPECT_LIMIT, was $limit" }
