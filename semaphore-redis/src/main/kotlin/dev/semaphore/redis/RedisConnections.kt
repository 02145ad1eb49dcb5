/*
 * C1 (docs/redis-protocol.md): how a RedisSemaphoreClient's connections are set up so that a network fault cannot
 * outlast a lease by the client's own doing. A client made from a URI builds its Lettuce client with these settings; a
 * Lettuce client an application passes in is checked against each semaphore's timings instead.
 */
package dev.semaphore.redis

import dev.semaphore.distributed.DistributedConfig
import io.lettuce.core.AbstractRedisClient
import io.lettuce.core.ClientOptions
import io.lettuce.core.RedisURI
import io.lettuce.core.SocketOptions
import io.lettuce.core.cluster.ClusterClientOptions
import io.lettuce.core.resource.ClientResources
import io.lettuce.core.resource.Delay
import io.lettuce.core.resource.ExtendedKeepAliveSupport
import io.lettuce.core.resource.DefaultClientResources
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.toJavaDuration
import kotlin.time.toKotlinDuration

/**
 * The reconnect delay of a client made from a URI: 10 ms after a drop, doubling with every failed attempt, up to a cap
 * that follows the timings of the semaphores made on the client. The cap is 1 s, lowered by every handle to a quarter
 * of what its leases have left when a renewal is due (`leaseTime - renewInterval`) and of what its queued requests have
 * left when a heartbeat is due (`waiterTimeToLive - heartbeatInterval`), so that once a fault heals the connection is
 * back long before those run out. (Lettuce's own default grows to 30 s, as long as the default lease.)
 */
internal class LeasePacedDelay : Delay() {
    @Volatile
    var cap: Duration = 1.seconds
        private set

    /**
     * Lowers the cap for a handle configured with [config] (never raises it: the state is one value). Handles are made
     * per call, so the common case, a bound the cap already meets, reads one field and takes no lock.
     */
    fun admit(config: DistributedConfig) {
        val bound = reconnectBound(config).coerceAtLeast(MIN)
        if (bound < cap) synchronized(this) { cap = minOf(cap, bound) }
    }

    override fun createDelay(attempt: Long): java.time.Duration {
        val doubled = if (attempt >= 20) cap else MIN * (1L shl attempt.coerceAtLeast(0).toInt()).toDouble()
        return minOf(doubled, cap).toJavaDuration()
    }

    private companion object {
        val MIN = 10.milliseconds
    }
}

/** The longest reconnect delay that [config]'s leases and queued requests allow (C1): a quarter of their slack. */
internal fun reconnectBound(config: DistributedConfig): Duration =
    minOf(config.leaseTime - config.renewInterval, config.waiterTimeToLive - config.heartbeatInterval) / 4

/** The command timeout of a client made from a URI that sets none (`?timeout=`): Lettuce's default is 60 s. */
internal val DEFAULT_COMMAND_TIMEOUT = 10.seconds

/**
 * The socket options of a client made from a URI: TCP keepalive, so that a peer that vanished is found within about
 * 8 s of silence where the transport can set the probes' timing (Linux and Windows on JDK 11+ with the `jdk.net`
 * module, or Netty's native transports); elsewhere with the system's own timing (on Linux, 2 hours).
 */
private fun socketOptions(): SocketOptions = if (ExtendedKeepAliveSupport.isSupported()) {
    SocketOptions.builder().keepAlive(
        SocketOptions.KeepAliveOptions.builder().enable().idle(5.seconds.toJavaDuration()).interval(1.seconds.toJavaDuration()).count(3).build(),
    ).build()
} else {
    SocketOptions.builder().keepAlive(true).build()
}

/** Lettuce resources for a client made from a URI: its own, with [delay] between reconnect attempts. Shut down with the client. */
internal fun pacedResources(delay: LeasePacedDelay): ClientResources = DefaultClientResources.builder().reconnectDelay(delay).build()

/** [uri] with the command timeout [DEFAULT_COMMAND_TIMEOUT] unless its text ([text]) set one. */
internal fun withDefaultTimeout(uri: RedisURI, text: String): RedisURI {
    if (!Regex("[?&]timeout=").containsMatchIn(text)) uri.timeout = DEFAULT_COMMAND_TIMEOUT.toJavaDuration()
    return uri
}

/** The options of a standalone client made from a URI: auto-reconnect (Lettuce's default) and TCP keepalive. */
internal fun standaloneOptions(): ClientOptions =
    ClientOptions.builder().autoReconnect(true).socketOptions(socketOptions()).build()

/** The same for a cluster client made from URIs. */
internal fun clusterOptions(): ClusterClientOptions =
    ClusterClientOptions.builder().autoReconnect(true).socketOptions(socketOptions()).build()

/**
 * Checks a Lettuce client an application passes in (C1): it must reconnect by itself (without auto-reconnect a
 * dropped connection never comes back, and every lease of the client is lost at its expiry). Returns the check of each
 * handle's timings: the client's reconnect delay, as it grows, must stay within [reconnectBound] of the handle.
 * @throws IllegalArgumentException if auto-reconnect is off, naming the option.
 */
internal fun checkApplicationClient(client: AbstractRedisClient): (DistributedConfig) -> Unit {
    require(client.options.isAutoReconnect) {
        "the Lettuce client $client has autoReconnect off: a connection that drops would never come back, and every lease " +
            "of this RedisSemaphoreClient would be lost at its expiry; build it with ClientOptions.builder().autoReconnect(true)"
    }
    val longest = longestDelay(client.resources)
    return { config ->
        val bound = reconnectBound(config)
        require(longest <= bound) {
            "the Lettuce client's reconnect delay grows to $longest, longer than $bound, a quarter of what this " +
                "semaphore's leases have left when a renewal is due (leaseTime ${config.leaseTime} - renewInterval " +
                "${config.renewInterval}) or its queued requests when a heartbeat is due (waiterTimeToLive " +
                "${config.waiterTimeToLive} - heartbeatInterval ${config.heartbeatInterval}): after a network fault, leases " +
                "could end before the connection is back. Build the client with ClientResources whose reconnectDelay is at " +
                "most $bound (e.g. DefaultClientResources.builder().reconnectDelay(Delay.exponential(Duration.ofMillis(10), " +
                "Duration.ofMillis(${bound.inWholeMilliseconds}), 2, TimeUnit.MILLISECONDS))), or raise those times"
        }
    }
}

/** The longest delay that [resources] put between reconnect attempts, as read from attempts 1 to 64 (several times: some delays are random). */
private fun longestDelay(resources: ClientResources): Duration {
    var longest = Duration.ZERO
    repeat(4) {
        val delay = resources.reconnectDelay()
        for (attempt in 1L..64L) longest = maxOf(longest, delay.createDelay(attempt).toKotlinDuration())
    }
    return longest
}
