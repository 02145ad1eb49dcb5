package dev.semaphore.verification

import dev.semaphore.Deadlock
import dev.semaphore.HoldInfo
import dev.semaphore.Inspectable
import dev.semaphore.SemaphoreListener
import dev.semaphore.WaitInfo
import java.time.Duration
import java.util.concurrent.atomic.AtomicLong

/**
 * The listener of this module's `observed` execution (pom.xml), added to every primitive through
 * `-Ddev.semaphore.diagnostics=...,listener=dev.semaphore.verification.ObservingListener`: it reads every event
 * (who and its times), so that the storms and Lincheck tests run with events delivered on every path.
 */
class ObservingListener : SemaphoreListener {
    override fun onAcquired(primitive: Inspectable, hold: HoldInfo, waited: Duration) = read(hold.holder, hold.caller.kind, waited)

    override fun onReleased(primitive: Inspectable, hold: HoldInfo) = read(hold.holder, hold.since, hold.held)

    override fun onTimedOut(primitive: Inspectable, request: WaitInfo) = read(request.requester, request.caller.kind, request.deadline)

    override fun onCancelled(primitive: Inspectable, request: WaitInfo) = read(request.requester, request.since, request.deadline)

    override fun onLongHold(primitive: Inspectable, hold: HoldInfo) = read(hold.toString(), hold.held, null)

    override fun onDeadlock(primitive: Inspectable, deadlock: Deadlock) = read(deadlock.toString(), null, null)

    private fun read(a: Any?, b: Any?, c: Any?) {
        EVENTS.addAndGet((a.hashCode() xor b.hashCode() xor c.hashCode()).toLong() and 1L or 1L)
    }

    companion object {
        val EVENTS = AtomicLong()
    }
}
