// The shapes the documentation shows, as a user writes them from memory: every line must compile.
package shapes

import dev.semaphore.Diagnostics
import dev.semaphore.Lock
import dev.semaphore.PrioritySemaphore
import dev.semaphore.ReadWriteLock
import dev.semaphore.ReadWritePolicy
import dev.semaphore.Semaphore
import dev.semaphore.withLock
import dev.semaphore.withPermit
import dev.semaphore.withReadLock
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

suspend fun semaphoreShapes(semaphore: Semaphore) {
    semaphore.acquire()
    semaphore.acquire(2)
    semaphore.tryAcquire()
    semaphore.tryAcquire(2)
    semaphore.tryAcquire(5.seconds)
    semaphore.tryAcquire(5.seconds, permits = 2)
    semaphore.tryAcquire(5.seconds, 2)
    semaphore.tryAcquire(timeout = 5.seconds, permits = 2)
    semaphore.withPermit { }
    semaphore.withPermit(permits = 2) { }
    semaphore.release(2)
    val total: Int = semaphore.totalPermits
    semaphore.close(IllegalStateException("shutdown $total"))
}

suspend fun priorityShapes(pool: PrioritySemaphore) {
    pool.acquire()
    pool.acquire(2)
    pool.acquire(priority = 10)
    pool.acquire(2, priority = 10)
    pool.tryAcquire(priority = 10)
    pool.tryAcquire(5.seconds, priority = 10)
    pool.tryAcquire(5.seconds, permits = 2, priority = 10)
    pool.withPermit(priority = 10) { }
    pool.withPermit(2, priority = 10) { }
    pool.totalPermits
}

suspend fun lockShapes(lock: Lock, me: Any) {
    lock.lock()
    lock.lock(me)
    lock.lock(owner = me)
    lock.tryLock()
    lock.tryLock(me)
    lock.tryLock(5.seconds)
    lock.tryLock(5.seconds, me)
    lock.tryLock(5.seconds, owner = me)
    lock.tryLock(timeout = 500.milliseconds, owner = me)
    lock.withLock { }
    lock.withLock(me) { }
    lock.withLock(owner = me) { }
    lock.withLock(owner = "a String is an object with an identity") { }
    lock.unlock(me)
    lock.holdsLock(me)
    lock.close()
    lock.isClosed
}

suspend fun readWriteShapes(lock: ReadWriteLock) {
    lock.withReadLock { }
    lock.tryLockRead(5.seconds)
    lock.tryLockWrite(5.seconds)
    lock.close(null)
    lock.isClosed
}

// The read-write lock's factory, with and without a policy: the Diagnostics-only calls keep compiling.
fun readWritePolicies(): List<ReadWriteLock> = listOf(
    ReadWriteLock(),
    ReadWriteLock(Diagnostics(name = "fifo")),
    ReadWriteLock(diagnostics = Diagnostics(name = "fifo")),
    ReadWriteLock(ReadWritePolicy.PHASE_FAIR),
    ReadWriteLock(ReadWritePolicy.WRITERS_LINE),
    ReadWriteLock(ReadWritePolicy.PHASE_FAIR, Diagnostics(name = "cache")),
    ReadWriteLock(policy = ReadWritePolicy.PHASE_FAIR, diagnostics = Diagnostics(name = "cache")),
    ReadWriteLock(diagnostics = Diagnostics(name = "cache"), policy = ReadWritePolicy.PHASE_FAIR),
)
