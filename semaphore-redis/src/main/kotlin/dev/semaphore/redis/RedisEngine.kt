/*
 * The Redis engine: the connections of one RedisSemaphoreClient, one Lua script per operation (RedisScripts.kt, the
 * rules R1-R9 of docs/redis-protocol.md), the grants received by pub/sub, and the translation of Lettuce's failures.
 * What the client does with the answers is the shared client's (semaphore-distributed, DistributedSemaphoreClient.kt).
 */
@file:OptIn(EngineApi::class)

package dev.semaphore.redis

import dev.semaphore.distributed.DistributedConfig
import dev.semaphore.distributed.DistributedSemaphoreException
import dev.semaphore.distributed.NotReplicatedException
import dev.semaphore.distributed.ServerUnavailableException
import dev.semaphore.distributed.spi.Engine
import dev.semaphore.distributed.spi.EngineApi
import dev.semaphore.distributed.spi.EngineHost
import dev.semaphore.distributed.spi.EngineSemaphore
import dev.semaphore.distributed.spi.Inspected
import dev.semaphore.distributed.spi.Listening
import dev.semaphore.distributed.spi.Place
import dev.semaphore.distributed.spi.Place.Kind
import dev.semaphore.distributed.spi.RequestRef
import dev.semaphore.distributed.spi.State
import io.lettuce.core.RedisCommandExecutionException
import io.lettuce.core.RedisException
import io.lettuce.core.RedisNoScriptException
import io.lettuce.core.ScriptOutputType
import io.lettuce.core.api.StatefulConnection
import io.lettuce.core.api.StatefulRedisConnection
import io.lettuce.core.api.async.RedisScriptingAsyncCommands
import io.lettuce.core.pubsub.RedisPubSubAdapter
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection
import io.netty.util.concurrent.FastThreadLocalThread
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.future.await
import kotlin.time.TimeMark
import kotlin.time.TimeSource

/** See the file's comment. Made by RedisSemaphoreClient's connect functions, which pass in what they opened. */
internal class RedisEngine(
    override val servers: String,
    override val clientName: String,
    private val commands: StatefulConnection<String, String>,
    private val scripting: RedisScriptingAsyncCommands<String, String>,
    private val pubSub: StatefulRedisPubSubConnection<String, String>,
    /** Grants are published with SPUBLISH and received with SSUBSCRIBE (a Redis 7+ cluster), else PUBLISH/SUBSCRIBE. */
    private val sharded: Boolean,
    /**
     * Where grants and renewals are confirmed by replicas (DistributedConfig.replicaAcks): a connection of its own,
     * because `WAIT` holds up the commands behind it on the connection. Opened on first use; null on a cluster, where it
     * is not supported.
     */
    private val confirmations: Lazy<StatefulRedisConnection<String, String>>?,
    /** Closes what the client opened: its connections, and the Lettuce client if it made it. */
    private val shutdown: () -> Unit,
    /** C1: takes each handle's timings (RedisConnections.kt): lowers the reconnect delay, or checks an application's client. */
    private val admitTimings: (DistributedConfig) -> Unit,
) : Engine {
    /** The command that scripts publish grants with (in the settings, head.lua's last ARGV). */
    internal val publishCommand: String = if (sharded) "SPUBLISH" else "PUBLISH"

    private lateinit var host: EngineHost

    override fun start(host: EngineHost) {
        this.host = host
        pubSub.addListener(object : RedisPubSubAdapter<String, String>() {
            override fun message(channel: String, message: String) = onGrants(message)
            override fun smessage(channel: String, message: String) = onGrants(message)
        })
    }

    /** A message of grants (lib.lua's grant()): "id:permits:token:remainingMs" or "id:E:reason:total", comma-separated (R3, R4). */
    private fun onGrants(message: String) {
        for (entry in message.split(',')) {
            val parts = entry.split(':')
            val place = if (parts[1] == "E") {
                Place(Kind.FAILED, reason = parts[2], total = parts.getOrNull(3)?.toIntOrNull() ?: -1)
            } else {
                Place(Kind.GRANTED, permits = parts[1].toInt(), token = parts[2].toLong(), remainingMs = parts[3].toLong())
            }
            host.granted(parts[0], place)
        }
    }

    override fun checkName(name: String): String {
        require(name.isNotEmpty() && '{' !in name && '}' !in name) {
            "a semaphore name must be non-empty and without '{' or '}' (they delimit the hash slot), was \"$name\""
        }
        return name
    }

    override fun admit(config: DistributedConfig) {
        require(config.replicaAcks == 0 || confirmations != null) {
            "replicaAcks (${config.replicaAcks}) is not supported on a Redis Cluster client; use 0"
        }
        admitTimings(config)
    }

    override fun semaphore(name: String, configuredPermits: Int, config: DistributedConfig): EngineSemaphore =
        RedisEngineSemaphore(name, configuredPermits, config)

    override fun unavailable(message: String, cause: Throwable?): ServerUnavailableException = RedisUnavailableException(message, cause)

    /**
     * C1: closes the connections, then what the client opened for itself ([shutdown]). Each step waits for Lettuce's
     * event loops (a connection's close for its channel; the shutdown of a Lettuce client made here for its event loops
     * to end), so on one of those threads it would wait for itself, forever. A caller gets there without asking: a
     * coroutine without a dispatcher (`suspend fun main`, `Dispatchers.Unconfined`) continues on the thread that
     * completed what it waited for, which for a command's answer or a grant's message is one of Lettuce's. So on an event
     * loop (a Netty FastThreadLocalThread, as every thread of Lettuce's default resources is) close() leaves the closing
     * to a thread of its own and returns at once.
     */
    override fun close() {
        if (Thread.currentThread() is FastThreadLocalThread) {
            Thread(::closeConnections, "semaphore-redis-close").apply { isDaemon = true }.start()
        } else {
            closeConnections()
        }
    }

    private fun closeConnections() {
        pubSub.close()
        commands.close()
        if (confirmations?.isInitialized() == true) confirmations.value.close()
        shutdown()
    }

    // ---- wake-ups: a subscription per semaphore while callers of this JVM wait on it ----------------

    /**
     * The subscription to one semaphore's channel. The client makes and stops it under its lines' lock, so SUBSCRIBE
     * and UNSUBSCRIBE calls go out in call order (Lettuce sends them so), and an unsubscription never overtakes the
     * subscription of a newer line.
     */
    override fun listen(name: String): Listening = Subscription(wakeChannel(name)).also { it.retry() }

    private inner class Subscription(val channel: String) : Listening {
        @Volatile
        override var confirmedAt: TimeMark? = null

        /** The last SUBSCRIBE's answer (or failure: then the next retry sends another). */
        @Volatile
        private var attempt: CompletableDeferred<Unit> = CompletableDeferred()

        override val failed: Boolean get() = attempt.isCompleted && confirmedAt == null

        override fun retry() {
            val next = CompletableDeferred<Unit>()
            attempt = next
            val subscription = if (sharded) pubSub.async().ssubscribe(channel) else pubSub.async().subscribe(channel)
            subscription.whenComplete { _, e ->
                if (e == null) {
                    confirmedAt = TimeSource.Monotonic.markNow()
                    next.complete(Unit)
                } else {
                    next.completeExceptionally(e)
                }
            }
        }

        override suspend fun awaitConfirmed() {
            val current = attempt
            lettuce("SUBSCRIBE $channel") { current.await() }
        }

        override fun stop() {
            if (sharded) pubSub.async().sunsubscribe(channel) else pubSub.async().unsubscribe(channel)
        }
    }

    // ---- one semaphore's scripts --------------------------------------------------------------------

    private inner class RedisEngineSemaphore(val name: String, configuredPermits: Int, val config: DistributedConfig) : EngineSemaphore {
        private val keys = redisKeys(name)
        private val leaseMs = config.leaseTime.inWholeMilliseconds
        private val leaseMsText = leaseMs.toString()
        private val waiterTtlMs = config.waiterTimeToLive.inWholeMilliseconds.toString()
        private val idleMs = config.idleExpiry.inWholeMilliseconds.toString()
        private val total = configuredPermits.toString()

        override suspend fun acquire(id: String, permits: Int, queue: Boolean): Place {
            val reply = script(Script.acquire, id, permits.toString(), leaseMsText, waiterTtlMs, if (queue) "queue" else "try")
            // The fast path answers the token alone: a lease of the full lease time from the sending.
            return if (reply is Long) Place(Kind.GRANTED, permits = permits, token = reply, remainingMs = leaseMs) else place(reply)
        }

        override suspend fun heartbeat(requests: List<RequestRef>): List<Place> =
            list(script(Script.heartbeat, "-", waiterTtlMs, *requests.map { it.id }.toTypedArray())).map(::place)

        override suspend fun release(lease: RequestRef, permits: Int, wantToken: Boolean): Long? =
            script(Script.release, lease.id, permits.toString(), if (wantToken) "token" else "-") as? Long

        override suspend fun renew(lease: RequestRef, permits: Int): Place {
            if (config.replicaAcks == 0) return place(script(Script.renew, lease.id, permits.toString(), leaseMsText, "-"))
            val (answer, acks) = runAndWait(
                Script.renew, keys, args(Script.renew, lease.id, permits.toString(), leaseMsText, "confirm"),
                config.replicaAcks, config.replicaTimeout.inWholeMilliseconds,
            )
            val place = place(answer)
            if (place.kind == Kind.GRANTED && acks < config.replicaAcks) {
                throw NotReplicatedException("$acks of ${config.replicaAcks} replicas acknowledged the renewal in time")
            }
            return place
        }

        override suspend fun cancel(request: RequestRef, permits: Int, handBack: Boolean): Place =
            place(script(Script.cancel, request.id, permits.toString(), if (handBack) "1" else "0"))

        override suspend fun resize(resizeId: String, mode: String, count: Int) {
            script(Script.resize, resizeId, mode, count.toString())
        }

        override suspend fun state(): State {
            val reply = list(script(Script.state, "-"))
            return State((reply[0] as Long).toInt(), (reply[1] as Long).toInt(), (reply[2] as Long).toInt())
        }

        override suspend fun delete() {
            script(Script.delete, "-")
        }

        /** inspect.lua's reply {total, holders, {...}, queued, {...}, held}. */
        override suspend fun inspect(limit: Int): Inspected {
            val reply = list(script(Script.inspect, "-", limit.toString()))
            val holders = (reply[2] as List<*>).chunked(4).map { (id, permits, token, remainingMs) ->
                Inspected.Entry(id as String, (permits as Long).toInt(), token as Long, remainingMs as Long)
            }
            val line = (reply[4] as List<*>).chunked(3).map { (id, permits, waitedMs) ->
                Inspected.Entry(id as String, (permits as Long).toInt(), 0, waitedMs as Long)
            }
            return Inspected(
                (reply[0] as Long).toInt(), (reply[1] as Long).toInt(), (reply[5] as Long).toInt(), (reply[3] as Long).toInt(),
                holders, line,
            )
        }

        private fun args(script: Script, id: String, vararg rest: String): Array<String> =
            script.argv(id, idleMs, total, publishCommand, *rest)

        private suspend fun script(script: Script, id: String, vararg rest: String): Any? = run(script, keys, args(script, id, *rest))

        /** A reply that is an array (head.lua). */
        @Suppress("UNCHECKED_CAST")
        private fun list(reply: Any?): List<Any?> = reply as? List<Any?> ?: error("unexpected reply from a script on $name: $reply")

        /**
         * A place reply (lib.lua's where(), and the acquire's): {"G", permits, token, remainingMs[, total]},
         * {"Q"[, number, total]}, {"B", total}, {"E", reason[, total]}, {"A"} or {"U"}.
         */
        private fun place(reply: Any?): Place {
            val p = list(reply)
            fun int(i: Int) = (p.getOrNull(i) as? Long)?.toInt() ?: -1
            return when (p[0]) {
                "G" -> Place(Kind.GRANTED, permits = int(1), token = p[2] as Long, remainingMs = p[3] as Long, total = int(4))
                "Q" -> Place(Kind.QUEUED, number = p.getOrNull(1) as? Long ?: 0L, total = int(2))
                "B" -> Place.BUSY
                "E" -> Place(Kind.FAILED, reason = p[1] as String, total = int(2))
                "A" -> Place.AGAIN
                "U" -> Place.UNKNOWN
                else -> error("unexpected answer from a script on $name: $p")
            }
        }
    }

    // ---- commands -----------------------------------------------------------------------------

    /**
     * Runs [script] on the confirmations connection (it must write, so that the connection's replication
     * offset is at least that of everything before it), then `WAIT`s for [replicas] replicas at most
     * [timeoutMs]; returns the script's answer and how many replicas acknowledged.
     */
    private suspend fun runAndWait(script: Script, keys: Array<String>, args: Array<String>, replicas: Int, timeoutMs: Long): Pair<Any?, Long> {
        val connection = lettuce("connecting for replicaAcks") { checkNotNull(confirmations) { "replicaAcks on a cluster" }.value.async() }
        val answer = run(script, keys, args, connection)
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
     * reply into [DistributedSemaphoreException]; [what] names the command in the message.
     */
    private inline fun <T> lettuce(what: String, call: () -> T): T {
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
        if (e !is RedisCommandExecutionException) { // connection failures, resets, command timeouts, "Connection closed"
            return RedisUnavailableException("the Redis server $servers could not be reached ($what): ${e.message}", e)
        }
        val message = e.message.orEmpty()
        return if (UNAVAILABLE_REPLIES.any { message.startsWith(it) }) {
            RedisUnavailableException("the Redis server $servers cannot serve now ($what): $message", e)
        } else {
            DistributedSemaphoreException("the Redis server $servers refused $what: $message", e)
        }
    }

    private companion object {
        /** The error replies that mean "not now" rather than "no": the server is loading, busy, or between masters. */
        val UNAVAILABLE_REPLIES = listOf("LOADING ", "BUSY ", "CLUSTERDOWN ", "TRYAGAIN ", "MASTERDOWN ", "READONLY ")
    }
}

/** The keys of the semaphore [name], in the order the scripts expect them (head.lua): all in one hash slot. */
internal fun redisKeys(name: String): Array<String> = arrayOf("s", "q", "wx", "lx").map { "dsem:{$name}:$it" }.toTypedArray()

/** The pub/sub channel on which the grants of the semaphore [name] are published (in the keys' hash slot). */
internal fun wakeChannel(name: String): String = "dsem:{$name}:wake"
