package dev.semaphore.redis

import io.lettuce.core.RedisClient
import io.lettuce.core.RedisCommandExecutionException
import io.lettuce.core.RedisNoScriptException
import io.lettuce.core.RedisURI
import io.lettuce.core.api.StatefulConnection
import io.lettuce.core.ScriptOutputType
import io.lettuce.core.api.StatefulRedisConnection
import io.lettuce.core.api.async.RedisScriptingAsyncCommands
import io.lettuce.core.cluster.RedisClusterClient
import io.lettuce.core.pubsub.RedisPubSubAdapter
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.future.await
import java.security.MessageDigest
import java.security.SecureRandom
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.TimeSource

/**
 * The connections to one Redis server, or to one Redis Cluster, that every [RedisSemaphore] and
 * [RedisLock] made here shares: one for commands (one Lua script per operation; on a cluster, sent to
 * the node of the semaphore's hash slot) and one for pub/sub (one subscription per semaphore name,
 * shared by every coroutine of this JVM waiting on it). Lettuce reconnects both after a drop and
 * re-subscribes; the scripts are idempotent per request (R6), so a command it repeats is harmless.
 *
 * Close it when done: it closes its handles (their waiters fail and leave the line) and the connections.
 */
public class RedisSemaphoreClient private constructor(
    private val commands: StatefulConnection<String, String>,
    private val scripting: RedisScriptingAsyncCommands<String, String>,
    private val pubSub: StatefulRedisPubSubConnection<String, String>,
    /**
     * Where grants and renewals are confirmed by replicas (RedisSemaphoreConfig.replicaAcks): a connection
     * of its own, because `WAIT` holds up the commands behind it on the connection. Opened on first use;
     * null on a cluster, where it is not supported.
     */
    private val confirmations: Lazy<StatefulRedisConnection<String, String>>?,
    private val shutdown: () -> Unit,
) : AutoCloseable {

    /** Heartbeats and renewals run here; closed with the client. */
    internal val background: CoroutineScope = CoroutineScope(SupervisorJob() + Dispatchers.Default)

    private val clientId: String = ByteArray(8).also { SecureRandom().nextBytes(it) }.joinToString("") { "%02x".format(it) }
    private val requestCounter = AtomicLong()

    /** Every request of this client now waiting for a grant, by id (ids are unique across clients). */
    private val waiting = ConcurrentHashMap<String, CompletableDeferred<Lease>>()
    private val subscriptions = ConcurrentHashMap<String, CompletableDeferred<Unit>>()
    private val handles = ConcurrentHashMap.newKeySet<AutoCloseable>()

    init {
        pubSub.addListener(object : RedisPubSubAdapter<String, String>() {
            override fun message(channel: String, message: String) = onGrants(channel, message)
        })
    }

    /**
     * A handle on the semaphore [name] of [permits] permits (created on the server by its first use).
     * @throws IllegalArgumentException if [name] is empty or contains `{` or `}`, or [permits] < 1.
     */
    public fun semaphore(name: String, permits: Int, config: RedisSemaphoreConfig = RedisSemaphoreConfig()): RedisSemaphore {
        require(permits >= 1) { "permits must be at least 1, was $permits" }
        return RedisSemaphoreHandle(this, checkName(name), permits, checkConfig(config)).also { handles += it }
    }

    /** A handle on the lock [name]: the semaphore [name] of 1 permit. */
    public fun lock(name: String, config: RedisSemaphoreConfig = RedisSemaphoreConfig()): RedisLock =
        RedisLockHandle(RedisSemaphoreHandle(this, checkName(name), 1, checkConfig(config)).also { handles += it })

    private fun checkConfig(config: RedisSemaphoreConfig): RedisSemaphoreConfig {
        require(config.replicaAcks == 0 || confirmations != null) {
            "replicaAcks (${config.replicaAcks}) is not supported on a Redis Cluster client; use 0"
        }
        return config
    }

    override fun close() {
        handles.forEach { it.close() }
        background.cancel()
        pubSub.close()
        commands.close()
        if (confirmations?.isInitialized() == true) confirmations.value.close()
        shutdown()
    }

    internal fun forget(handle: AutoCloseable) {
        handles -= handle
    }

    internal fun newRequestId(): String = "$clientId-${requestCounter.incrementAndGet()}"

    /** Registers [id] before its request is sent, so that a grant published before the reply is not missed. */
    internal fun expect(id: String): CompletableDeferred<Lease> = CompletableDeferred<Lease>().also { waiting[id] = it }

    internal fun stopExpecting(id: String) {
        waiting.remove(id)
    }

    internal fun waiterFor(id: String): CompletableDeferred<Lease>? = waiting[id]

    internal suspend fun subscribe(channel: String) {
        subscriptions[channel]?.let { return it.await() } // the common case: already subscribed
        val mine = CompletableDeferred<Unit>()
        val existing = subscriptions.putIfAbsent(channel, mine)
        if (existing != null) return existing.await()
        try {
            pubSub.async().subscribe(channel).await()
            mine.complete(Unit)
        } catch (e: Throwable) {
            subscriptions.remove(channel, mine)
            mine.completeExceptionally(e)
            throw e
        }
    }

    /** A message of grants: "id:permits:token:remainingMs", comma-separated (R3, R4). */
    private fun onGrants(channel: String, message: String) {
        val received = TimeSource.Monotonic.markNow()
        val name = channel.substringAfter('{').substringBeforeLast('}')
        for (grant in message.split(',')) {
            val id = grant.substringBefore(':')
            waiting[id]?.complete(parseLease(name, grant, received))
        }
    }

    /**
     * Runs [script] on the confirmations connection (it must write, so that the connection's replication
     * offset is at least that of everything before it), then `WAIT`s for [replicas] replicas at most
     * [timeoutMs]; returns the script's answer and how many replicas acknowledged.
     */
    internal suspend fun runAndWait(script: Script, keys: Array<String>, args: Array<String>, replicas: Int, timeoutMs: Long): Pair<String, Long> {
        val connection = checkNotNull(confirmations) { "replicaAcks on a cluster" }.value.async()
        val answer = run<String>(script, ScriptOutputType.VALUE, keys, args, connection)
        return answer to connection.waitForReplication(replicas, timeoutMs).await()
    }

    /** Runs [script] (by its SHA; loading it again if the server lost its script cache, e.g. after a restart). */
    internal suspend fun <T> run(
        script: Script,
        output: ScriptOutputType,
        keys: Array<String>,
        args: Array<String>,
        on: RedisScriptingAsyncCommands<String, String> = scripting,
    ): T {
        val async = on
        return try {
            try {
                async.evalsha<T>(script.sha, output, keys, *args).await()
            } catch (e: RedisNoScriptException) {
                async.eval<T>(script.text, output, keys, *args).await()
            }
        } catch (e: RedisCommandExecutionException) {
            val message = e.message ?: throw e
            when {
                message.startsWith("PERMITS ") -> throw IllegalArgumentException(message.removePrefix("PERMITS "))
                message.startsWith("TOTAL_MISMATCH ") -> throw IllegalStateException(message.removePrefix("TOTAL_MISMATCH "))
                message.startsWith("MOVED ") -> throw IllegalStateException(
                    "the server is a Redis Cluster node that does not serve ${keys[0]} ($message): " +
                        "connect with RedisSemaphoreClient.connectCluster",
                    e,
                )
                else -> throw e
            }
        }
    }

    override fun toString(): String = "RedisSemaphoreClient(id=$clientId, handles=${handles.size}, waiting=${waiting.size})"

    public companion object {
        /** Connects to the Redis server at [redisUri], e.g. `redis://127.0.0.1:6379`. */
        @JvmStatic
        public fun connect(redisUri: String): RedisSemaphoreClient {
            val redis = RedisClient.create(redisUri)
            val commands = redis.connect()
            return RedisSemaphoreClient(commands, commands.async(), redis.connectPubSub(), lazy { redis.connect() }, redis::shutdown)
        }

        /**
         * Connects to the Redis Cluster that [redisUris] (some of its nodes, e.g. `redis://10.0.0.1:7000`)
         * belong to. Each semaphore's keys are in one hash slot, so each operation is one script on the
         * node that serves it; grants are published with `PUBLISH`, which the cluster delivers to every
         * node. [RedisSemaphoreConfig.replicaAcks] is not supported here.
         */
        @JvmStatic
        public fun connectCluster(vararg redisUris: String): RedisSemaphoreClient {
            require(redisUris.isNotEmpty()) { "at least one node's URI is needed, was none" }
            val cluster = RedisClusterClient.create(redisUris.map { RedisURI.create(it) })
            val commands = cluster.connect()
            return RedisSemaphoreClient(commands, commands.async(), cluster.connectPubSub(), null, cluster::shutdown)
        }

        private fun checkName(name: String): String {
            require(name.isNotEmpty() && '{' !in name && '}' !in name) {
                "a semaphore name must be non-empty and without '{' or '}' (they delimit the hash slot), was \"$name\""
            }
            return name
        }
    }
}

/**
 * One Lua script: lib.lua, then the operation's own text with line.lua in place of its line
 * "-- [line.lua]" (what comes before that line is the operation's fast path), or at its start.
 */
internal class Script private constructor(operation: String) {
    val text: String = lib + if (LINE_MARK in operation) operation.replace(LINE_MARK, line) else line + operation
    val sha: String = MessageDigest.getInstance("SHA-1").digest(text.toByteArray()).joinToString("") { "%02x".format(it) }

    companion object {
        private const val LINE_MARK = "-- [line.lua]\n"

        private fun resource(name: String): String =
            Script::class.java.getResource(name)?.readText() ?: error("missing script resource $name")

        private val lib = resource("lib.lua")
        private val line = resource("line.lua")

        val acquire = Script(resource("acquire.lua"))
        val heartbeat = Script(resource("heartbeat.lua"))
        val cancel = Script(resource("cancel.lua"))
        val release = Script(resource("release.lua"))
        val renew = Script(resource("renew.lua"))
        val state = Script(resource("state.lua"))
    }
}

/** Parses "id:permits:token:remainingMs" (where() and grant messages, line.lua) into a lease. */
internal fun parseLease(semaphore: String, grant: String, sentOrReceived: kotlin.time.TimeMark): Lease {
    val (id, permits, token, remaining) = grant.split(':')
    return Lease(semaphore, id, permits.toInt(), token.toLong(), sentOrReceived + remaining.toLong().milliseconds)
}
