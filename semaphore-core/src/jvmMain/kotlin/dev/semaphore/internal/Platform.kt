/*
 * The JVM-only corner of the engine: the atomic state word (AtomicStateCell), an atomic reference
 * (the lock's holder), the mutual-exclusion lock that guards the waiter lists, the per-thread slot
 * used by the wake trampoline, and a polite busy-wait. Everything JVM-only in semaphore-core lives
 * under src/jvmMain (this file, the future and thread waiters, and the public JavaBridge.kt);
 * src/main is common Kotlin. Porting the engine to another Kotlin target means re-implementing
 * these small pieces; WaiterQueue.kt and WaitOrder.kt stay as they are.
 *
 * Invariants: none of their own. AtomicStateCell is a plain linearizable 64-bit cell; EngineLock is a
 * non-reentrant-in-practice mutex (the engine never re-enters it) that does not pin a virtual
 * thread's carrier; ThreadSlot is an ordinary thread-local.
 */
package dev.semaphore.internal

import java.util.concurrent.atomic.AtomicLongFieldUpdater
import java.util.concurrent.atomic.AtomicReference
import java.util.concurrent.locks.ReentrantLock

/**
 * The engine's 64-bit atomic state word, as a base class so that the word is a field of the
 * [WaiterQueue] object itself (the fast path then costs one load and one CAS, with no indirection).
 */
internal abstract class AtomicStateCell(initial: Long) {
    @Volatile
    private var word: Long = initial

    /** The current word (a volatile read). */
    internal fun load(): Long = word

    /** Sets the word if it is [expected]; true on success. */
    internal fun cas(expected: Long, update: Long): Boolean = UPDATER.compareAndSet(this, expected, update)

    /** Unconditionally sets the word (a volatile write). */
    internal fun store(update: Long) {
        word = update
    }

    private companion object {
        private val UPDATER: AtomicLongFieldUpdater<AtomicStateCell> =
            AtomicLongFieldUpdater.newUpdater(AtomicStateCell::class.java, "word")
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

/**
 * One step of a short busy-wait for another thread to finish a few instructions: spins at first,
 * then yields the processor (the other thread may have been descheduled, and this machine may have
 * only two cores).
 */
internal fun spinWait(step: Int) {
    if (step < 64) Thread.onSpinWait() else Thread.yield()
}
