/*
 * What an engine module (semaphore-redis, semaphore-postgres) gives the shared client: one call per operation of its
 * server side, and the wake-ups. Everything the client does with the answers (the hand-over of a grant, the keeping of
 * leases, withdrawals, timeouts: H1, K1-K3, L1-L3, T1-T2 in docs/redis-protocol.md) is written once, in
 * DistributedSemaphoreClient.kt and SemaphoreHandle.kt, and an engine only carries the calls. Its server side must keep
 * the server's rules of its protocol document (docs/redis-protocol.md R1-R9, docs/postgres-protocol.md P1-P10), which
 * say the same things in each engine's terms.
 */
package dev.semaphore.distributed.spi

import dev.semaphore.distributed.DistributedConfig
import dev.semaphore.distributed.ServerUnavailableException
import kotlinx.coroutines.CoroutineScope
import kotlin.time.TimeMark

/**
 * Marks the engine interface: for this library's engine modules only. It changes without notice between versions;
 * applications use [dev.semaphore.distributed.DistributedSemaphoreClient] and what it makes.
 */
@RequiresOptIn(
    message = "the engine interface is for this library's engine modules (semaphore-redis, semaphore-postgres) only",
    level = RequiresOptIn.Level.ERROR,
)
@Retention(AnnotationRetention.BINARY)
@Target(AnnotationTarget.CLASS, AnnotationTarget.CONSTRUCTOR, AnnotationTarget.FUNCTION, AnnotationTarget.PROPERTY)
public annotation class EngineApi

/** A request (or, once granted, a lease) as an engine's calls about it name it: its [id], and its [slot] where the engine has slots (else 0). */
@EngineApi
public data class RequestRef(public val id: String, public val slot: Int = 0)

/**
 * Where a request is, as the server answered.
 * - [Kind.GRANTED]: [permits] granted, fencing [token], [remainingMs] of the lease left by the server's clock when it
 *   answered; [total] the semaphore's total if the answer says it (else -1: the client asks once, in the background).
 * - [Kind.QUEUED]: in line, [number] its queue number (0 if not known); [total] as above.
 * - [Kind.BUSY]: a try that did not fit; nothing was queued.
 * - [Kind.FAILED]: the server ended it: it can never be granted ([reason]; [total] the total it was reduced to, or -1).
 * - [Kind.UNKNOWN]: the server has no such request or lease (it ended, or was never known).
 * - [Kind.AGAIN]: the request's id was granted before and the grant was not kept: ask again with a new id (R6).
 * [slot] is where the server keeps the request, for the engines that have slots (0 otherwise).
 */
@EngineApi
public class Place(
    public val kind: Kind,
    public val permits: Int = 0,
    public val token: Long = 0,
    public val remainingMs: Long = 0,
    public val total: Int = -1,
    public val number: Long = 0,
    public val slot: Int = 0,
    public val reason: String? = null,
) {
    /** See [Place]. */
    public enum class Kind { GRANTED, QUEUED, BUSY, FAILED, UNKNOWN, AGAIN }

    override fun toString(): String = when (kind) {
        Kind.GRANTED -> "granted($permits permits, token $token, ${remainingMs}ms left${totalText()})"
        Kind.QUEUED -> "queued(number $number${totalText()})"
        Kind.FAILED -> "failed($reason${totalText()})"
        else -> kind.name.lowercase()
    }

    private fun totalText() = if (total >= 0) ", total $total" else ""

    public companion object {
        /** [Kind.UNKNOWN]. */
        public val UNKNOWN: Place = Place(Kind.UNKNOWN)

        /** [Kind.BUSY]. */
        public val BUSY: Place = Place(Kind.BUSY)

        /** [Kind.AGAIN]. */
        public val AGAIN: Place = Place(Kind.AGAIN)
    }
}

/** A semaphore's (available, queued requests, total) as the server answered; all 0 and total the configured one if it has none. */
@EngineApi
public class State(public val available: Int, public val queued: Int, public val total: Int)

/**
 * What an inspection read: [total] -1 if the server has no such semaphore. [holders]: the first live leases (id,
 * permits, token, ms left); [queued]: the first queued requests in line order (id, permits, 0, ms waited).
 */
@EngineApi
public class Inspected(
    public val total: Int,
    public val holderCount: Int,
    public val heldPermits: Int,
    public val queuedCount: Int,
    public val holders: List<Entry>,
    public val queued: List<Entry>,
) {
    /** One request of an inspection. */
    public class Entry(public val id: String, public val permits: Int, public val token: Long, public val millis: Long)
}

/** What the shared client gives its engine when it starts. */
@EngineApi
public interface EngineHost {
    /** Where the engine runs background work (cancelled when the client closes). */
    public val scope: CoroutineScope

    /** A grant (or a failure, [Place.Kind.FAILED]) of the request [id] arrived by a wake-up: the waiter, if any, takes it. */
    public fun granted(id: String, place: Place)

    /** The client's id (hexadecimal digits): every request id starts with it and '-'. */
    public val clientId: String
}

/**
 * The wake-ups of one semaphore while callers of this JVM wait on it (a Redis channel subscription; PostgreSQL's one
 * LISTEN of the client). Made by [Engine.listen] when the first caller of this JVM waits, stopped ([stop]) a while after
 * the last one left.
 */
@EngineApi
public interface Listening {
    /** When the server confirmed that wake-ups are delivered (null until then, or after a failed attempt). */
    public val confirmedAt: TimeMark?

    /** True once the last attempt failed and none was confirmed before: the client then calls [retry]. */
    public val failed: Boolean

    /** Starts another attempt after a failed one. */
    public fun retry()

    /** Waits until the current attempt is confirmed; throws what it failed with (a [ServerUnavailableException]). */
    public suspend fun awaitConfirmed()

    /** No more wake-ups needed for this semaphore. */
    public fun stop()
}

/** One engine: the connections of one client to its server(s). */
@EngineApi
public interface Engine {
    /** The server(s), for messages: never a URI with a password. */
    public val servers: String

    /** The name this client's requests carry ([dev.semaphore.distributed.DistributedSemaphoreClient.clientName]). */
    public val clientName: String

    /** Called once, by the client, before any other call. */
    public fun start(host: EngineHost)

    /** @throws IllegalArgumentException if [name] is not a semaphore name of this engine, naming it. */
    public fun checkName(name: String): String

    /** @throws IllegalArgumentException if this engine cannot serve [config] (naming the setting and what to use). */
    public fun admit(config: DistributedConfig)

    /** The calls of one semaphore. Sends nothing. */
    public fun semaphore(name: String, configuredPermits: Int, config: DistributedConfig): EngineSemaphore

    /** Starts the wake-ups of the semaphore [name] (called under a lock of the client: must not block). */
    public fun listen(name: String): Listening

    /** The engine's [ServerUnavailableException] subtype, for failures the client finds itself (an answer too late). */
    public fun unavailable(message: String, cause: Throwable?): ServerUnavailableException

    /**
     * Closes the engine's connections (after the client stopped its background work). It may be called on any thread,
     * also one of the engine's own (a caller whose coroutine has no dispatcher continues where an answer or a wake-up
     * completed its wait), and must not wait there for the engine's threads.
     */
    public fun close()
}

/**
 * The calls about one semaphore, each one round trip (in Redis one script, in PostgreSQL one statement). Each throws
 * the engine's [ServerUnavailableException] subtype when the server cannot be reached or cannot serve, a
 * [dev.semaphore.distributed.DistributedSemaphoreException] for another refusal, and IllegalArgumentException for input
 * the server refused (as its message says).
 */
@EngineApi
public interface EngineSemaphore {
    /** Asks for [permits] for the new request [id]: granted, or (with [queue]) queued, or (without) busy; AGAIN (R6). */
    public suspend fun acquire(id: String, permits: Int, queue: Boolean): Place

    /** Keeps the queued [requests] in line and answers where each is, in the same order (at most 100 at a time). */
    public suspend fun heartbeat(requests: List<RequestRef>): List<Place>

    /** Ends the lease [lease]: a number (the last fencing token granted when [wantToken]), or null if the server has no such lease. */
    public suspend fun release(lease: RequestRef, permits: Int, wantToken: Boolean): Long?

    /** Extends the lease [lease] by its lease time from now: GRANTED with its time, or UNKNOWN if it ended. May throw NotReplicatedException. */
    public suspend fun renew(lease: RequestRef, permits: Int): Place

    /** Withdraws [request]: UNKNOWN once gone (a grant handed back if [handBack]); GRANTED for a grant kept (not [handBack]). */
    public suspend fun cancel(request: RequestRef, permits: Int, handBack: Boolean): Place

    /** Changes the total ([mode]: "add", "reduce", "set") once per [resizeId]. */
    public suspend fun resize(resizeId: String, mode: String, count: Int)

    /** See [State]. */
    public suspend fun state(): State

    /** Deletes the semaphore; IllegalStateException if it is in use. */
    public suspend fun delete()

    /** See [Inspected]. */
    public suspend fun inspect(limit: Int): Inspected
}
