package dev.semaphore.internal

import dev.semaphore.SemaphoreSnapshot

/** The public snapshot of [this] engine's counts, with what only the front-end knows. */
internal fun EngineCounts.toSnapshot(
    kind: String,
    name: String?,
    readHolds: Int = 0,
    writeLocked: Boolean = false,
    upgradableHeld: Boolean = false,
): SemaphoreSnapshot = SemaphoreSnapshot(
    kind = kind,
    name = name,
    totalPermits = total,
    availablePermits = available,
    queuedRequests = queuedRequests,
    queuedPermits = queuedPermits,
    queuedByPriority = byPriority,
    oldestWait = oldestWaitStart?.let { java.time.Duration.ofNanos(it) },
    isClosed = closed,
    acquired = acquired,
    acquiredAfterWait = acquiredAfterWait,
    tryRefused = refused,
    timedOut = timedOut,
    cancelled = cancelled,
    failedByClose = failedByClose,
    readHolds = readHolds,
    writeLocked = writeLocked,
    upgradableHeld = upgradableHeld,
)
