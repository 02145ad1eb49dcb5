/*
 * The operational failures of a DistributedSemaphore or DistributedLock: what the server, the network or the replicas did,
 * as opposed to what the caller did wrong. They share one base type, DistributedSemaphoreException, which is
 * NOT an IllegalStateException, so that a caller can catch "the server failed me" without catching its own
 * bugs. Misuse keeps the standard types: IllegalArgumentException (a bad count, a name with a brace, a
 * lease of another semaphore), IllegalStateException (a lease released twice), and
 * dev.semaphore.SemaphoreClosedException (an IllegalStateException) for a closed handle or client.
 * docs/redis.md and docs/postgres.md have the same list as a table: exception, when, what to do.
 *
 * Each is a CopyableThrowable whose copy keeps the type, the message and the cause: kotlinx.coroutines'
 * stack-trace recovery (debug mode, or -ea) would otherwise wrap the original as the copy's cause, and
 * `cause` would no longer be, for example, the driver's exception.
 */
@file:OptIn(ExperimentalCoroutinesApi::class)

package dev.semaphore.distributed

import kotlinx.coroutines.CopyableThrowable
import kotlinx.coroutines.ExperimentalCoroutinesApi

/**
 * An operational failure of a distributed semaphore or lock: the server, the network, or the replicas did
 * not do what the call needed. Each cause has its own subtype; this type itself is thrown for any
 * other error reply of the server (for example `OOM`, `NOPERM`), with the driver's exception as [cause].
 * Unchecked; not an [IllegalStateException].
 *
 * What to do depends on the subtype: see each one. Nothing here means the caller misused the API.
 */
public open class DistributedSemaphoreException(message: String, cause: Throwable? = null) :
    RuntimeException(message, cause), CopyableThrowable<DistributedSemaphoreException> {

    /**
     * For kotlinx.coroutines' stack-trace recovery: a copy with the same message and cause; none
     * (no recovery) for a subclass that does not override this, so that a copy never changes the type.
     */
    override fun createCopy(): DistributedSemaphoreException? =
        if (this::class == DistributedSemaphoreException::class) DistributedSemaphoreException(message.orEmpty(), cause) else null
}

/**
 * A lease ended while its holder still held it: it expired (its renewals did not reach the server in
 * time, the holder was paused past its expiry, or a fixed lease's time ran out), or the server lost it
 * (restarted without persistence). Its permits may already be held by others.
 *
 * The holder is told as soon as the client knows: `Lease.awaitEnd()` throws it (Java:
 * `DistributedPermit.ended()` fails with it), `withPermit`/`withLock` cancel their block and throw it, and
 * `release` and `renew` of such a lease throw it. What to do: stop acting on the protected resource as its holder (whatever you did after
 * the expiry may overlap another holder's work: the fencing token is there for that), then acquire
 * again if the work must still be done. There is nothing to release.
 */
public class LeaseLostException(message: String, cause: Throwable? = null) : DistributedSemaphoreException(message, cause) {
    /** A copy with the same message and cause, for kotlinx.coroutines' stack-trace recovery. */
    override fun createCopy(): LeaseLostException = LeaseLostException(message.orEmpty(), cause)
}

/**
 * A queued request was dropped by the server: its heartbeats stopped arriving for longer than
 * [DistributedConfig.waiterTimeToLive] (this client was cut off from the server), or the server
 * lost its data (restarted without persistence, failover). Thrown by a waiting `acquire`/`lock`.
 * Nothing is held. What to do: acquire again (the request goes to the back of the line).
 */
public class QueuedRequestLostException(message: String, cause: Throwable? = null) : DistributedSemaphoreException(message, cause) {
    /** A copy with the same message and cause, for kotlinx.coroutines' stack-trace recovery. */
    override fun createCopy(): QueuedRequestLostException = QueuedRequestLostException(message.orEmpty(), cause)
}

/**
 * A grant (or a renewal) was not acknowledged by [DistributedConfig.replicaAcks] replicas within
 * [DistributedConfig.replicaTimeout]. From `acquire`/`tryAcquire`/`lock`: the grant was handed
 * back, so nothing is held; try again later, or check the replicas. From `renew`: the lease was not
 * extended, but may still be live; renew again before it ends (`withPermit` does so by itself).
 */
public class NotReplicatedException(message: String, cause: Throwable? = null) : DistributedSemaphoreException(message, cause) {
    /** A copy with the same message and cause, for kotlinx.coroutines' stack-trace recovery. */
    override fun createCopy(): NotReplicatedException = NotReplicatedException(message.orEmpty(), cause)
}

/**
 * The server could not be reached or could not serve now: the driver could not connect, a call got no answer in time,
 * or the server answered that it cannot serve now (for example a replica that cannot write, a server starting or
 * shutting down). Each engine throws its own subtype, with the driver's exception as [cause]:
 * `dev.semaphore.redis.RedisUnavailableException`, `dev.semaphore.postgres.PostgresUnavailableException`; catch this
 * type to handle both.
 *
 * What the failed call left: an `acquire`/`tryAcquire`/`lock` holds nothing (its request is withdrawn,
 * in the background once the server answers again; otherwise the server drops it after
 * `waiterTimeToLive`, and a grant it made meanwhile ends at its expiry). A failed `release` stopped the
 * lease's renewals: its permits come back at its expiry at the latest, the lease then ends as given back
 * (not lost), and you may call `release` again to give them back sooner. A failed `renew` did not extend
 * the lease; the client's own renewals go on through these failures, and the holder gets
 * [LeaseLostException] only once the lease must have ended.
 * What to do: retry later, with a backoff; the client reconnects by itself.
 */
public open class ServerUnavailableException(message: String, cause: Throwable? = null) : DistributedSemaphoreException(message, cause) {
    /** A copy with the same type, message and cause, for kotlinx.coroutines' stack-trace recovery (null for a subtype: it makes its own). */
    override fun createCopy(): ServerUnavailableException? =
        if (this::class == ServerUnavailableException::class) ServerUnavailableException(message.orEmpty(), cause) else null
}
