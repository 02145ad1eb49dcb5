/*
 * Who holds a DistributedSemaphore or DistributedLock and who waits for it, as one read-only script on the
 * server saw it (inspect.lua): DistributedSemaphore.inspect and DistributedLock.inspect return these.
 */
package dev.semaphore.distributed

import kotlin.time.Duration
import kotlin.time.toJavaDuration

/**
 * The holders and the line of the semaphore [name] at one instant of the server's clock, from any JVM
 * ([DistributedSemaphore.inspect]): one read-only script, which changes nothing and never waits. A lease
 * past its expiry and a queued request past its heartbeat deadline are left out (the next operation on
 * the semaphore ends them). At most the asked limit of entries is listed per list; [holderCount] and
 * [queueLength] are the true counts. [toString] is a readable dump of it all.
 *
 * Java reads the properties record-style: `holders()`, `line()`, `holderCount()`, ...
 */
public class SemaphoreInspection internal constructor(
    @get:JvmName("name") public val name: String,
    /** False if the server has no semaphore of this name (never used, expired when idle, or deleted): then all is empty. */
    @get:JvmName("exists") public val exists: Boolean,
    /** The total on the server (R2); 0 if it does not [exist][exists]. */
    @get:JvmName("totalPermits") public val totalPermits: Int,
    /**
     * The permits of the live leases, all of them (not only those listed in [holders]). Leases past
     * their expiry are not counted (if more than 1000 of them wait for the next purge, the others are).
     */
    @get:JvmName("heldPermits") public val heldPermits: Int,
    /** The live leases, soonest expiry first, at most the limit asked for. */
    @get:JvmName("holders") public val holders: List<Holder>,
    /** How many live leases there are (more than [holders] lists if it was cut at the limit). */
    @get:JvmName("holderCount") public val holderCount: Int,
    /** The requests in line, its head first, at most the limit asked for. */
    @get:JvmName("line") public val line: List<QueuedRequest>,
    /** How many requests are in line (more than [line] lists if it was cut at the limit). */
    @get:JvmName("queueLength") public val queueLength: Int,
) {
    /**
     * The permits free now: [totalPermits] minus [heldPermits]; below zero while a reduction is repaid
     * (R2). (What `availablePermits()` answers, but read-only: that call first ends the leases past
     * their expiry, as every operation does, R5, and creates the semaphore if it does not exist.)
     */
    @get:JvmName("availablePermits")
    public val availablePermits: Int get() = totalPermits - heldPermits

    /**
     * A live lease: its [leaseId] ([Lease.id] in the JVM that holds it), the client that took it
     * ([clientId], [clientName]), its [permits], its [fencingToken] and the time [remaining] before it
     * ends unless renewed (by the server's clock; its client renews it well before, unless its leases
     * are fixed).
     */
    public class Holder internal constructor(
        @get:JvmName("leaseId") public val leaseId: String,
        /** The id of the [DistributedSemaphoreClient] that took it ([DistributedSemaphoreClient.clientId]). */
        @get:JvmName("clientId") public val clientId: String,
        /** That client's [DistributedSemaphoreClient.clientName]; null if its id does not say (a client of another library). */
        @get:JvmName("clientName") public val clientName: String?,
        @get:JvmName("permits") public val permits: Int,
        /** Its fencing token; 0 only for a grant at once made by an earlier version of this library (which kept none). */
        @get:JvmName("fencingToken") public val fencingToken: Long,
        /** The time left before it ends unless renewed, by the server's clock. Java: [remaining()][remainingTime]. */
        public val remaining: Duration,
        /** True if the client that lists it is the one that took it (its [Lease] is in this JVM). */
        public val isThisClient: Boolean,
    ) {
        /** [remaining] as a `java.time.Duration` (Java: `holder.remaining()`). */
        @JvmName("remaining")
        public fun remainingTime(): java.time.Duration = remaining.toJavaDuration()

        override fun toString(): String =
            "$leaseId: $permits permit${if (permits == 1) "" else "s"}, fencing token $fencingToken, " +
                "$remaining left, client ${client(clientId, clientName, isThisClient)}"
    }

    /**
     * A request in line: its [requestId], the client that sent it ([clientId], [clientName]), the
     * [permits] it asks for, its [position] (1 is the head) and how long it has [waited] in line (by the
     * server's clock).
     */
    public class QueuedRequest internal constructor(
        @get:JvmName("requestId") public val requestId: String,
        @get:JvmName("clientId") public val clientId: String,
        @get:JvmName("clientName") public val clientName: String?,
        @get:JvmName("permits") public val permits: Int,
        /** Its place in line: 1 is the head, granted next once its permits are free. */
        @get:JvmName("position") public val position: Int,
        /** How long it has been in line, by the server's clock. Java: [waited()][waitedTime]. */
        public val waited: Duration,
        /** True if the client that lists it is the one that sent it. */
        public val isThisClient: Boolean,
    ) {
        /** [waited] as a `java.time.Duration` (Java: `request.waited()`). */
        @JvmName("waited")
        public fun waitedTime(): java.time.Duration = waited.toJavaDuration()

        override fun toString(): String =
            "$position. $requestId: $permits permit${if (permits == 1) "" else "s"}, waiting for " +
                "$waited, client ${client(clientId, clientName, isThisClient)}"
    }

    override fun toString(): String = buildString {
        if (!exists) return "DistributedSemaphore \"$name\": not on the server (never used, expired when idle, or deleted)"
        append("DistributedSemaphore \"$name\": $totalPermits permits, $holderCount holder${if (holderCount == 1) "" else "s"}, ")
        append("$queueLength in line")
        dump(this, holders, holderCount, line, queueLength)
    }
}

/**
 * The holder and the line of the lock [name] ([DistributedLock.inspect]): as [SemaphoreInspection],
 * with the holder's [owner] if this JVM holds the lock for one.
 */
public class LockInspection internal constructor(
    @get:JvmName("name") public val name: String,
    /** False if the server has no lock of this name (never used, expired when idle, or deleted). */
    @get:JvmName("exists") public val exists: Boolean,
    /** Who holds the lock; null if it is free. (If a semaphore handle raised its total, the first holder.) */
    @get:JvmName("holder") public val holder: SemaphoreInspection.Holder?,
    /**
     * The owner [holder] locked it for, if [holder] is this client's and it was locked with an owner
     * (`lock(owner)`): owners are objects of this JVM, so other JVMs see none.
     */
    @get:JvmName("owner") public val owner: Any?,
    /** The requests in line, its head first, at most the limit asked for. */
    @get:JvmName("line") public val line: List<SemaphoreInspection.QueuedRequest>,
    /** How many requests are in line (more than [line] lists if it was cut at the limit). */
    @get:JvmName("queueLength") public val queueLength: Int,
) {
    /** Whether anyone holds the lock. */
    public val isLocked: Boolean get() = holder != null

    override fun toString(): String = buildString {
        if (!exists) return "DistributedLock \"$name\": not on the server (never used, expired when idle, or deleted)"
        append("DistributedLock \"$name\": ${if (holder == null) "free" else "locked"}, $queueLength in line")
        if (owner != null) append(", owner $owner")
        dump(this, listOfNotNull(holder), if (holder == null) 0 else 1, line, queueLength)
    }
}

/** "id "name" (this client)" for the dumps. */
private fun client(id: String, name: String?, mine: Boolean): String =
    id + (if (name != null) " \"$name\"" else "") + (if (mine) " (this client)" else "")

/** The lists of a dump, one entry a line, and how many were left out. */
private fun dump(
    out: StringBuilder,
    holders: List<SemaphoreInspection.Holder>,
    holderCount: Int,
    line: List<SemaphoreInspection.QueuedRequest>,
    queueLength: Int,
) {
    if (holderCount > 0) out.append("\n  holders (soonest expiry first):")
    for (h in holders) out.append("\n    ").append(h)
    if (holderCount > holders.size) out.append("\n    ... and ${holderCount - holders.size} more")
    if (queueLength > 0) out.append("\n  line (head first):")
    for (r in line) out.append("\n    ").append(r)
    if (queueLength > line.size) out.append("\n    ... and ${queueLength - line.size} more")
}
