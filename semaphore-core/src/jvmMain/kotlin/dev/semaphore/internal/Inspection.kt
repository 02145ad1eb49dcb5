/*
 * The diagnostics every front-end shares (Inspectable): naming, observation, listeners, holders, waiters,
 * dumps and the long-hold watch. The front-ends delegate here, so each is one line per member.
 */
package dev.semaphore.internal

import dev.semaphore.Diagnostics
import dev.semaphore.HoldInfo
import dev.semaphore.Inspectable
import dev.semaphore.ListenerRegistration
import dev.semaphore.NamedPrimitives
import dev.semaphore.ProcessDiagnostics
import dev.semaphore.SemaphoreListener
import dev.semaphore.WaitInfo
import java.util.concurrent.TimeUnit

/** At the creation of [primitive] (of [kind]) on this queue: registers its name, and observes it if `config` asks. */
internal fun WaiterQueue.attach(primitive: Inspectable, kind: String, own: Diagnostics) {
    require(own.detectDeadlocksAfter == null || kind == "Lock" || kind == "ReadWriteLock") {
        "deadlock detection is for a Lock or a ReadWriteLock, whose holds have holders; this is a $kind ($own)"
    }
    val config = ProcessDiagnostics.apply(own, kind)
    val deadlocks = config.detectDeadlocksAfter
    if (config.name != null) NamedPrimitives.register(primitive)
    if (config.observesFromCreation) {
        observed({ Observer(primitive, this, kind, config) }) {}
        if (deadlocks != null) Deadlocks.register(this) // the watches arm themselves (Observer.kt, O5)
    }
    ProcessDiagnostics.listener()?.let { addListenerFor(primitive, kind, own, it) }
}

/**
 * At the creation of a ReadWriteLock with a writers' line (this queue; ReadWriteLockImpl.kt, WL1): observes the
 * line as the lock is observed (Observer.kt, O4), if `config` asks for observation from creation, and lets the
 * deadlock watch see the writers waiting in it.
 */
internal fun WaiterQueue.attachWritersLine(lock: Inspectable, own: Diagnostics, writePermits: Int) {
    val config = ProcessDiagnostics.apply(own, "ReadWriteLock")
    if (!config.observesFromCreation) return
    observed({ Observer(lock, this, "ReadWriteLock", config, writersLineOf = writePermits) }) {}
    if (config.detectDeadlocksAfter != null) Deadlocks.register(this)
}

/** [waitersNow] of a ReadWriteLock's line and its [writersLine] (O4), in the order they came. */
internal fun WaiterQueue.waitersWithWritersLine(writersLine: WaiterQueue): List<WaitInfo> {
    val line = writersLine.waitersNow() // first: a writer that moves on in between is listed twice, never missed
    val lock = waitersNow()
    return if (line.isEmpty()) lock else (lock + line).sortedBy { it.since }
}

internal fun WaiterQueue.addListenerFor(
    primitive: Inspectable,
    kind: String,
    config: Diagnostics,
    listener: SemaphoreListener,
): ListenerRegistration = observed({ Observer(primitive, this, kind, config) }) { it.addListener(listener) }

internal fun WaiterQueue.holdersNow(): List<HoldInfo> = withObserver { o, _ -> o?.holdInfos() } ?: emptyList()

internal fun WaiterQueue.waitersNow(): List<WaitInfo> = withObserver { o, order -> o?.waitInfos(order) } ?: emptyList()

/** [Inspectable.dump]: the snapshot's line, then one line per hold and per request in line (if recorded). */
internal fun dumpOf(p: Inspectable): String = ReportInstant.at { dumpAtOneInstant(p) }

private fun dumpAtOneInstant(p: Inspectable): String = buildString {
    append(p.snapshot())
    val holders = p.holders()
    val waiters = p.waiters()
    if (holders.isNotEmpty()) {
        append("\n  holders:")
        for (h in holders) append("\n    ").append(h.toString().replace("\n", "\n    "))
    }
    if (waiters.isNotEmpty()) {
        append("\n  waiting, in the order they came:")
        for (w in waiters) append("\n    ").append(w.toString().replace("\n", "\n    "))
    }
}
