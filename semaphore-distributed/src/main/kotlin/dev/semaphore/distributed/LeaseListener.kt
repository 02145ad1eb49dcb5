/*
 * What a DistributedSemaphoreClient does with its leases in the background, told to listeners (and to JFR,
 * DistributedJfr.kt): the renewals, the renewals that failed, and the leases lost.
 */
@file:Suppress("INAPPLICABLE_JVM_NAME")

package dev.semaphore.distributed

import kotlin.time.Duration
import kotlin.time.toJavaDuration

/**
 * Told what a [DistributedSemaphoreClient] does with its leases where no caller sees it: added with
 * [DistributedSemaphoreClient.addListener], from Kotlin or Java (every method has an empty default, so
 * implement only what you need).
 *
 * **Why per client.** The leases are kept by their client (one keeper renews every lease its handles
 * granted), and handles are views that keep nothing, so a listener belongs to the client and hears
 * about every lease of every semaphore and lock made there; [LeaseInfo.semaphoreName] says which.
 *
 * **What it hears.** [onLeaseRenewed] and [onRenewalFailed] report the renewals the client makes by
 * itself ([DistributedConfig.autoRenew]): a `renew` call by hand answers its caller, and the
 * confirmation of a grant by replicas is part of the grant. [onLeaseLost] reports every lease of the
 * client found lost, however it was found (a renewal the server refused, renewals that failed until the
 * lease's expiry, a fixed lease that ran out, a `release` too late), once per lease: when its holder is
 * told ([Lease.awaitEnd] throws). A lease released normally is not reported, nor are other JVMs' leases
 * (their clients report them).
 *
 * **When and where it runs.** On the client's background threads, which renew its leases (a loss
 * found by `release`, in that call), after the fact. The methods must be quick and must not block: a
 * blocked listener holds up renewals. An exception thrown by a listener is logged (System.Logger
 * "dev.semaphore.distributed", WARNING) and changes nothing else: the renewals go on.
 */
public interface LeaseListener {
    /** The client renewed [lease]: [LeaseInfo.remaining] is the time it has left from now on. */
    public fun onLeaseRenewed(lease: LeaseInfo) {}

    /**
     * A renewal of [lease] failed with [cause]: the server could not be reached or gave no answer in
     * time ([ServerUnavailableException]), the replicas did not acknowledge it ([NotReplicatedException]),
     * or another error reply. The lease is not lost: [LeaseInfo.remaining] is what it has left, and the
     * client tries again sooner, until then. If that runs out first, [onLeaseLost] follows.
     */
    public fun onRenewalFailed(lease: LeaseInfo, cause: Throwable) {}

    /**
     * [lease] was lost: its permits may already be held by others. [cause] is what its holder is told
     * ([Lease.awaitEnd] throws it; Java: `DistributedPermit.ended()` fails with it); its message says how it
     * was lost, and its cause is the last renewal's failure, if there was one.
     */
    public fun onLeaseLost(lease: LeaseInfo, cause: LeaseLostException) {}
}

/**
 * A lease as a [LeaseListener] is told of it, at the moment of the event: a copy of what its
 * [Lease] says, without the lease itself (a listener cannot release or renew it). Java reads the
 * properties record-style: `semaphoreName()`, `leaseId()`, `permits()`, `fencingToken()`, `remaining()`.
 */
public class LeaseInfo internal constructor(
    /** The semaphore (or lock) of the lease. */
    @get:JvmName("semaphoreName") public val semaphoreName: String,
    /** The lease's id ([Lease.id]): the id of its request, which starts with its client's id. */
    @get:JvmName("leaseId") public val leaseId: String,
    @get:JvmName("permits") public val permits: Int,
    @get:JvmName("fencingToken") public val fencingToken: Long,
    /**
     * The time the lease had left at the event, by this client's count ([Lease.remaining]): after a
     * renewal, its new time; at a failed renewal, what is left to try again; at a loss, zero or less
     * unless the server ended it early. Java: [remaining()][remainingTime].
     */
    public val remaining: Duration,
) {
    /** [remaining] as a `java.time.Duration` (Java: `lease.remaining()`). */
    @JvmName("remaining")
    public fun remainingTime(): java.time.Duration = remaining.toJavaDuration()

    override fun toString(): String =
        "lease $leaseId of $semaphoreName: $permits permit${if (permits == 1) "" else "s"}, fencing token $fencingToken, $remaining left"

    internal companion object {
        fun of(lease: Lease): LeaseInfo = LeaseInfo(lease.semaphoreName, lease.id, lease.permits, lease.fencingToken, lease.remaining)
    }
}
