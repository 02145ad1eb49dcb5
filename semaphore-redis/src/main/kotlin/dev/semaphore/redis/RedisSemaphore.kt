/*
 * A semaphore and a lock shared by many JVMs through one Redis server. The public contract is here;
 * RedisSemaphoreClient.kt holds the connections, RedisSemaphoreHandle.kt the per-semaphore client
 * side, and the server side is a set of Lua scripts (the .lua resources in dev/semaphore/redis).
 *
 * THE SERVER SIDE: the rules the scripts keep (lib.lua and line.lua cite them).
 * R1  Time is the server's: every expiry and deadline is computed in a script from Redis's TIME.
 * R2  A semaphore is created by the first script that touches it, with the total its caller configured;
 *     a caller configured with another total is refused (nothing changes). The fencing counter starts
 *     at the server's time in microseconds.
 * R3  Strict FIFO, whole grants: a request is granted at once only if nobody is queued and it fits;
 *     otherwise it joins the line. After every change that frees permits, the head of the line is
 *     granted all its permits if they fit, then the next, and so on; the first that does not fit stops
 *     the loop (so a large request is never starved by small ones). Grants are published on the
 *     semaphore's channel.
 * R4  Every grant is a lease: an id (the request's), a permit count, a fencing token (the semaphore's
 *     counter, incremented for every grant: strictly increasing across all grants) and an expiry.
 * R5  Every script first ends the leases past their expiry and drops the queued requests past their
 *     heartbeat deadline, then grants what that freed (R3). A live holder renews its lease; a live
 *     waiter's client sends heartbeats; so only a dead (or cut off) one loses its place or its permits.
 * R6  Every script is idempotent per request id: a command repeated after a reconnect gets the same
 *     answer and changes nothing more. An ended id is remembered (why it ended) for at least 10 minutes.
 * R7  Wake-ups are by pub/sub; the heartbeat of queued requests also answers where each one is, so a
 *     lost message delays a grant by at most one heartbeat interval.
 * R8  A request that gives up leaves the line; if it was granted in the same instant, a cancelled
 *     caller hands the lease back and a timed-out caller takes it (tryAcquire returns it). A grant is
 *     taken by its caller or handed back, never both, never neither.
 */
package dev.semaphore.redis

import kotlinx.coroutines.CoroutineScope
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeMark
import kotlin.time.toKotlinDuration

/**
 * A counting semaphore of [totalPermits] permits shared, under one [name], by every JVM connected to the
 * same Redis server, with the guarantees of the local `dev.semaphore.Semaphore` where they can hold
 * across machines: one first-in-first-out line for all JVMs, requests for several permits granted whole
 * at the head of the line, no barging by [tryAcquire], a request larger than the total refused at once.
 *
 * Every grant is a [Lease] that ends at its expiry unless renewed: a holder that dies loses its permits
 * after at most one lease time, and they go to the next in line. Use [withPermit], which renews the
 * lease while its block runs and tells the block (cancels it with [LeaseLostException]) if the lease
 * is lost. A holder that may be paused for longer than a lease (a long GC, a stopped process) must
 * pass the lease's [Lease.fencingToken] to the resource it protects, which rejects a token lower than
 * one it has seen.
 *
 * Failures: misuse throws `IllegalArgumentException` or `IllegalStateException` (as each method says)
 * and changes nothing; what Redis or the network did throws a [RedisSemaphoreException] subtype (see
 * RedisSemaphoreExceptions.kt): every method may throw [RedisUnavailableException],
 * [ConfigurationConflictException] and [WrongClusterNodeException].
 *
 * Get one from [RedisSemaphoreClient.semaphore]. Methods are safe to call from any coroutine.
 */
public interface RedisSemaphore {
    /** The semaphore's name on the server. */
    public val name: String

    /** The total number of permits, as configured (the server refuses a handle configured with another). */
    public val totalPermits: Int

    /**
     * Waits in line for [permits] permits and returns their lease. Cancelling the caller withdraws the
     * request; a grant that raced the cancellation is handed back (R8).
     * @throws IllegalArgumentException if [permits] < 1 or more than the total (nothing is queued).
     * @throws dev.semaphore.SemaphoreClosedException if this handle is or becomes closed.
     * @throws QueuedRequestLostException if the server dropped the request from the line because its
     *   heartbeats did not arrive (this client was cut off for longer than the waiter time to live).
     * @throws NotReplicatedException if [RedisSemaphoreConfig.replicaAcks] replicas did not acknowledge
     *   the grant in time (it was handed back). The same holds for [tryAcquire].
     */
    public suspend fun acquire(permits: Int = 1): Lease

    /**
     * Takes [permits] permits now if nobody is queued and they are free (one round trip); null otherwise.
     * @throws IllegalArgumentException if [permits] < 1 or more than the total.
     */
    public suspend fun tryAcquire(permits: Int = 1): Lease?

    /**
     * Waits at most [timeout] (coroutine time) for [permits] permits; null if the time ran out, with
     * nothing held and nothing queued. A grant that raced the timeout is returned, not lost (R8).
     * Zero or negative: as [tryAcquire]. The timeout comes first, as in `Semaphore.tryAcquire(timeout)`
     * of the core: `tryAcquire(5.seconds)` waits up to 5 s for one permit, `tryAcquire(5.seconds, 2)`
     * for two.
     * @throws IllegalArgumentException if [permits] < 1 or more than the total (nothing is queued).
     */
    public suspend fun tryAcquire(timeout: Duration, permits: Int = 1): Lease?

    /**
     * Ends [lease] and gives its permits back to the head of the line.
     * @throws LeaseLostException if the lease had expired (its permits already went to others).
     * @throws IllegalStateException if it was already released, or is unknown to this semaphore.
     * @throws IllegalArgumentException if [lease] belongs to another semaphore.
     * @throws RedisUnavailableException if the server could not be reached: the lease stays held until
     *   its expiry, and [release] may be called again.
     */
    public suspend fun release(lease: Lease)

    /**
     * Extends [lease] by one lease time from now (server time).
     * @throws LeaseLostException if it expired or was released.
     * @throws NotReplicatedException if [RedisSemaphoreConfig.replicaAcks] replicas did not acknowledge
     *   the renewal in time; [Lease.remaining] was not extended (the lease may still be live: try again).
     * @throws IllegalArgumentException if [lease] belongs to another semaphore.
     */
    public suspend fun renew(lease: Lease)

    /** Permits free now (after the server ended what had expired). */
    public suspend fun availablePermits(): Int

    /** Requests waiting in line now, from every JVM. */
    public suspend fun queueLength(): Int

    /**
     * Closes this handle: its waiting callers fail with `SemaphoreClosedException` and leave the line;
     * later [acquire] and [tryAcquire] calls throw it. Leases stay valid: [release] and [renew] keep
     * working. The semaphore on the server, and other handles on it, are not affected.
     */
    public fun close()
}

/**
 * A first-in-first-out lock shared by every JVM on the same Redis server: a [RedisSemaphore] of one
 * permit whose [Lease] is the owner (it has no other notion of owner; it is not reentrant: locking
 * again while holding waits for yourself until your lease expires). The same name as a
 * [RedisSemaphore] of 1 permit is the same line.
 */
public interface RedisLock {
    public val name: String

    /** Waits in line for the lock; see [RedisSemaphore.acquire]. */
    public suspend fun lock(): Lease

    /** Takes the lock now if it is free and nobody is queued; null otherwise. */
    public suspend fun tryLock(): Lease?

    /** Waits at most [timeout] for the lock; see [RedisSemaphore.tryAcquire]. */
    public suspend fun tryLock(timeout: Duration): Lease?

    /** Unlocks; see [RedisSemaphore.release]. */
    public suspend fun unlock(lease: Lease)

    /** See [RedisSemaphore.renew]. */
    public suspend fun renew(lease: Lease)

    public suspend fun isLocked(): Boolean

    public suspend fun queueLength(): Int

    /** See [RedisSemaphore.close]. */
    public fun close()
}

/**
 * A grant: [permits] permits of semaphore [semaphoreName], until it is released or expires.
 * [fencingToken] is strictly greater than the token of every earlier grant of the same semaphore.
 * Java reads the properties record-style, as on `RedisPermit`: `id()`, `permits()`, `fencingToken()`,
 * `semaphoreName()`.
 */
public class Lease internal constructor(
    @get:JvmName("semaphoreName") public val semaphoreName: String,
    /** The request's id, unique across every client of the server. */
    @get:JvmName("id") public val id: String,
    @get:JvmName("permits") public val permits: Int,
    @get:JvmName("fencingToken") public val fencingToken: Long,
    /** When the lease ends unless renewed, as last told by the server, measured on this JVM's monotonic clock. */
    @Volatile internal var expiresAt: TimeMark,
) {
    /** The request's number in the line if it queued (the server's order of requests), 0 if granted at once. */
    @Volatile internal var queueNumber: Long = 0

    /** Set by the first release call (cleared again if it could not reach the server). */
    internal val releasing = java.util.concurrent.atomic.AtomicBoolean()

    /** The time left before the lease ends unless renewed, by the last answer of the server. */
    public val remaining: Duration get() = -expiresAt.elapsedNow()

    override fun toString(): String =
        "Lease(semaphore=$semaphoreName, id=$id, permits=$permits, fencingToken=$fencingToken, remaining=$remaining)"
}

/**
 * Timings of a [RedisSemaphore], and whether its grants wait for replicas; all times are measured by
 * the server except the intervals at which this client acts and [replicaTimeout].
 *
 * Kotlin: name the arguments, `RedisSemaphoreConfig(leaseTime = 2.seconds, heartbeatInterval = 200.milliseconds)`.
 * The times are all `Duration`s, so a positional call could put one in another's place and still
 * compile; the leading [NamedArgumentsOnly] parameter makes any positional argument a compile error.
 * Java: `new RedisSemaphoreConfig()` (the defaults) and the `with...` methods, each of which returns a
 * new configuration.
 *
 * @property leaseTime how long a grant lasts unless renewed; a dead holder's permits come back after at most this.
 * @property renewInterval how often [withPermit] renews the lease while its block runs; by default a
 *   third of [leaseTime] (it follows [leaseTime] until set).
 * @property waiterTimeToLive how long a queued request stays in line without a heartbeat; a dead
 *   waiter leaves the line after at most this.
 * @property heartbeatInterval how often this client sends the heartbeat of its queued requests, which
 *   also re-checks for a grant whose pub/sub message was lost; by default a fifth of
 *   [waiterTimeToLive] (it follows [waiterTimeToLive] until set).
 * @property replicaAcks 0 (the default): a grant counts when the server made it. N > 0: a lease is
 *   returned to its caller only once N replicas have acknowledged it (Redis `WAIT`), and a renewal
 *   extends [Lease.remaining] only once N replicas have acknowledged it; a grant that is not acknowledged
 *   within [replicaTimeout] is handed back and the request fails with [NotReplicatedException], a
 *   renewal is retried as if the server could not be reached. See the README's guarantees for what
 *   this does and does not protect against.
 * @property replicaTimeout how long to wait for [replicaAcks] replicas.
 * @throws IllegalArgumentException if a time is under 1 ms, an interval is not shorter than what it
 *   refreshes, or [replicaAcks] is negative; the message names the value.
 */
public class RedisSemaphoreConfig private constructor(
    public val leaseTime: Duration,
    /** The renew interval as set, null for the default (a third of the lease time). */
    private val renewIntervalSet: Duration?,
    public val waiterTimeToLive: Duration,
    /** The heartbeat interval as set, null for the default (a fifth of the waiter time to live). */
    private val heartbeatIntervalSet: Duration?,
    public val replicaAcks: Int,
    public val replicaTimeout: Duration,
) {
    /**
     * A configuration of the given times (named arguments only: see the class). A null interval, or
     * one left out, is the default: [renewInterval] a third of [leaseTime], [heartbeatInterval] a
     * fifth of [waiterTimeToLive].
     */
    public constructor(
        vararg namedArgumentsOnly: NamedArgumentsOnly,
        leaseTime: Duration = 30.seconds,
        renewInterval: Duration? = null,
        waiterTimeToLive: Duration = 10.seconds,
        heartbeatInterval: Duration? = null,
        replicaAcks: Int = 0,
        replicaTimeout: Duration = 1.seconds,
    ) : this(leaseTime, renewInterval, waiterTimeToLive, heartbeatInterval, replicaAcks, replicaTimeout)

    /** The defaults: a lease of 30 s renewed every 10 s, a waiter time to live of 10 s with a heartbeat every 2 s, no replicas. */
    public constructor() : this(30.seconds, null, 10.seconds, null, 0, 1.seconds)

    public val renewInterval: Duration = renewIntervalSet ?: (leaseTime / 3)
    public val heartbeatInterval: Duration = heartbeatIntervalSet ?: (waiterTimeToLive / 5)

    init {
        require(replicaAcks >= 0) { "replicaAcks must be 0 or more, was $replicaAcks" }
        require(replicaTimeout.inWholeMilliseconds >= 1) { "replicaTimeout must be at least 1ms, was $replicaTimeout" }
        require(leaseTime.inWholeMilliseconds >= 1) { "leaseTime must be at least 1ms, was $leaseTime" }
        require(waiterTimeToLive.inWholeMilliseconds >= 1) { "waiterTimeToLive must be at least 1ms, was $waiterTimeToLive" }
        require(renewInterval.isPositive() && renewInterval < leaseTime) {
            "renewInterval must be positive and shorter than leaseTime ($leaseTime), was $renewInterval"
        }
        require(heartbeatInterval.isPositive() && heartbeatInterval < waiterTimeToLive) {
            "heartbeatInterval must be positive and shorter than waiterTimeToLive ($waiterTimeToLive), was $heartbeatInterval"
        }
    }

    /** This configuration with [leaseTime] = [leaseTime] (and, unless set, [renewInterval] a third of it). */
    public fun withLeaseTime(leaseTime: java.time.Duration): RedisSemaphoreConfig = RedisSemaphoreConfig(
        leaseTime.toKotlinDuration(), renewIntervalSet, waiterTimeToLive, heartbeatIntervalSet, replicaAcks, replicaTimeout,
    )

    /** This configuration with [renewInterval] = [renewInterval]; it must be shorter than [leaseTime]. */
    public fun withRenewInterval(renewInterval: java.time.Duration): RedisSemaphoreConfig = RedisSemaphoreConfig(
        leaseTime, renewInterval.toKotlinDuration(), waiterTimeToLive, heartbeatIntervalSet, replicaAcks, replicaTimeout,
    )

    /** This configuration with [waiterTimeToLive] = [waiterTimeToLive] (and, unless set, [heartbeatInterval] a fifth of it). */
    public fun withWaiterTimeToLive(waiterTimeToLive: java.time.Duration): RedisSemaphoreConfig = RedisSemaphoreConfig(
        leaseTime, renewIntervalSet, waiterTimeToLive.toKotlinDuration(), heartbeatIntervalSet, replicaAcks, replicaTimeout,
    )

    /** This configuration with [heartbeatInterval] = [heartbeatInterval]; it must be shorter than [waiterTimeToLive]. */
    public fun withHeartbeatInterval(heartbeatInterval: java.time.Duration): RedisSemaphoreConfig = RedisSemaphoreConfig(
        leaseTime, renewIntervalSet, waiterTimeToLive, heartbeatInterval.toKotlinDuration(), replicaAcks, replicaTimeout,
    )

    /** This configuration with [replicaAcks] = [replicas] and [replicaTimeout] = [timeout]. */
    public fun withReplicaAcks(replicas: Int, timeout: java.time.Duration): RedisSemaphoreConfig = RedisSemaphoreConfig(
        leaseTime, renewIntervalSet, waiterTimeToLive, heartbeatIntervalSet, replicas, timeout.toKotlinDuration(),
    )

    override fun toString(): String =
        "RedisSemaphoreConfig(leaseTime=$leaseTime, renewInterval=$renewInterval, " +
            "waiterTimeToLive=$waiterTimeToLive, heartbeatInterval=$heartbeatInterval" +
            (if (replicaAcks > 0) ", replicaAcks=$replicaAcks, replicaTimeout=$replicaTimeout)" else ")")

    /**
     * The type of the constructor's leading `vararg`, which has no instances: it takes no argument, so
     * every argument after it must be named (`RedisSemaphoreConfig(leaseTime = 2.seconds)`), and a
     * positional `Duration` does not compile.
     */
    public class NamedArgumentsOnly private constructor()
}

/**
 * Runs [block] holding [permits] permits, renewing the lease every [RedisSemaphoreConfig.renewInterval]
 * while it runs, and releases them after it, however it ends. If the lease is lost (the server says
 * it expired, or renewals fail until its expiry passes), [block] is cancelled and this throws
 * [LeaseLostException]; a block that finished while its lease had already expired gets it too.
 * A release that gets no answer before the lease would expire is abandoned: the permits come back
 * at the expiry, and the block's result stands.
 */
public suspend fun <T> RedisSemaphore.withPermit(permits: Int = 1, block: suspend CoroutineScope.(Lease) -> T): T =
    handle().withLease(acquire(permits), block)

/** [withPermit] for a [RedisLock]. */
public suspend fun <T> RedisLock.withLock(block: suspend CoroutineScope.(Lease) -> T): T = asSemaphore().withPermit(1, block)

/** The semaphore of one permit that this lock is (the same line, under the same name). */
public fun RedisLock.asSemaphore(): RedisSemaphore =
    (this as? RedisLockHandle ?: throw IllegalArgumentException("not a RedisLock of this library: $this")).semaphore

internal fun RedisSemaphore.handle(): RedisSemaphoreHandle =
    this as? RedisSemaphoreHandle ?: throw IllegalArgumentException("not a RedisSemaphore of this library: $this")
