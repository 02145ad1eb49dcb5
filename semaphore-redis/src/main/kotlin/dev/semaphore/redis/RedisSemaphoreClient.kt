/*
 * RedisSemaphoreClient: the distributed semaphore and lock on Redis. How it connects is here (and C1, the connections'
 * settings, in RedisConnections.kt); what it sends is RedisEngine.kt's; what the client does with the answers is the
 * shared client's (semaphore-distributed).
 */
@file:OptIn(EngineApi::class)

package dev.semaphore.redis

import dev.semaphore.distributed.DistributedConfig
import dev.semaphore.distributed.DistributedSemaphoreClient
import dev.semaphore.distributed.spi.EngineApi
import dev.semaphore.distributed.spi.RequestIds
import io.lettuce.core.RedisClient
import io.lettuce.core.RedisException
import io.lettuce.core.RedisURI
import io.lettuce.core.api.StatefulConnection
import io.lettuce.core.cluster.RedisClusterClient

/**
 * A [DistributedSemaphoreClient] on one Redis server, or one Redis Cluster: every semaphore and lock made here shares
 * its connections, one for commands (one Lua script per operation; on a cluster, sent to the node of the semaphore's
 * hash slot) and one for pub/sub (a subscription per semaphore name while anyone of this JVM waits on it). Lettuce
 * reconnects both after a drop and re-subscribes; a command it repeats is harmless (R6 in docs/redis-protocol.md).
 *
 * Switching to PostgreSQL is the line that makes the client: `PostgresSemaphoreClient.connect(...)` gives the same
 * [DistributedSemaphoreClient] (docs/postgres.md lists where the engines differ).
 *
 * Close it when done ([DistributedSemaphoreClient.close]); a Lettuce client passed to [connect] or [connectCluster]
 * stays open (its owner closes it).
 *
 * How long a call waits for the server (C1 in docs/redis-protocol.md): a timed acquire at most its timeout plus 100 ms,
 * whatever the network does; a renewal, and `withPermit`'s release, at most what the lease has left; every other call
 * at most the Lettuce client's command timeout (10 s for a client made by [connect] from a URI that sets none,
 * `?timeout=2s` to change it). A wait in line has no limit but its caller's. Lettuce's failures reach the caller as
 * [RedisUnavailableException] (the server unreachable or unable to serve now), [WrongClusterNodeException], or
 * `DistributedSemaphoreException` (another error reply), with Lettuce's exception as the cause.
 */
public class RedisSemaphoreClient private constructor(
    /** Its engine (the tests run scripts through it). */
    internal val redis: RedisEngine,
) : DistributedSemaphoreClient(redis) {
    public companion object {
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
        private fun standalone(redis: RedisClient, servers: String, admit: (DistributedConfig) -> Unit, own: () -> Unit): RedisSemaphoreClient {
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
                RedisSemaphoreClient(RedisEngine(servers, name, commands, commands.async(), pubSub, sharded = false, confirmations, shutdown, admit))
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
         * cluster delivers to every node. [DistributedConfig.replicaAcks] is not supported here.
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
        private fun cluster(cluster: RedisClusterClient, servers: String, admit: (DistributedConfig) -> Unit, own: () -> Unit): RedisSemaphoreClient {
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
                RedisSemaphoreClient(RedisEngine(servers, name, commands, commands.async(), pubSub.first, pubSub.second, null, shutdown, admit))
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
    }
}
