package dev.semaphore.redis

import dev.semaphore.SemaphoreClosedException
import io.lettuce.core.RedisClient
import io.lettuce.core.RedisCommandExecutionException
import io.lettuce.core.RedisException
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
 * Every call of a handle made here on a closed client throws `SemaphoreClosedException`.
 *
 * Lettuce's failures do not reach the caller as such: a connection failure or a command timeout is a
 * [RedisUnavailableException] (with Lettuce's exception as cause), and so on (RedisSemaphoreExceptions.kt).
 * Lettuce's command timeout (60 s by default; `?timeout=2s` in the URI) bounds how long any call waits
 * for the server, except a wait in line.
 */
public class RedisSemaphoreClient internal constructor(
    /** The server(s), "host:port", for messages (never the URI: it may hold a password). */
    private val servers: String,
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

    @Volatile
    private var closed = false

    init {
        pubSub.addListener(object : RedisPubSubAdapter<String, String>() {
            override fun message(channel: String, message: String) = onGrants(channel, message)
        })
    }

    /**
     * A handle on the semaphore [name] of [permits] permits in total (created on the server by its first
     * use; a later handle configured with another total gets [ConfigurationConflictException]).
     * Nothing is sent to the server here.
     * @throws IllegalArgumentException if [name] is empty or contains `{` or `}`, or [permits] < 1.
     * @throws SemaphoreClosedException if this client is closed.
     */
    public fun semaphore(name: String, permits: Int, config: RedisSemaphoreConfig = RedisSemaphoreConfig()): RedisSemaphore {
        require(permits >= 1) { "permits must be at least 1, was $permits" }
        return register(RedisSemaphoreHandle(this, checkName(name), permits, checkConfig(config)))
    }

    /** A handle on the lock [name]: the semaphore [name] of 1 permit. Throws as [semaphore]. */
    public fun lock(name: String, config: RedisSemaphoreConfig = RedisSemaphoreConfig()): RedisLock =
        RedisLockHandle(register(RedisSemaphoreHandle(this, checkName(name), 1, checkConfig(config))))

    private fun register(handle: RedisSemaphoreHandle): RedisSemaphoreHandle {
        handles += handle
        if (closed) { // closed meanwhile: close() may not have seen it
            handles -= handle
            throw closedException()
        }
        return handle
    }

    private fun closedException(cause: Throwable? = null) =
        SemaphoreClosedException("this RedisSemaphoreClient ($servers) was closed", cause)

    private fun checkConfig(config: RedisSemaphoreConfig): RedisSemaphoreConfig {
        require(config.replicaAcks == 0 || confirmations != null) {
            "replicaAcks (${config.replicaAcks}) is not supported on a Redis Cluster client; use 0"
        }
        return config
    }

    override fun close() {
        closed = true
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
            lettuce("SUBSCRIBE $channel") { pubSub.async().subscribe(channel).await() }
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
        val connection = lettuce("connecting for replicaAcks") { checkNotNull(confirmations) { "replicaAcks on a cluster" }.value.async() }
        val answer = run<String>(script, ScriptOutputType.VALUE, keys, args, connection)
        return answer to lettuce("WAIT $replicas $timeoutMs") { connection.waitForReplication(replicas, timeoutMs).await() }
    }

    /**
     * Runs [script] (by its SHA; loading it again if the server lost its script cache, e.g. after a
     * restart) on the semaphore whose keys are [keys]. The library's own errors in the reply become
     * its exceptions, Lettuce's as [lettuce] maps them.
     */
    internal suspend fun <T> run(
        script: Script,
        output: ScriptOutputType,
        keys: Array<String>,
        args: Array<String>,
        on: RedisScriptingAsyncCommands<String, String> = scripting,
    ): T = lettuce("a script on ${keys[0]}") {
        try {
            try {
                on.evalsha<T>(script.sha, output, keys, *args).await()
            } catch (e: RedisNoScriptException) {
                on.eval<T>(script.text, output, keys, *args).await()
            }
        } catch (e: RedisCommandExecutionException) {
            val message = e.message ?: throw e
            when {
                message.startsWith("PERMITS ") -> throw IllegalArgumentException(message.removePrefix("PERMITS "))
                message.startsWith("TOTAL_MISMATCH ") -> throw totalMismatch(keys[0], message, args[0], e)
                message.startsWith("MOVED ") || message.startsWith("ASK ") -> throw WrongClusterNodeException(
                    "the server $servers is a Redis Cluster node that does not serve ${keys[0]} ($message): " +
                        "connect with RedisSemaphoreClient.connectCluster",
                    e,
                )
                else -> throw e
            }
        }
    }

    /** lib.lua's "TOTAL_MISMATCH semaphore has <n> permits, caller configured <m>" (R2). */
    private fun totalMismatch(key: String, message: String, configured: String, e: Exception): ConfigurationConflictException {
        val name = key.substringAfter('{').substringBeforeLast('}')
        val onServer = Regex("has (\\d+) permits").find(message)?.groupValues?.get(1) ?: "?"
        return ConfigurationConflictException(
            "the semaphore \"$name\" has $onServer permits on the server, but this handle was configured with " +
                "$configured: every handle on a name must be configured with the same total",
            e,
        )
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
        }
    }

    private fun translate(e: RedisException, what: String): RuntimeException {
        if (closed) return closedException(e)
        if (e !is RedisCommandExecutionException) { // connection failures, command timeouts, "Connection closed"
            return RedisUnavailableException("the Redis server $servers could not be reached ($what): ${e.message}", e)
        }
        val message = e.message.orEmpty()
        return if (UNAVAILABLE_REPLIES.any { message.startsWith(it) }) {
            RedisUnavailableException("the Redis server $servers cannot serve now ($what): $message", e)
        } else {
            RedisSemaphoreException("the Redis server $servers refused $what: $message", e)
        }
    }

    override fun toString(): String = "RedisSemaphoreClient(id=$clientId, handles=${handles.size}, waiting=${waiting.size})"

    public companion object {
        /** The error replies that mean "not now" rather than "no": the server is loading, busy, or between masters. */
        private val UNAVAILABLE_REPLIES = listOf("LOADING ", "BUSY ", "CLUSTERDOWN ", "TRYAGAIN ", "MASTERDOWN ")

        /**
         * Connects to the Redis server at [redisUri], e.g. `redis://127.0.0.1:6379`, or
         * `redis://127.0.0.1:6379?timeout=5s` to bound every command's wait for the server at 5 s
         * (Lettuce's default: 60 s).
         * @throws IllegalArgumentException if [redisUri] is not a Redis URI.
         * @throws RedisUnavailableException if the server cannot be reached (Lettuce's exception is its cause).
         */
        @JvmStatic
        public fun connect(redisUri: String): RedisSemaphoreClient {
            val uri = RedisURI.create(redisUri)
            val servers = "${uri.host}:${uri.port}"
            val redis = RedisClient.create(uri)
            return connecting(servers, redis::shutdown) {
                val commands = redis.connect()
                val pubSub = try {
                    redis.connectPubSub()
                } catch (e: Throwable) {
                    commands.close()
                    throw e
                }
                RedisSemaphoreClient(servers, commands, commands.async(), pubSub, lazy { redis.connect() }, redis::shutdown)
            }
        }

        /** Runs [connect]; if it fails, [shutdown]s the Lettuce client and throws, translating Lettuce's failures. */
        private fun connecting(servers: String, shutdown: () -> Unit, connect: () -> RedisSemaphoreClient): RedisSemaphoreClient =
            try {
                connect()
            } catch (e: Throwable) {
                runCatching(shutdown).exceptionOrNull()?.let { e.addSuppressed(it) }
                if (e !is RedisException) throw e
                throw RedisUnavailableException("cannot connect to the Redis server $servers: ${e.message}", e)
            }

        /**
         * Connects to the Redis Cluster that [redisUris] (some of its nodes, e.g. `redis://10.0.0.1:7000`)
         * belong to. Each semaphore's keys are in one hash slot, so each operation is one script on the
         * node that serves it; grants are published with `PUBLISH`, which the cluster delivers to every
         * node. [RedisSemaphoreConfig.replicaAcks] is not supported here.
         * @throws IllegalArgumentException if no URI is given, or one is not a Redis URI.
         * @throws RedisUnavailableException if the cluster cannot be reached (Lettuce's exception is its cause).
         */
        @JvmStatic
        public fun connectCluster(vararg redisUris: String): RedisSemaphoreClient {
            require(redisUris.isNotEmpty()) { "at least one node's URI is needed, was none" }
            val uris = redisUris.map { RedisURI.create(it) }
            val servers = uris.joinToString(",", "cluster[", "]") { "${it.host}:${it.port}" }
            val cluster = RedisClusterClient.create(uris)
            return connecting(servers, cluster::shutdown) {
                val commands = cluster.connect()
                val pubSub = try {
                    cluster.connectPubSub()
                } catch (e: Throwable) {
                    commands.close()
                    throw e
                }
                RedisSemaphoreClient(servers, commands, commands.async(), pubSub, null, cluster::shutdown)
            }
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
