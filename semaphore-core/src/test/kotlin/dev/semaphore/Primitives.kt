package dev.semaphore

import kotlin.time.Duration

/**
 * One face for every primitive, so the shared spec can run the same fairness, cancellation and
 * misuse cases against each. Requests here always use one permit (the Lock has no other).
 */
interface Primitive {
    val name: String
    suspend fun acquire()
    fun tryAcquire(): Boolean
    suspend fun tryAcquire(timeout: Duration): Boolean
    fun release()
    val available: Int
    val queued: Int
    val total: Int
    fun close(cause: Throwable?)
    val isClosed: Boolean
}

/** Factories for a primitive with one permit (the shared spec's cases are about a single slot). */
val primitiveFactories: List<Pair<String, () -> Primitive>> = listOf(
    "Semaphore" to {
        val s = Semaphore(1)
        object : Primitive {
            override val name = "Semaphore"
            override suspend fun acquire() = s.acquire()
            override fun tryAcquire() = s.tryAcquire()
            override suspend fun tryAcquire(timeout: Duration) = s.tryAcquire(timeout = timeout)
            override fun release() = s.release()
            override val available get() = s.availablePermits
            override val queued get() = s.queueLength
            override val total get() = s.totalPermits
            override fun close(cause: Throwable?) = s.close(cause)
            override val isClosed get() = s.isClosed
        }
    },
    "PrioritySemaphore" to {
        val s = PrioritySemaphore(1)
        object : Primitive {
            override val name = "PrioritySemaphore"
            override suspend fun acquire() = s.acquire()
            override fun tryAcquire() = s.tryAcquire()
            override suspend fun tryAcquire(timeout: Duration) = s.tryAcquire(timeout = timeout)
            override fun release() = s.release()
            override val available get() = s.availablePermits
            override val queued get() = s.queueLength
            override val total get() = s.totalPermits
            override fun close(cause: Throwable?) = s.close(cause)
            override val isClosed get() = s.isClosed
        }
    },
    "Lock" to {
        val l = Lock()
        object : Primitive {
            override val name = "Lock"
            override suspend fun acquire() = l.lock()
            override fun tryAcquire() = l.tryLock()
            override suspend fun tryAcquire(timeout: Duration) = l.tryLock(timeout = timeout)
            override fun release() = l.unlock()
            override val available get() = if (l.isLocked) 0 else 1
            override val queued get() = l.queueLength
            override val total get() = 1
            override fun close(cause: Throwable?) = l.close(cause)
            override val isClosed get() = l.isClosed
        }
    },
    "ReadWriteLock (write hold)" to {
        val l = ReadWriteLock()
        object : Primitive {
            override val name = "ReadWriteLock"
            override suspend fun acquire() = l.lockWrite()
            override fun tryAcquire() = l.tryLockWrite()
            override suspend fun tryAcquire(timeout: Duration) = l.tryLockWrite(timeout)
            override fun release() = l.unlockWrite()
            override val available get() = if (l.isWriteLocked || l.readHolds > 0) 0 else 1
            override val queued get() = l.queueLength
            override val total get() = 1
            override fun close(cause: Throwable?) = l.close(cause)
            override val isClosed get() = l.isClosed
        }
    },
)

/**
 * Runs [create] with the process-wide diagnostics (`-Ddev.semaphore.diagnostics`, set by the observed test
 * execution) out of the way: for the few tests of how observation begins and ends, and of the lock-free
 * paths, which need a primitive that starts unobserved in that execution too.
 */
fun <T> withoutProcessDiagnostics(create: () -> T): T {
    val saved = System.getProperty("dev.semaphore.diagnostics") ?: return create()
    System.clearProperty("dev.semaphore.diagnostics")
    try {
        return create()
    } finally {
        System.setProperty("dev.semaphore.diagnostics", saved)
    }
}
