// Calls that read as something they would not do. Each line that ends with an ERROR comment must fail to
// compile with an error whose message contains the comment's text; nothing else in this file may fail.
package shapes

import dev.semaphore.Diagnostics
import dev.semaphore.Lock
import dev.semaphore.PrioritySemaphore
import dev.semaphore.ReadWriteLock
import dev.semaphore.ReadWritePolicy
import dev.semaphore.Semaphore
import dev.semaphore.bridge.JavaBridge
import dev.semaphore.withLock
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

// A timeout where an owner is expected: it used to take the lock with the number or the Duration as its owner.
fun tryLockMillis(lock: Lock) {
    lock.tryLock(5000) // ERROR: a number is not an owner
}
suspend fun lockSeconds(lock: Lock) {
    lock.lock(5.seconds) // ERROR: lock() has no timeout
}
suspend fun lockLongOwner(lock: Lock, requestId: Long) {
    lock.lock(requestId) // ERROR: a number is not an owner
}
suspend fun withLockSeconds(lock: Lock) {
    lock.withLock(5.seconds) { } // ERROR: withLock has no timeout
}
suspend fun withLockIntOwner(lock: Lock, id: Int) {
    lock.withLock(id) { } // ERROR: a number is not an owner
}
fun tryLockJavaDuration(lock: Lock) {
    lock.tryLock(java.time.Duration.ofSeconds(5)) // ERROR: a java.time.Duration is not an owner
}
suspend fun lockJavaDuration(lock: Lock) {
    lock.lock(java.time.Duration.ofMillis(50)) // ERROR: a java.time.Duration is not an owner
}
suspend fun withLockJavaDuration(lock: Lock) {
    lock.withLock(java.time.Duration.ofSeconds(5)) { } // ERROR: a java.time.Duration is not an owner
}

// The order of java.util.concurrent (permits, then time) and the old (owner, timeout): the timeout comes first.
suspend fun permitsThenTimeout(semaphore: Semaphore) {
    semaphore.tryAcquire(2, 5.seconds) // ERROR: Argument type mismatch
}
suspend fun ownerThenTimeout(lock: Lock, me: Any) {
    lock.tryLock(me, 5.seconds) // ERROR: Argument type mismatch
}
suspend fun oldPriorityOrder(pool: PrioritySemaphore) {
    pool.tryAcquire(0, 3, 5.milliseconds) // ERROR: Argument type mismatch
}

// The Java module's bridge is not Kotlin API: using it needs an opt-in that says so.
fun bridge(semaphore: Semaphore) {
    JavaBridge.tryAcquire(semaphore, 1, 0) // ERROR: For the library's own Java front-end
}

// The policy comes first: a Diagnostics in its place is not taken for it.
fun policyAfterDiagnostics() {
    ReadWriteLock(Diagnostics(name = "cache"), ReadWritePolicy.PHASE_FAIR) // ERROR: but 'ReadWritePolicy' was expected
}
