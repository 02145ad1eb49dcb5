/*
 * The JFR events of the distributed semaphores (both engines), named dev.semaphore.distributed.* under the categories
 * "Semaphore", "Distributed" (beside the core's dev.semaphore.* under "Semaphore"). jdk.jfr is optional, as in the core:
 * the event classes below are touched only through DistributedJfr, and only when the jdk.jfr module is
 * present, so the module loads and works on a runtime without it (LeaseEventsSpec checks this in a JVM
 * started without jdk.jfr). This module has no module-info (it is an automatic module, which reads
 * every module present), so nothing declares the dependency; the guard is what keeps it optional.
 */
package dev.semaphore.distributed

import jdk.jfr.Category
import jdk.jfr.Description
import jdk.jfr.Event
import jdk.jfr.FlightRecorder
import jdk.jfr.Label
import jdk.jfr.Name
import jdk.jfr.StackTrace
import jdk.jfr.Threshold
import jdk.jfr.Timespan

/** The module's one door to JFR: every method is a no-op when jdk.jfr is absent. */
internal object DistributedJfr {
    /** True if the jdk.jfr module is present (checked once, without loading an event class). */
    val available: Boolean = try {
        Class.forName("jdk.jfr.FlightRecorder", false, DistributedJfr::class.java.classLoader)
        FlightRecorder.isAvailable()
        true
    } catch (_: Throwable) {
        false
    }

    /** The events of one renewal begun now (its duration is the renewal's), or null if JFR is absent or neither is enabled. */
    fun beginRenewal(): Any? = if (available) DistributedJfrEvents.beginRenewal() else null

    /** Commits the renewal [attempt] (from [beginRenewal]) as renewed. */
    fun renewed(attempt: Any?, lease: Lease, client: String) {
        if (attempt != null) DistributedJfrEvents.renewed(attempt, lease, client)
    }

    /** Commits the renewal [attempt] as failed with [cause]. */
    fun renewalFailed(attempt: Any?, lease: Lease, client: String, cause: Throwable) {
        if (attempt != null) DistributedJfrEvents.renewalFailed(attempt, lease, client, cause)
    }

    /** Records the loss of [lease]. */
    fun lost(lease: Lease, client: String, cause: LeaseLostException) {
        if (available) DistributedJfrEvents.lost(lease, client, cause)
    }
}

/** Touched only when [DistributedJfr.available]. */
private object DistributedJfrEvents {
    /** Both outcomes of one renewal, begun together (a JFR event's start cannot be set afterwards); one is committed. */
    class Renewal(val renewed: LeaseRenewedEvent?, val failed: RenewalFailedEvent?)

    fun beginRenewal(): Any? {
        val renewed = LeaseRenewedEvent().takeIf { it.isEnabled }?.also { it.begin() }
        val failed = RenewalFailedEvent().takeIf { it.isEnabled }?.also { it.begin() }
        return if (renewed == null && failed == null) null else Renewal(renewed, failed)
    }

    fun renewed(attempt: Any, lease: Lease, client: String) {
        val ev = (attempt as Renewal).renewed ?: return
        ev.end()
        if (!ev.shouldCommit()) return
        ev.fill(lease, client)
        ev.commit()
    }

    fun renewalFailed(attempt: Any, lease: Lease, client: String, cause: Throwable) {
        val ev = (attempt as Renewal).failed ?: return
        ev.end()
        if (!ev.shouldCommit()) return
        ev.fill(lease, client)
        ev.cause = describe(cause)
        ev.commit()
    }

    fun lost(lease: Lease, client: String, cause: LeaseLostException) {
        val ev = LeaseLostEvent()
        if (!ev.isEnabled) return
        ev.fill(lease, client)
        ev.cause = describe(cause)
        ev.commit()
    }

    private fun LeaseEvent.fill(lease: Lease, client: String) {
        semaphore = lease.semaphoreName
        this.client = client
        leaseId = lease.id
        permits = lease.permits
        fencingToken = lease.fencingToken
        remaining = lease.remaining.inWholeMilliseconds
    }

    /** "Type: message", and the same for its causes, one per line. */
    private fun describe(t: Throwable): String = generateSequence(t) { it.cause.takeIf { c -> c !== it } }.take(5)
        .joinToString("\ncaused by ") { "${it.javaClass.name}: ${it.message}" }
}

/** The fields every event of a lease has. */
@StackTrace(false)
internal abstract class LeaseEvent : Event() {
    @Label("Semaphore") @Description("The name of the semaphore or lock") @JvmField var semaphore: String? = null
    @Label("Client") @Description("The name of the DistributedSemaphoreClient that holds the lease (DistributedSemaphoreClient.clientName)") @JvmField var client: String? = null
    @Label("Lease Id") @Description("The lease's id (Lease.id): the id of its request, which starts with its client's id") @JvmField var leaseId: String? = null
    @Label("Permits") @JvmField var permits: Int = 0
    @Label("Fencing Token") @JvmField var fencingToken: Long = 0
    @Label("Remaining") @Description("The time the lease had left at the event, by its client's count") @Timespan(Timespan.MILLISECONDS) @JvmField var remaining: Long = 0
}

@Name("dev.semaphore.distributed.LeaseRenewed")
@Label("Distributed Lease Renewed")
@Category("Semaphore", "Distributed")
@Description("A renewal of a lease by its client, from the request to the server's answer; the threshold keeps the slow ones")
@Threshold("20 ms")
internal class LeaseRenewedEvent : LeaseEvent()

@Name("dev.semaphore.distributed.RenewalFailed")
@Label("Distributed Lease Renewal Failed")
@Category("Semaphore", "Distributed")
@Description("A renewal of a lease that failed (the server out of reach or too slow, replicas not acknowledging) while the lease still had time left; its client tries again")
@Threshold("0 ms")
internal class RenewalFailedEvent : LeaseEvent() {
    @Label("Cause") @Description("The failure, and its causes") @JvmField var cause: String? = null
}

@Name("dev.semaphore.distributed.LeaseLost")
@Label("Distributed Lease Lost")
@Category("Semaphore", "Distributed")
@Description("A lease lost while held: its permits may already be held by others, and its holder was told (LeaseLostException)")
internal class LeaseLostEvent : LeaseEvent() {
    @Label("Cause") @Description("The LeaseLostException its holder was told, and its causes") @JvmField var cause: String? = null
}
