/*
 * The JVM-only corner of the engine. Everything that is not common Kotlin lives here and nowhere
 * else: the atomic state word, an atomic reference (the lock's holder), the mutual-exclusion lock
 * that guards the waiter lists, and the per-thread slot used by the wake trampoline. Porting the
 * engine to another Kotlin target means re-implementing these four small classes; WaiterQueue.kt and WaitOrder.kt stay as they are.
 *
 * Invariants: none of their own. AtomicState is a plain linearizable 64-bit cell; EngineLock is a
 * non-reentrant-in-practice mutex (the engine never re-enters it) that does not pin a virtual
 * thread's carrier; ThreadSlot is an ordinary thread-local.
 */
package dev.semaphore.internal

import java.util.concurrent.atomic.AtomicLongFieldUpdater
import java.util.concurrent.atomic.AtomicReference
import java.util.concurrent.locks.ReentrantLock

/** A 64-bit atomic cell (a volatile field and a field updater: no AtomicLong indirection). */
internal class AtomicState(initial: Long) {
    @Volatile
    private var word: Long = initial

    /** The current word (a volatile read). */
    fun load(): Long = word

    /** Sets the word if it is [expected]; true on success. */
    fun cas(expected: Long, update: Long): Boolean = UPDATER.compareAndSet(this, expected, update)

    /** Unconditionally sets the word (a volatile write). */
    fun store(update: Long) {
        word = update
    }

    private companion object {
        private val UPDATER: AtomicLongFieldUpdater<AtomicState> =
            AtomicLongFieldUpdater.newUpdater(AtomicState::class.java, "word")
    }
}

/** The lock that guards the waiter lists; a [ReentrantLock], which parks virtual threads cleanly. */
internal class EngineLock {
    private val lock = ReentrantLock()

    fun lock() = lock.lock()

    fun unlock() = lock.unlock()
}

/** A per-thread slot. */
internal class ThreadSlot<T : Any> {
    private val local = ThreadLocal<T>()

    fun get(): T? = local.get()

    fun set(value: T) = local.set(value)
}

/** An atomic reference. */
internal class AtomicRef<T>(initial: T) {
    private val ref = AtomicReference(initial)

    fun load(): T = ref.get()

    fun store(value: T) = ref.set(value)

    fun cas(expected: T, update: T): Boolean = ref.compareAndSet(expected, update)
}
