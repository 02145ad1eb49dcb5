package dev.semaphore.redis

import dev.semaphore.SemaphoreClosedException
import io.lettuce.core.ScriptOutputType
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
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
 * This JVM's side of one semaphore on the server: it sends one script per operation (the rules are
 * R1..R8 in RedisSemaphore.kt), keeps the heartbeat of its queued requests while there are any, and
 * renews the leases of [withPermit] blocks.
 */
internal class RedisSemaphoreHandle(
    val client: RedisSemaphoreClient,
    override val name: String,
    override val totalPermits: Int,
    private val config: RedisSemaphoreConfig,
) : RedisSemaphore, AutoCloseable {
    private val keys = redisKeys(name)
    private val channel = wakeChannel(name)
    private val leaseMs = config.leaseTime.inWholeMilliseconds.toString()
    private val waiterTtlMs = config.waiterTimeToLive.inWholeMilliseconds.toString()

    /** This handle's requests now queued on the server; guarded by `this`. */
    private val queued = LinkedHashSet<String>()
    private var heartbeat: Job? = null

    @Volatile
    private var closed = false

    override suspend fun acquire(permits: Int): Lease = request(permits, null)!!

    override suspend fun tryAcquire(permits: Int): Lease? {
        checkRequest(permits)
        val sent = TimeSource.Monotonic.markNow()
        val id = client.newRequestId()
        return try {
            val reply = script(Script.acquire, id, permits.toString(), leaseMs, waiterTtlMs, "try")
            if (reply.startsWith("G:")) confirmed(parseLease(name, reply.substring(2), sent)) else null
        } catch (e: Throwable) { // cancelled, or not replicated: a grant is handed back (R8)
            handBack(id, e)
            throw e
        }
    }

    override suspend fun tryAcquire(timeout: Duration, permits: Int): Lease? =
        if (timeout.isPositive()) request(permits, timeout) else tryAcquire(permits)

    /** Joins the line; waits without limit (null [timeout]) or at most [timeout]. */
    private suspend fun request(permits: Int, timeout: Duration?): Lease? {
        checkRequest(permits)
        client.subscribe(channel) // before the request: its grant may be published before the reply
        val id = client.newRequestId()
        val grant = client.expect(id)
        try {
            val sent = TimeSource.Monotonic.markNow()
            val reply = script(Script.acquire, id, permits.toString(), leaseMs, waiterTtlMs, "queue")
            when {
                reply.startsWith("G:") -> return confirmed(parseLease(name, reply.substring(2), sent))
                !reply.startsWith("Q") -> error("unexpected answer to a request for $permits permits of $name: $reply")
            }
            val queueNumber = reply.substringAfter(':', "0").toLong()
            startHeartbeat(id)
            if (closed) grant.completeExceptionally(closedException())
            val lease = if (timeout == null) grant.await() else withTimeoutOrNull(timeout) { grant.await() }
            if (lease != null) return confirmed(lease.also { it.queueNumber = queueNumber })
            // Timed out: leave the line, taking a grant that won the race (R8).
            val sentCancel = TimeSource.Monotonic.markNow()
            val answer = withContext(NonCancellable) { script(Script.cancel, id, "0") }
            if (!answer.startsWith("G:")) return null
            return confirmed(parseLease(name, answer.substring(2), sentCancel).also { it.queueNumber = queueNumber })
        } catch (e: Throwable) {
            handBack(id, e)
            throw e
        } finally {
            client.stopExpecting(id)
            synchronized(this) { queued -= id }
        }
    }

    /**
     * After a request failed with [e] (cancelled, not replicated, or the server unreachable): leaves the
     * line, handing back a grant it may have had (R8). If the server cannot be reached, the request is
     * dropped after waiterTimeToLive, a grant after leaseTime.
     */
    private suspend fun handBack(id: String, e: Throwable) = withContext(NonCancellable) {
        try {
            script(Script.cancel, id, "1")
        } catch (secondary: Exception) {
            if (secondary !== e) e.addSuppressed(secondary)
        }
    }

    /**
     * [lease] once it may be returned to its caller: at once, or (config.replicaAcks > 0) once that many
     * replicas acknowledged it, by a renewal that restarts its expiry. Throws NotReplicatedException if
     * they did not in time; the caller then hands the grant back.
     */
    private suspend fun confirmed(lease: Lease): Lease {
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
        return lease
    }

    override suspend fun release(lease: Lease) {
        releaseReportingLastToken(lease)
    }

    /** [release]; returns the last fencing token granted before the release (the tests' history checker uses it). */
    suspend fun releaseReportingLastToken(lease: Lease): Long {
        checkOwn(lease)
        check(lease.releasing.compareAndSet(false, true)) { "$lease was already released" }
        val answer = try {
            script(Script.release, lease.id)
        } catch (e: Exception) {
            lease.releasing.set(false) // not settled: the caller may try again
            throw e
        }
        return when {
            answer.startsWith("R:") -> answer.substring(2).toLong()
            answer == "E:released" -> -1L // our own earlier attempt, repeated by a reconnect (R6)
            answer == "E:expired" -> throw LeaseLostException("$lease expired before it was released; its permits already went back")
            else -> throw IllegalStateException("$lease is not held in $name: ${describeEnd(answer)}")
        }
    }

    override suspend fun renew(lease: Lease) {
        checkOwn(lease)
        val sent = TimeSource.Monotonic.markNow()
        val answer = if (config.replicaAcks == 0) {
            script(Script.renew, lease.id, leaseMs)
        } else {
            val args = arrayOf(totalPermits.toString(), channel, lease.id, leaseMs, "confirm")
            val (answer, acks) = client.runAndWait(Script.renew, keys, args, config.replicaAcks, config.replicaTimeout.inWholeMilliseconds)
            if (answer.startsWith("G:") && acks < config.replicaAcks) {
                throw NotReplicatedException("$acks of ${config.replicaAcks} replicas acknowledged the renewal in time")
            }
            answer
        }
        if (answer.startsWith("G:")) {
            lease.expiresAt = parseLease(name, answer.substring(2), sent).expiresAt
        } else {
            throw LeaseLostException("$lease can no longer be renewed: ${describeEnd(answer)}")
        }
    }

    override suspend fun availablePermits(): Int = state()[0].toInt()

    override suspend fun queueLength(): Int = state()[1].toInt()

    private suspend fun state(): List<Long> =
        client.run(Script.state, ScriptOutputType.MULTI, keys, arrayOf(totalPermits.toString(), channel, "-"))

    override fun close() {
        closed = true
        client.forget(this)
        val ids = synchronized(this) { queued.toList() }
        for (id in ids) client.waiterFor(id)?.completeExceptionally(closedException())
    }

    /** [withPermit]'s body: runs [block] while renewing [lease], then releases it. */
    suspend fun <T> withLease(lease: Lease, block: suspend CoroutineScope.(Lease) -> T): T {
        val result = try {
            coroutineScope {
                val renewer = launch { keepRenewed(lease) }
                try {
                    block(lease)
                } finally {
                    renewer.cancel()
                }
            }
        } catch (e: Throwable) {
            if (e !is LeaseLostException) { // a lost lease has nothing left to release
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

    /**
     * Renews [lease] every renewInterval; throws LeaseLostException when it is lost: when the server
     * says so, or when no renewal succeeded before the lease's expiry (as last told by the server,
     * measured here), whether the renewals failed or got no answer (a connection being re-established).
     */
    private suspend fun keepRenewed(lease: Lease) {
        var lastError: Exception? = null
        while (true) {
            delay(if (lastError == null) config.renewInterval else minOf(config.renewInterval, lease.remaining / 4))
            val answered = try {
                withTimeoutOrNull(lease.remaining) { renew(lease) } != null
            } catch (e: CancellationException) {
                throw e
            } catch (e: LeaseLostException) {
                throw e
            } catch (e: Exception) { // the server is unreachable: keep trying until the lease must have ended
                lastError = e
                false
            }
            if (answered) {
                lastError = null
            } else if (!lease.remaining.isPositive()) {
                val replicas = if (lastError is NotReplicatedException) " and ${config.replicaAcks} replicas" else ""
                throw LeaseLostException("$lease expired before a renewal reached the server$replicas", lastError)
            }
        }
    }

    private fun startHeartbeat(id: String) = synchronized(this) {
        queued += id
        if (heartbeat?.isActive != true) heartbeat = client.background.launch { beat() }
    }

    /** Sends the heartbeat of this handle's queued requests while there are any (R5, R7). */
    private suspend fun beat() {
        while (true) {
            delay(config.heartbeatInterval)
            val ids = synchronized(this) {
                if (queued.isEmpty()) {
                    heartbeat = null
                    return
                }
                queued.toTypedArray()
            }
            val sent = TimeSource.Monotonic.markNow()
            val places: List<String> = try {
                client.run(Script.heartbeat, ScriptOutputType.MULTI, keys, arrayOf(totalPermits.toString(), channel, "-", waiterTtlMs, *ids))
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                continue // unreachable now; the request stays in line until waiterTimeToLive
            }
            for ((i, place) in places.withIndex()) {
                val waiter = client.waiterFor(ids[i]) ?: continue
                when {
                    place == "Q" -> {}
                    place.startsWith("G:") -> waiter.complete(parseLease(name, place.substring(2), sent))
                    else -> waiter.completeExceptionally(
                        QueuedRequestLostException("request ${ids[i]} for $name left the line: ${describeEnd(place)}"),
                    )
                }
            }
        }
    }

    private suspend fun script(script: Script, vararg args: String): String =
        client.run(script, ScriptOutputType.VALUE, keys, arrayOf(totalPermits.toString(), channel, *args))

    fun checkRequest(permits: Int) {
        require(permits in 1..totalPermits) {
            "permits must be between 1 and the total ($totalPermits), was $permits"
        }
        if (closed) throw closedException()
    }

    private fun checkOwn(lease: Lease) =
        require(lease.semaphoreName == name) { "$lease belongs to semaphore ${lease.semaphoreName}, not $name" }

    private fun closedException() = SemaphoreClosedException("this handle on $name was closed", null)

    private fun describeEnd(answer: String): String = when (answer) {
        "E:expired" -> "it expired (the server's time passed its expiry before a renewal arrived)"
        "E:released" -> "it was released"
        "E:purged" -> "its heartbeats stopped reaching the server for longer than ${config.waiterTimeToLive}"
        "E:cancelled" -> "it was cancelled"
        "U" -> "the server does not know it (restarted without persistence, or the keys were deleted)"
        else -> "the server answered $answer"
    }

    override fun toString(): String = "RedisSemaphore(name=$name, totalPermits=$totalPermits, $config)"
}

/** The keys of the semaphore [name], in the order the scripts expect them (lib.lua): all in one hash slot. */
internal fun redisKeys(name: String): Array<String> = arrayOf("s", "q", "wx", "lx", "ex").map { "dsem:{$name}:$it" }.toTypedArray()

/** The pub/sub channel on which the grants of the semaphore [name] are published. */
internal fun wakeChannel(name: String): String = "dsem:{$name}:wake"

/** A [RedisLock]: a [RedisSemaphoreHandle] of one permit. */
internal class RedisLockHandle(val semaphore: RedisSemaphoreHandle) : RedisLock, AutoCloseable {
    override val name: String get() = semaphore.name
    override suspend fun lock(): Lease = semaphore.acquire(1)
    override suspend fun tryLock(): Lease? = semaphore.tryAcquire(1)
    override suspend fun tryLock(timeout: Duration): Lease? = semaphore.tryAcquire(timeout, 1)
    override suspend fun unlock(lease: Lease) = semaphore.release(lease)
    override suspend fun renew(lease: Lease) = semaphore.renew(lease)
    override suspend fun isLocked(): Boolean = semaphore.availablePermits() == 0
    override suspend fun queueLength(): Int = semaphore.queueLength()
    override fun close() = semaphore.close()
    override fun toString(): String = "RedisLock(name=$name)"
}
