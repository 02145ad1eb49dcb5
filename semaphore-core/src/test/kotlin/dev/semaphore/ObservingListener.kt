package dev.semaphore

import java.time.Duration
import java.util.concurrent.atomic.AtomicLong

/**
 * The listener that the `observed` test execution (semaphore-core/pom.xml) adds to every primitive through
 * `-Ddev.semaphore.diagnostics=...,listener=dev.semaphore.ObservingListener`: it reads every event (who, in
 * words and as fields, and its times; a stack is made only for a listener that reads it, and the long holds and
 * deadlocks are read whole), so that the whole suite runs with the delivery of events on every path. What the
 * suite's own assertions see must not change.
 */
class ObservingListener : SemaphoreListener {
    override fun onAcquired(primitive: Inspectable, hold: HoldInfo, waited: Duration) = read(hold.holder, hold.since, waited)

    override fun onReleased(primitive: Inspectable, hold: HoldInfo) = read(hold.holder, hold.caller.kind, hold.held)

    override fun onRefused(primitive: Inspectable, permits: Int) = read(primitive.name, permits, null)

    override fun onTimedOut(primitive: Inspectable, request: WaitInfo) = read(request.requester, request.since, request.deadline)

    override fun onCancelled(primitive: Inspectable, request: WaitInfo) = read(request.requester, request.waited, request.deadline)

    override fun onClosed(primitive: Inspectable, cause: Throwable?, failedRequests: Int) = read(cause, failedRequests, null)

    override fun onResized(primitive: Inspectable, oldTotal: Int, newTotal: Int) = read(oldTotal, newTotal, null)

    override fun onLongHold(primitive: Inspectable, hold: HoldInfo) = read(hold.toString(), hold.held, null)

    override fun onDeadlock(primitive: Inspectable, deadlock: Deadlock) = read(deadlock.toString(), null, null)

    private fun read(a: Any?, b: Any?, c: Any?) {
        events.addAndGet((a.hashCode() xor b.hashCode() xor c.hashCode()).toLong() and 1L or 1L)
    }

    companion object {
        /** Events read in this JVM. */
        val events = AtomicLong()
    }
}
