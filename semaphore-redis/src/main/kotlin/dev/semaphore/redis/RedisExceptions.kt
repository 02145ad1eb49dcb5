/*
 * The Redis engine's own failures, subtypes of the shared ones (dev.semaphore.distributed, DistributedExceptions.kt).
 */
@file:OptIn(ExperimentalCoroutinesApi::class)

package dev.semaphore.redis

import dev.semaphore.distributed.DistributedSemaphoreException
import dev.semaphore.distributed.ServerUnavailableException
import kotlinx.coroutines.ExperimentalCoroutinesApi

/**
 * A client made with [RedisSemaphoreClient.connect] (one server) was answered `MOVED` or `ASK`: the
 * server is a Redis Cluster node that does not serve the semaphore's hash slot. Nothing changed. What
 * to do: connect with [RedisSemaphoreClient.connectCluster].
 */
public class WrongClusterNodeException(message: String, cause: Throwable? = null) : DistributedSemaphoreException(message, cause) {
    /** A copy with the same message and cause, for kotlinx.coroutines' stack-trace recovery. */
    override fun createCopy(): WrongClusterNodeException = WrongClusterNodeException(message.orEmpty(), cause)
}

/**
 * The server could not be reached or could not serve now: Lettuce could not connect, a command got
 * no answer within the client's command timeout (10 s for a client made from a URI that sets no
 * `?timeout=`), or the server answered that it cannot serve now (`LOADING`, `BUSY`, `CLUSTERDOWN`,
 * `TRYAGAIN`, `MASTERDOWN`, or `READONLY`: the client still talks to a replica, or to a master that a
 * failover demoted). [cause] is Lettuce's exception.
 *
 * What the failed call left: an `acquire`/`tryAcquire`/`lock` holds nothing (its request is withdrawn,
 * in the background once the server answers again; otherwise the server drops it after
 * `waiterTimeToLive`, and a grant it made meanwhile ends at its expiry). A failed `release` stopped the
 * lease's renewals: its permits come back at its expiry at the latest, the lease then ends as given back
 * (not lost), and you may call `release` again to give them back sooner. A failed `renew` did not extend
 * the lease; the client's own renewals go on through these failures, and the holder gets
 * [dev.semaphore.distributed.LeaseLostException] only once the lease must have ended.
 * What to do: retry later, with a backoff; Lettuce reconnects by itself.
 */
public class RedisUnavailableException(message: String, cause: Throwable? = null) : ServerUnavailableException(message, cause) {
    /** A copy with the same message and cause, for kotlinx.coroutines' stack-trace recovery. */
    override fun createCopy(): RedisUnavailableException = RedisUnavailableException(message.orEmpty(), cause)
}
