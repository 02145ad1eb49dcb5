/*
 * What the scoped forms' inline bodies (withPermit, withReadLock) call at their release, so that it names the
 * coroutine whose hold it ends (internal/Observer.kt, H2). Published ABI of those inline functions, not API: the
 * names say they are the library's own.
 */
package dev.semaphore

import dev.semaphore.internal.WaiterQueue
import kotlin.jvm.JvmSynthetic

/**
 * A scoped form's release of [permits] of [pool] (withPermit's one call, so that its inline body stays small): while
 * observed, naming the coroutine of [context] (Observer.kt, H2); otherwise the plain release, after one read of the
 * observer field. [context] is the caller's continuation's, read as a field: nothing is looked up unless observed.
 */
@PublishedApi
@JvmSynthetic
internal fun releaseFromScope(pool: PermitPool, permits: Int, context: kotlin.coroutines.CoroutineContext) {
    // A semaphore is its engine (QueueBackedPool): a class test, and a direct call of the engine's final release.
    if (pool !is WaiterQueue) return pool.release(permits)
    // isObserved, not the observer's getter, which the JIT does not inline while Observer is unloaded (WaiterQueue.isObserved).
    if (!pool.isObserved) pool.release(permits) else pool.releaseNamed(permits, context[kotlinx.coroutines.Job])
}

/** withReadLock's unlockRead: while observed, naming the coroutine of [context] (Observer.kt, H2). */
@PublishedApi
@JvmSynthetic
internal fun unlockReadFromScope(lock: ReadWriteLock, context: kotlin.coroutines.CoroutineContext) {
    if (lock !is ReadWriteLockImpl) return lock.unlockRead()
    lock.unlockRead(if (!lock.waiterQueue.isObserved) null else context[kotlinx.coroutines.Job])
}
