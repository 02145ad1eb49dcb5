/*
 * What src/main uses from src/jvmMain, package dev.semaphore.internal, as `expect` declarations with
 * only the members src/main touches (see ../Expect.kt: compiled only by the common check). The JVM
 * pieces are Platform.kt (atomics, parking, a thread-local, spinning), Observer.kt, Inspection.kt and
 * Snapshots.kt (observation and diagnostics).
 */
package dev.semaphore.internal

import dev.semaphore.Diagnostics
import dev.semaphore.HoldInfo
import dev.semaphore.Inspectable
import dev.semaphore.ListenerRegistration
import dev.semaphore.SemaphoreListener
import dev.semaphore.SemaphoreSnapshot
import dev.semaphore.WaitInfo
import kotlin.coroutines.Continuation
import kotlin.coroutines.CoroutineContext

// ---- Platform.kt ----

internal expect abstract class AtomicStateCell(initial: Long) {
    internal fun load(): Long
    internal fun cas(expected: Long, update: Long): Boolean
    internal fun cax(expected: Long, update: Long): Long
    internal var hint: Long
    internal var freeAcquired: Long
    internal fun getAndAdd(delta: Long): Long
    internal fun unlock(locked: Long, update: Long)
    internal fun parkWhileLocked(mask: Long, locked: Long)
    internal fun loadQueued(): Int
    internal fun storeQueuedRelease(n: Int)
}

internal expect abstract class CoroutineWaiterCell(permits: Int, grantee: Grantee, caller: Continuation<Any?>) : PermitWaiter {
    var caller: Continuation<Any?>
    var decision: Any?
    fun casDecision(expected: Any?, update: Any?): Boolean
}

internal expect abstract class StatusCell() {
    val status: Int
    internal fun setStatus(value: Int)
}

internal expect class ThreadSlot<T : Any>() {
    fun get(): T?
    fun set(value: T)
}

internal expect class AtomicRef<T>(initial: T) {
    fun load(): T
    fun store(value: T)
    fun cas(expected: T, update: T): Boolean
}

internal expect fun spinWait(step: Int)

internal expect fun pauseBriefly()

internal expect fun hasThreadContextElement(context: CoroutineContext): Boolean

// ---- Observer.kt ----

internal expect class Requester(what: Int, thread: Any?, coroutineName: String?, job: Any?, owner: Any?) {
    companion object {
        val COROUTINE: Int
        val DRAIN: Int
        val FUTURE_ASKER: Any
        val CREATED_LOCKED: Any
        fun ofThread(owner: Any?, what: Int = 0): Requester
        fun of(asker: Any?, owner: Any?): Requester
    }
}

internal expect class Observer {
    val needed: Boolean
    fun acquiredNow(permits: Int, requester: Requester)
    fun queued(w: PermitWaiter, priority: Int)
    fun grantedAfterWait(w: PermitWaiter)
    fun leftLine(w: PermitWaiter, timedOut: Boolean)
    fun failed(w: PermitWaiter)
    fun closed(cause: Throwable?, failed: Int)
    fun resized(oldTotal: Int, newTotal: Int)
    fun released(permits: Int, key: Any?)
    fun refused(permits: Int)
    fun oldestWaitNanos(): Long?
    fun takePending(): Any?
    fun deliver(events: Any)
}

internal expect fun WaiterQueue.announceDeadline(timeoutNanos: Long): Any?

internal expect fun clearDeadline(announcer: Any)

internal expect fun currentThread(): Any

// ---- Inspection.kt, Snapshots.kt ----

internal expect fun WaiterQueue.attach(primitive: Inspectable, kind: String, config: Diagnostics)

internal expect fun WaiterQueue.attachWritersLine(lock: Inspectable, config: Diagnostics, writePermits: Int)

internal expect fun WaiterQueue.waitersWithWritersLine(writersLine: WaiterQueue): List<WaitInfo>

internal expect fun WaiterQueue.addListenerFor(
    primitive: Inspectable,
    kind: String,
    config: Diagnostics,
    listener: SemaphoreListener,
): ListenerRegistration

internal expect fun WaiterQueue.holdersNow(): List<HoldInfo>

internal expect fun WaiterQueue.waitersNow(): List<WaitInfo>

internal expect fun dumpOf(p: Inspectable): String

internal expect fun EngineCounts.toSnapshot(
    kind: String,
    name: String?,
    readHolds: Int = 0,
    writeLocked: Boolean = false,
    upgradableHeld: Boolean = false,
): SemaphoreSnapshot

// ---- Platform.kt: the JVM's java.time.Duration, for Lock.kt's compile-time traps (another platform has none) ----

public expect class JavaTimeDuration
