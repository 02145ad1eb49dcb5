/*
 * A semaphore and a lock shared by many JVMs through one server: Redis (semaphore-redis) or PostgreSQL
 * (semaphore-postgres). The public contract is here and in DistributedLock.kt; DistributedSemaphoreClient.kt holds the
 * client's background work, SemaphoreHandle.kt the per-semaphore client side, spi/Engine.kt what an engine provides.
 *
 * The client's rules are written once, in docs/redis-protocol.md, for both engines: the request and lease state machines
 * and what each answer means in each state, and the rules that hold under network faults (H1 the hand-over, K1..K3 the
 * keeper, L1..L3 the release, T1..T2 timeouts and withdrawals). Each server side keeps its own document's rules
 * (docs/redis-protocol.md R1..R9, docs/postgres-protocol.md P1..P10). The code cites them by those names.
 */
package dev.semaphore.distributed

import dev.semaphore.distributed.spi.EngineApi
import dev.semaphore.distributed.spi.RequestRef
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlin.time.Duration
import kotlin.time.Duration.Companion.days
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeMark
import kotlin.time.toKotlinDuration

/**
 * A counting semaphore shared, under one [name], by every JVM connected to the same server (Redis or PostgreSQL), with
 * the guarantees of the local `dev.semaphore.Semaphore` where they can hold across machines: one
 * first-in-first-out line for all JVMs, requests for several permits granted whole at the head of the
 * line, no barging by [tryAcquire], a request larger than the total refused.
 *
 * Every grant is a [Lease]. The client renews it in the background until it is released (see
 * [DistributedConfig.autoRenew] for a fixed lease instead), so it lasts as long as its holder lives
 * and reaches the server; a holder that dies or is cut off loses its permits after at most one lease
 * time, and they go to the next in line. A holder whose lease is lost anyway is told when it happens:
 * [Lease.awaitEnd] throws [LeaseLostException], and [withPermit] cancels its block. A holder that may
 * be paused for longer than a lease (a long GC, a stopped process) must pass the lease's
 * [Lease.fencingToken] to the resource it protects, which rejects a token lower than one it has seen.
 *
 * The total is the server's: [configuredPermits] creates the semaphore if the server has none, and
 * [addPermits], [reducePermits] and [setPermits] change it for every JVM at once. A semaphore nobody
 * holds or waits on expires from the server after [DistributedConfig.idleExpiry], and the next use
 * creates it again, with fencing tokens still increasing.
 *
 * Failures: misuse throws `IllegalArgumentException` or `IllegalStateException` (as each method says)
 * and changes nothing; what the server or the network did throws a [DistributedSemaphoreException] subtype (see
 * DistributedExceptions.kt): every method may throw [ServerUnavailableException] and
 * `WrongClusterNodeException` (semaphore-redis).
 *
 * Get one from [DistributedSemaphoreClient.semaphore]: a handle is a cheap view, made per call if you like.
 * Methods are safe to call from any coroutine.
 */
public interface DistributedSemaphore {
    /** The semaphore's name on the server. */
    public val name: String

    /**
     * The total this handle creates the semaphore with if the server has none (R2). The server's total,
     * once created, is [totalPermits].
     */
    public val configuredPermits: Int

    /**
     * Waits in line for [permits] permits and returns their lease, which the client keeps renewed until
     * [release]. Cancelling the caller withdraws the request; a grant that raced the cancellation is
     * handed back (R8).
     * @throws IllegalArgumentException if [permits] < 1 or more than the server's total (nothing is queued).
     * @throws IllegalStateException if the total is reduced below [permits] while it waits (it left the line).
     * @throws dev.semaphore.SemaphoreClosedException if this handle or its client is or becomes closed.
     * A lease is returned only with at least [DistributedConfig.renewInterval] left by the client's
     * count: a grant that reached this client late is renewed first (H1 in docs/redis-protocol.md).
     * @throws QueuedRequestLostException if the server dropped the request from the line because its
     *   heartbeats did not arrive (this client was cut off for longer than the waiter time to live), or
     *   its grant reached this client after its lease had ended on the server (nothing is held).
     * @throws NotReplicatedException if [DistributedConfig.replicaAcks] replicas did not acknowledge
     *   the grant in time (it was handed back). The same holds for [tryAcquire].
     */
    public suspend fun acquire(permits: Int = 1): Lease

    /**
     * Takes [permits] permits now if nobody is queued and they are free (one round trip); null otherwise.
     * @throws IllegalArgumentException if [permits] < 1 or more than the server's total.
     */
    public suspend fun tryAcquire(permits: Int = 1): Lease?

    /**
     * Waits at most [timeout] (coroutine time) for [permits] permits; null if the time ran out, with
     * nothing held. It returns within [timeout] plus 100 ms whatever the network does (T1 in
     * docs/redis-protocol.md): at the deadline the request is withdrawn, and if the server does not answer
     * the withdrawal within 100 ms, it goes on in the background, so that the request leaves the line as
     * soon as the server hears it. A grant that raced the timeout is returned, not lost (R8).
     * Zero or negative: as [tryAcquire]. The timeout comes first, as in `Semaphore.tryAcquire(timeout)`
     * of the core: `tryAcquire(5.seconds)` waits up to 5 s for one permit, `tryAcquire(5.seconds, 2)`
     * for two.
     * @throws IllegalArgumentException if [permits] < 1 or more than the server's total (nothing is queued).
     */
    public suspend fun tryAcquire(timeout: Duration, permits: Int = 1): Lease?

    /**
     * Ends [lease] (its renewals stop) and gives its permits back to the head of the line.
     * @throws LeaseLostException if the lease had been lost (its permits already went to others).
     * @throws IllegalStateException if it was already released.
     * @throws IllegalArgumentException if [lease] belongs to another semaphore.
     * @throws ServerUnavailableException if the server did not answer (within the client's command
     *   timeout). Renewals stopped at the call, so the permits come back at the lease's expiry at the
     *   latest, and the lease then ends as given back, not lost (L3 in docs/redis-protocol.md); [release]
     *   may be called again to give them back sooner.
     */
    public suspend fun release(lease: Lease)

    /**
     * Extends [lease] by one lease time from now (server time). The client does this by itself unless
     * [DistributedConfig.autoRenew] is off.
     * @throws LeaseLostException if it had ended.
     * @throws NotReplicatedException if [DistributedConfig.replicaAcks] replicas did not acknowledge
     *   the renewal in time; [Lease.remaining] was not extended (the lease may still be live: try again).
     * @throws IllegalArgumentException if [lease] belongs to another semaphore.
     */
    public suspend fun renew(lease: Lease)

    /** Permits free now (after the server ended what had expired); below zero while a reduction is repaid. */
    public suspend fun availablePermits(): Int

    /** Requests waiting in line now, from every JVM. */
    public suspend fun queueLength(): Int

    /** The total on the server now: the permits that exist, held or free (R2). */
    public suspend fun totalPermits(): Int

    /**
     * Who holds this semaphore and who waits for it, from every JVM, now: at most [limit] holders (each
     * with its client's id and name, permits, fencing token and time left) and at most [limit] requests
     * of the line (client, permits, time waited), with the true counts. One read-only script, which
     * changes nothing (not even creating the semaphore) and never waits; see [SemaphoreInspection].
     * `println(semaphore.inspect())` prints a readable dump.
     * @throws IllegalArgumentException if [limit] is not between 0 and 1000 (0: the counts only).
     */
    public suspend fun inspect(limit: Int = 100): SemaphoreInspection

    /**
     * Adds [permits] to the total, for every JVM; queued requests that now fit are granted.
     * @throws IllegalArgumentException if [permits] < 1 or the total would exceed `Int.MAX_VALUE`.
     */
    public suspend fun addPermits(permits: Int)

    /**
     * Removes [permits] from the total, for every JVM, without waiting for holders: [availablePermits]
     * may go below zero, and releases repay that debt before anyone is granted. A queued request larger
     * than the new total fails with `IllegalStateException` when it reaches the head of the line.
     * @throws IllegalArgumentException if [permits] < 1 or more than the total.
     */
    public suspend fun reducePermits(permits: Int)

    /**
     * Makes the total [total], for every JVM: [addPermits] or [reducePermits] by the difference, in one
     * step. Idempotent, so a rolling deploy can call it from every instance.
     * @throws IllegalArgumentException if [total] < 0.
     */
    public suspend fun setPermits(total: Int)

    /**
     * Removes the semaphore from the server if nobody holds or waits on it (the next use creates it
     * again, R2, with fencing tokens still increasing, R9).
     * @throws IllegalStateException if permits are held or requests queued; nothing changes.
     */
    public suspend fun delete()

    /**
     * Closes this handle: its waiting callers fail with `SemaphoreClosedException` and leave the line;
     * later [acquire] and [tryAcquire] calls throw it. Leases stay valid (and renewed): [release] and
     * [renew] keep working. The semaphore on the server, and other handles on it, are not affected.
     */
    public fun close()
}

/**
 * A grant: [permits] permits of semaphore [semaphoreName], until it is released or lost.
 * [fencingToken] is strictly greater than the token of every earlier grant of the same semaphore.
 * Java reads the properties record-style, as on `DistributedPermit`: `id()`, `permits()`, `fencingToken()`,
 * `semaphoreName()`.
 */
public class Lease internal constructor(
    @get:JvmName("semaphoreName") public val semaphoreName: String,
    /** The request's id, unique across every client of the server. */
    @get:JvmName("id") public val id: String,
    @get:JvmName("permits") public val permits: Int,
    @get:JvmName("fencingToken") public val fencingToken: Long,
    /** When the lease ends unless renewed, measured on this JVM's monotonic clock, no later than on the server (R4). */
    @Volatile internal var expiresAt: TimeMark,
) {
    /** The request's number in the line if it queued (the server's order of requests), 0 if granted at once. */
    @Volatile internal var queueNumber: Long = 0

    /** Where the server keeps it (engines with slots; set before it is handed over). */
    @Volatile internal var slot: Int = 0

    /** The lease as the engine's calls name it. */
    @OptIn(EngineApi::class)
    internal val ref: RequestRef get() = RequestRef(id, slot)

    /** Set by a release call while it runs, and for good once one succeeded (cleared if it got no answer: L3). */
    internal val releasing = java.util.concurrent.atomic.AtomicBoolean()

    /**
     * A release was sent (L3 in docs/redis-protocol.md): the lease is no longer renewed, so it ends at its expiry if no
     * release is answered first, and it is not lost but given back; a later release that finds it gone has succeeded.
     */
    @Volatile internal var releaseTried: Boolean = false

    /** Completes when the lease ends: normally once released (or given back at its expiry, L3), with LeaseLostException once lost. */
    internal val end: CompletableDeferred<Unit> = CompletableDeferred()

    @Volatile internal var lostWith: LeaseLostException? = null

    /** Ends the lease normally: released, or (L3) given back at its expiry after a release that got no answer. */
    internal fun released() {
        end.complete(Unit)
    }

    internal fun lose(e: LeaseLostException) {
        lostWith = e
        end.completeExceptionally(e)
    }

    /** The time left before the lease ends unless renewed, by the last answer of the server. */
    public val remaining: Duration get() = -expiresAt.elapsedNow()

    /** True once the lease is known to be lost (its renewals failed until its expiry, or the server no longer had it). */
    public val isLost: Boolean get() = lostWith != null

    /**
     * Suspends until the lease ends: returns once it is released; throws [LeaseLostException] as soon as
     * it is known to be lost. Run it beside the work the lease protects to stop that work in time:
     * `launch { lease.awaitEnd() }` in the work's scope cancels the scope when the lease is lost
     * ([withPermit] does this by itself).
     */
    public suspend fun awaitEnd() {
        end.await()
    }

    override fun toString(): String =
        "Lease(semaphore=$semaphoreName, id=$id, permits=$permits, fencingToken=$fencingToken, remaining=$remaining)"
}

/**
 * Timings of a [DistributedSemaphore], whether its leases are renewed, and whether its grants wait for
 * replicas; all times are measured by the server except the intervals at which this client acts and
 * [replicaTimeout].
 *
 * Kotlin: name the arguments, `DistributedConfig(leaseTime = 2.seconds, heartbeatInterval = 200.milliseconds)`.
 * Several are `Duration`s, so a positional call could put one in another's place and still compile;
 * the leading [NamedArgumentsOnly] parameter makes any positional argument a compile error.
 * Java: `new DistributedConfig()` (the defaults) and the `with...` methods, each of which returns a
 * new configuration.
 *
 * @property leaseTime how long a lease lasts without a renewal: the bound after which a dead or cut-off
 *   holder's permits come back.
 * @property autoRenew true (the default): the client renews every lease it granted every
 *   [renewInterval] until it is released, so a lease lasts as long as its holder lives. False: a fixed
 *   lease, which ends [leaseTime] after its grant unless the holder calls `renew` (as Redisson's
 *   `lock(leaseTime, unit)`); the client still tells the holder when it ran out ([Lease.awaitEnd]).
 * @property renewInterval how often the client renews a lease; by default a third of [leaseTime] (it
 *   follows [leaseTime] until set), and at most half of it. It is also the least time a lease has left,
 *   by the client's count, when it is handed to its caller: a grant that arrives with less is renewed
 *   first (docs/redis-protocol.md, H1).
 * @property waiterTimeToLive how long a queued request stays in line without a heartbeat; a dead
 *   waiter leaves the line after at most this.
 * @property heartbeatInterval how often this client sends the heartbeat of its queued requests, which
 *   also re-checks for a grant whose pub/sub message was lost; at most half of [waiterTimeToLive]. By
 *   default a fifth of [waiterTimeToLive], and no more than half of `leaseTime - renewInterval` (it
 *   follows both until set): a grant is counted from the request's last heartbeat, so a longer
 *   interval makes more grants wait for a renewal before they are handed over.
 * @property idleExpiry how long the semaphore's keys stay on the server once nobody holds or waits on
 *   it (R9): they expire between [idleExpiry] and [idleExpiry] plus a minute (or plus [idleExpiry] if
 *   shorter) after the last deadline passed, that is the last lease's expiry (as last renewed) or the
 *   last queued request's heartbeat deadline; the next use creates it again with the total its caller
 *   configured. Resizes are kept as long as the keys are. The longest idle time among its users'
 *   handles applies. Default: one day.
 * @property replicaAcks 0 (the default): a grant counts when the server made it. N > 0: a lease is
 *   returned to its caller only once N replicas have acknowledged it (Redis `WAIT`), and a renewal
 *   extends [Lease.remaining] only once N replicas have acknowledged it; a grant that is not acknowledged
 *   within [replicaTimeout] is handed back and the request fails with [NotReplicatedException], a
 *   renewal is retried as if the server could not be reached. See docs/redis.md for what this does and
 *   does not protect against.
 * @property replicaTimeout how long to wait for [replicaAcks] replicas.
 * @throws IllegalArgumentException if a time is under its least value (2 ms, 1 ms for [idleExpiry] and
 *   [replicaTimeout]), an interval is more than half of what it refreshes, or [replicaAcks] is
 *   negative; the message names the value and which one to change.
 */
public class DistributedConfig private constructor(
    public val leaseTime: Duration,
    public val autoRenew: Boolean,
    /** The renew interval as set, null for the default (a third of the lease time). */
    private val renewIntervalSet: Duration?,
    public val waiterTimeToLive: Duration,
    /** The heartbeat interval as set, null for the default (a fifth of the waiter time to live). */
    private val heartbeatIntervalSet: Duration?,
    public val idleExpiry: Duration,
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
        autoRenew: Boolean = true,
        renewInterval: Duration? = null,
        waiterTimeToLive: Duration = 10.seconds,
        heartbeatInterval: Duration? = null,
        idleExpiry: Duration = 1.days,
        replicaAcks: Int = 0,
        replicaTimeout: Duration = 1.seconds,
    ) : this(leaseTime, autoRenew, renewInterval, waiterTimeToLive, heartbeatInterval, idleExpiry, replicaAcks, replicaTimeout)

    /**
     * The defaults: a lease of 30 s renewed every 10 s, a waiter time to live of 10 s with a heartbeat
     * every 2 s, keys kept for a day once idle, no replicas.
     */
    public constructor() : this(30.seconds, true, null, 10.seconds, null, 1.days, 0, 1.seconds)

    public val renewInterval: Duration = renewIntervalSet ?: (leaseTime / 3)

    /**
     * The default is a fifth of [waiterTimeToLive], but no more than half of what a lease has left when its renewal is
     * due (`leaseTime - renewInterval`): a grant to a queued request is counted from its last heartbeat, and it is handed
     * over without a renewal only with [renewInterval] left (docs/redis-protocol.md, H1).
     */
    public val heartbeatInterval: Duration = heartbeatIntervalSet ?: minOf(waiterTimeToLive / 5, (leaseTime - renewInterval) / 2)

    init {
        require(replicaAcks >= 0) { "replicaAcks must be 0 or more, was $replicaAcks" }
        require(replicaTimeout.inWholeMilliseconds >= 1) { "replicaTimeout must be at least 1ms, was $replicaTimeout" }
        require(leaseTime.inWholeMilliseconds >= 2) { "leaseTime must be at least 2ms, was $leaseTime" }
        require(waiterTimeToLive.inWholeMilliseconds >= 2) { "waiterTimeToLive must be at least 2ms, was $waiterTimeToLive" }
        require(idleExpiry.inWholeMilliseconds >= 1) { "idleExpiry must be at least 1ms, was $idleExpiry" }
        // K1 (docs/redis-protocol.md): a renewal is due renewInterval after the last one was sent, and it must be able to
        // fail once and be tried again before the lease ends, so at most half of the lease time may pass before it.
        require(renewInterval.isPositive() && renewInterval <= leaseTime / 2) {
            "renewInterval must be positive and at most half of leaseTime ($leaseTime), so that a renewal that fails can be " +
                "tried again before the lease ends; was $renewInterval: lower renewInterval or raise leaseTime"
        }
        // The same for a queued request's heartbeats (R5): one may be lost, and the next still arrives in time.
        require(heartbeatInterval.isPositive() && heartbeatInterval <= waiterTimeToLive / 2) {
            "heartbeatInterval must be positive and at most half of waiterTimeToLive ($waiterTimeToLive), so that a " +
                "heartbeat that fails can be sent again before the request is dropped; was $heartbeatInterval: lower " +
                "heartbeatInterval or raise waiterTimeToLive"
        }
    }

    private fun copy(
        leaseTime: Duration = this.leaseTime,
        autoRenew: Boolean = this.autoRenew,
        renewInterval: Duration? = renewIntervalSet,
        waiterTimeToLive: Duration = this.waiterTimeToLive,
        heartbeatInterval: Duration? = heartbeatIntervalSet,
        idleExpiry: Duration = this.idleExpiry,
        replicaAcks: Int = this.replicaAcks,
        replicaTimeout: Duration = this.replicaTimeout,
    ) = DistributedConfig(leaseTime, autoRenew, renewInterval, waiterTimeToLive, heartbeatInterval, idleExpiry, replicaAcks, replicaTimeout)

    /** This configuration with [leaseTime] = [leaseTime] (and, unless set, [renewInterval] a third of it). */
    public fun withLeaseTime(leaseTime: java.time.Duration): DistributedConfig = copy(leaseTime = leaseTime.toKotlinDuration())

    /** This configuration with [autoRenew] = [autoRenew]: false for fixed leases. */
    public fun withAutoRenew(autoRenew: Boolean): DistributedConfig = copy(autoRenew = autoRenew)

    /** This configuration with [renewInterval] = [renewInterval]; it must be shorter than [leaseTime]. */
    public fun withRenewInterval(renewInterval: java.time.Duration): DistributedConfig =
        copy(renewInterval = renewInterval.toKotlinDuration())

    /** This configuration with [waiterTimeToLive] = [waiterTimeToLive] (and, unless set, [heartbeatInterval] a fifth of it). */
    public fun withWaiterTimeToLive(waiterTimeToLive: java.time.Duration): DistributedConfig =
        copy(waiterTimeToLive = waiterTimeToLive.toKotlinDuration())

    /** This configuration with [heartbeatInterval] = [heartbeatInterval]; it must be shorter than [waiterTimeToLive]. */
    public fun withHeartbeatInterval(heartbeatInterval: java.time.Duration): DistributedConfig =
        copy(heartbeatInterval = heartbeatInterval.toKotlinDuration())

    /** This configuration with [idleExpiry] = [idleExpiry]. */
    public fun withIdleExpiry(idleExpiry: java.time.Duration): DistributedConfig = copy(idleExpiry = idleExpiry.toKotlinDuration())

    /** This configuration with [replicaAcks] = [replicas] and [replicaTimeout] = [timeout]. */
    public fun withReplicaAcks(replicas: Int, timeout: java.time.Duration): DistributedConfig =
        copy(replicaAcks = replicas, replicaTimeout = timeout.toKotlinDuration())

    override fun toString(): String =
        "DistributedConfig(leaseTime=$leaseTime, " + (if (autoRenew) "renewInterval=$renewInterval" else "fixed leases") +
            ", waiterTimeToLive=$waiterTimeToLive, heartbeatInterval=$heartbeatInterval, idleExpiry=$idleExpiry" +
            (if (replicaAcks > 0) ", replicaAcks=$replicaAcks, replicaTimeout=$replicaTimeout)" else ")")

    /**
     * The type of the constructor's leading `vararg`, which has no instances: it takes no argument, so
     * every argument after it must be named (`DistributedConfig(leaseTime = 2.seconds)`), and a
     * positional `Duration` does not compile.
     */
    public class NamedArgumentsOnly private constructor()
}

/**
 * Runs [block] holding [permits] permits and releases them after it, however it ends. If the lease is
 * lost meanwhile (the server no longer has it, or renewals failed until its expiry passed; with
 * `autoRenew` off, its fixed time ran out), [block] is cancelled and this throws [LeaseLostException];
 * a block that finished while its lease had already been lost gets it too.
 * A release that gets no answer before the lease would expire is abandoned: the permits come back
 * at the expiry, and the block's result stands.
 */
public suspend fun <T> DistributedSemaphore.withPermit(permits: Int = 1, block: suspend CoroutineScope.(Lease) -> T): T =
    handle().withLease(acquire(permits), block)

/** [withPermit] for a [DistributedLock]. */
public suspend fun <T> DistributedLock.withLock(block: suspend CoroutineScope.(Lease) -> T): T = asSemaphore().withPermit(1, block)

/** The semaphore of one permit that this lock is (the same line, under the same name). */
public fun DistributedLock.asSemaphore(): DistributedSemaphore =
    (this as? LockHandle ?: throw IllegalArgumentException("not a DistributedLock of this library: $this")).semaphore

internal fun DistributedSemaphore.handle(): SemaphoreHandle =
    this as? SemaphoreHandle ?: throw IllegalArgumentException("not a DistributedSemaphore of this library: $this")
