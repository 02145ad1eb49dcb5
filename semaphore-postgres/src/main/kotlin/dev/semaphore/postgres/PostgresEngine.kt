/*
 * The PostgreSQL engine: one statement per operation (PostgresCalls.kt, the functions of schema.sql, the rules P1-P10 of
 * docs/postgres-protocol.md) on a bounded set of connections, the wake-ups on one LISTEN connection
 * (PostgresWakeups.kt), the periodic sweep of idle semaphores, and the translation of the driver's failures. What the
 * client does with the answers is the shared client's (semaphore-distributed, DistributedSemaphoreClient.kt).
 */
@file:OptIn(EngineApi::class)

package dev.semaphore.postgres

import dev.semaphore.distributed.DistributedConfig
import dev.semaphore.distributed.DistributedSemaphoreException
import dev.semaphore.distributed.ServerUnavailableException
import dev.semaphore.distributed.spi.Engine
import dev.semaphore.distributed.spi.EngineApi
import dev.semaphore.distributed.spi.EngineHost
import dev.semaphore.distributed.spi.EngineSemaphore
import dev.semaphore.distributed.spi.Inspected
import dev.semaphore.distributed.spi.Listening
import dev.semaphore.distributed.spi.Place.Kind
import dev.semaphore.distributed.spi.RequestRef
import dev.semaphore.distributed.spi.State
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.sync.Semaphore
import kotlinx.coroutines.sync.withPermit
import java.sql.Connection
import java.sql.SQLException
import java.sql.SQLTimeoutException
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeMark
import kotlin.time.TimeSource
import dev.semaphore.distributed.spi.Place as EnginePlace

/**
 * See the file's comment. [connections] lends a connection for one statement (a pool of its own, or the application's
 * DataSource); [listen] opens the wake-up connection. At most [poolSize] statements run at once: that bounds the
 * connections this client uses for statements, whatever the number of callers.
 */
internal class PostgresEngine(
    override val servers: String,
    override val clientName: String,
    private val schema: PostgresSchema,
    private val connections: ConnectionSource,
    private val listen: () -> Connection,
    private val poolSize: Int,
) : Engine {
    private val calls = PostgresCalls(schema)

    private lateinit var host: EngineHost

    /** The LISTEN connection's thread; started with the engine. */
    internal lateinit var wakeups: PostgresWakeups
        private set

    /** The blocking statements run here: at most [poolSize] at once. */
    @OptIn(kotlinx.coroutines.ExperimentalCoroutinesApi::class)
    private val io = Dispatchers.IO.limitedParallelism(poolSize)
    private val slots = Semaphore(poolSize)

    override fun start(host: EngineHost) {
        this.host = host
        wakeups = PostgresWakeups(listen, schema, host.clientId, ::onMessage)
        host.scope.launch { sweepEvery() }
    }

    /** A notification (P7): "slot:permits:token:remainingMs" for a grant, "slot:E:reason:total" for a failure. */
    private fun onMessage(@Suppress("UNUSED_PARAMETER") semaphore: String, id: String, rest: String) {
        val parts = rest.split(':')
        val place = if (parts[1] == "E") {
            EnginePlace(Kind.FAILED, reason = parts[2], total = parts.getOrNull(3)?.toIntOrNull() ?: -1, slot = parts[0].toInt())
        } else {
            EnginePlace(
                Kind.GRANTED, permits = parts[1].toInt(), token = parts[2].toLong(), remainingMs = parts[3].toLong(),
                slot = parts[0].toInt(),
            )
        }
        host.granted(id, place)
    }

    /** P9: idle semaphores are deleted by whichever client sweeps first (SKIP LOCKED: the others skip them). */
    private suspend fun sweepEvery() {
        while (host.scope.isActive) {
            delay(SWEEP_EVERY)
            runCatching { statement("sweep") { calls.sweep(it, SWEEP_LIMIT) } }
        }
    }

    override fun checkName(name: String): String {
        require(name.isNotEmpty() && name.length <= 200 && name.none { it.isISOControl() }) {
            "a semaphore name must be 1 to 200 characters without control characters, was \"$name\""
        }
        return name
    }

    override fun admit(config: DistributedConfig) {
        require(config.replicaAcks == 0) {
            "replicaAcks (${config.replicaAcks}) is a Redis setting; on PostgreSQL a grant counts once its commit does, so " +
                "configure synchronous replication on the server (synchronous_standby_names, docs/postgres.md#failover) and use 0"
        }
    }

    override fun semaphore(name: String, configuredPermits: Int, config: DistributedConfig): EngineSemaphore =
        PostgresEngineSemaphore(name, configuredPermits, config)

    override fun listen(name: String): Listening = clientListening

    /** The client's one LISTEN serves every semaphore: the lines share it, and stopping one stops nothing. */
    private val clientListening = object : Listening {
        override val confirmedAt: TimeMark? get() = wakeups.listeningSince
        override val failed: Boolean get() = false // the thread retries by itself
        override fun retry() {}
        override suspend fun awaitConfirmed() {
            val deadline = TimeSource.Monotonic.markNow() + LISTEN_WAIT
            while (wakeups.listeningSince == null) {
                if (deadline.hasPassedNow()) {
                    throw PostgresUnavailableException("the wake-up connection to $servers is not listening (retried every 200 ms)")
                }
                delay(20)
            }
        }

        override fun stop() {}
    }

    override fun unavailable(message: String, cause: Throwable?): ServerUnavailableException = PostgresUnavailableException(message, cause)

    override fun close() {
        wakeups.close()
        connections.close()
    }

    private inner class PostgresEngineSemaphore(val name: String, val total: Int, val config: DistributedConfig) : EngineSemaphore {
        private val leaseMs = config.leaseTime.inWholeMilliseconds
        private val ttlMs = config.waiterTimeToLive.inWholeMilliseconds
        private val idleMs = config.idleExpiry.inWholeMilliseconds

        override suspend fun acquire(id: String, permits: Int, queue: Boolean): EnginePlace =
            statement("acquire", inFlightId = id) { calls.acquire(it, name, total, idleMs, id, permits, leaseMs, if (queue) ttlMs else null) }.engine()

        override suspend fun heartbeat(requests: List<RequestRef>): List<EnginePlace> {
            val places = statement("heartbeat") { c -> calls.heartbeat(c, name, idleMs, ttlMs, requests) }
            return requests.map { places[it.id]?.engine() ?: EnginePlace.UNKNOWN }
        }

        override suspend fun release(lease: RequestRef, permits: Int, wantToken: Boolean): Long? =
            statement("release") { calls.release(it, name, lease, permits) }

        override suspend fun renew(lease: RequestRef, permits: Int): EnginePlace =
            statement("renew") { calls.renew(it, name, idleMs, lease, permits, leaseMs) }.engine()

        override suspend fun cancel(request: RequestRef, permits: Int, handBack: Boolean): EnginePlace {
            // P8: a withdrawal sent while the request's acquire still runs on another connection (its caller gave up,
            // and JDBC finishes the statement in the background) runs after it, or it would find nothing to withdraw
            // and the request would join the line after it, to stay until its time to live.
            acquiring[request.id]?.join()
            return statement("cancel") { calls.cancel(it, name, idleMs, request, permits, handBack) }.engine()
        }

        override suspend fun resize(resizeId: String, mode: String, count: Int) {
            statement("resize") { calls.resize(it, name, total, idleMs, resizeId, mode, count) }
        }

        override suspend fun state(): State {
            val s = statement("state") { calls.state(it, name, total, idleMs) }
            return State(s.available, s.queued, s.total)
        }

        override suspend fun delete() {
            statement("delete") { calls.delete(it, name) }
        }

        override suspend fun inspect(limit: Int): Inspected {
            val seen = statement("inspect") { calls.inspect(it, name, limit) } ?: return Inspected(-1, 0, 0, 0, emptyList(), emptyList())
            fun entries(list: List<InspectedRequest>) = list.map { Inspected.Entry(it.id, it.permits, it.token, it.ms) }
            return Inspected(
                seen.total, seen.holderCount.toInt(), seen.heldPermits.toInt(), seen.queuedCount.toInt(),
                entries(seen.holders), entries(seen.queued),
            )
        }
    }

    /** A place of schema.sql as the shared client reads it. */
    private fun Place.engine(): EnginePlace = when (kind) {
        'G' -> EnginePlace(Kind.GRANTED, permits = permits, token = token, remainingMs = remainingMs, total = total, slot = slot)
        'Q' -> EnginePlace(Kind.QUEUED, number = number, total = total, slot = slot)
        'B' -> EnginePlace.BUSY
        'E' -> EnginePlace(Kind.FAILED, reason = "too large for the reduced total", total = total, slot = slot)
        else -> EnginePlace.UNKNOWN
    }

    /**
     * Runs [body] on a connection of [connections], on [io], and returns what it returned; [what] names it in messages.
     * The caller may stop waiting (cancelled, or its timeout ran out) at any moment: a statement that has not started
     * then never starts, and one that has finishes in the background and gives its connection back (JDBC cannot stop
     * a statement in flight); its outcome is the caller's to settle, as after any unanswered call (T1, T2).
     */
    private suspend fun <T> statement(what: String, inFlightId: String? = null, body: (Connection) -> T): T {
        val state = AtomicInteger(NOT_STARTED)
        val run = host.scope.async(io, start = CoroutineStart.LAZY) {
            slots.withPermit {
                if (!state.compareAndSet(NOT_STARTED, STARTED)) throw CancellationException("abandoned before it started")
                try {
                    connections.use { c -> body(c) }
                } catch (e: SQLException) {
                    throw translate(e, what)
                }
            }
        }
        if (inFlightId != null) {
            // Until the statement has ended (answered, failed, or abandoned before it started): see cancel.
            acquiring[inFlightId] = run
            run.invokeOnCompletion { acquiring.remove(inFlightId, run) }
        }
        run.start()
        try {
            return run.await()
        } catch (e: CancellationException) {
            if (state.compareAndSet(NOT_STARTED, ABANDONED)) run.cancel() // else it finishes in the background
            throw e
        }
    }

    /** The acquire statements running now, by request id (each removed when it ends): cancel waits for its request's. */
    private val acquiring = java.util.concurrent.ConcurrentHashMap<String, kotlinx.coroutines.Job>()

    private fun translate(e: SQLException, what: String): RuntimeException {
        val state = e.sqlState.orEmpty()
        return when {
            e is SQLTimeoutException || state.startsWith("08") || state.startsWith("53") || state.startsWith("57P") ||
                state == "57014" || state == "25006" || state == "40001" || state == "40P01" || state == "55P03" ->
                PostgresUnavailableException("the PostgreSQL server $servers could not serve $what ($state): ${e.message}", e)
            else -> DistributedSemaphoreException("the PostgreSQL server $servers refused $what ($state): ${e.message}", e)
        }
    }

    override fun toString(): String = "PostgresEngine($servers, $schema, pool $poolSize)"

    private companion object {
        const val NOT_STARTED = 0
        const val STARTED = 1
        const val ABANDONED = 2

        /** How often each client sweeps idle semaphores (P9), and how many at most per sweep. */
        val SWEEP_EVERY = 60.seconds
        const val SWEEP_LIMIT = 100

        /** How long a request waits for the wake-up connection to listen before it fails as unavailable. */
        val LISTEN_WAIT = 5000.milliseconds
    }
}

/**
 * Where the engine's statements get their connections: [use] lends one for one call (autocommit on) and takes it back.
 * Either a small pool of the client's own ([OwnPool], from a JDBC URL) or the application's DataSource
 * ([BorrowedConnections]).
 */
internal interface ConnectionSource : AutoCloseable {
    fun <T> use(body: (Connection) -> T): T
    override fun close()
}

/**
 * At most [size] connections of the client's own, opened by [open] when needed and kept while they work; one that
 * failed (or whose statement broke it) is closed rather than reused. Callers are bounded by the engine, so no caller
 * waits here for a connection.
 */
internal class OwnPool(private val open: () -> Connection, private val size: Int) : ConnectionSource {
    private val idle = ArrayDeque<Connection>()

    @Volatile
    private var closed = false

    override fun <T> use(body: (Connection) -> T): T {
        val c = synchronized(idle) { idle.removeLastOrNull() } ?: open().also { it.autoCommit = true }
        var healthy = false
        try {
            val result = body(c)
            healthy = true
            return result
        } catch (e: SQLException) {
            healthy = !e.sqlState.orEmpty().startsWith("08") && !c.isClosed
            throw e
        } finally {
            val keep = healthy && !closed && synchronized(idle) { if (idle.size < size) idle.addLast(c).let { true } else false }
            if (!keep) runCatching { c.close() }
        }
    }

    override fun close() {
        closed = true
        synchronized(idle) {
            idle.forEach { runCatching { it.close() } }
            idle.clear()
        }
    }
}

/** Connections of the application's DataSource, one per call (its pool, if any, bounds and reuses them). */
internal class BorrowedConnections(private val dataSource: javax.sql.DataSource) : ConnectionSource {
    override fun <T> use(body: (Connection) -> T): T = dataSource.connection.use { c ->
        val autoCommit = c.autoCommit
        if (!autoCommit) c.autoCommit = true
        try {
            body(c)
        } finally {
            if (!autoCommit) runCatching { c.autoCommit = false }
        }
    }

    override fun close() {} // the application's
}
