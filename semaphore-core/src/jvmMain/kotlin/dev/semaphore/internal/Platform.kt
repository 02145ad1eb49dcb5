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

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater
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

    /**
     * Sets the word with release ordering only (no store-load fence): for the lock holder's unfreeze,
     * which every other thread reads by a volatile load or meets through the lock.
     */
    internal fun storeRelease(update: Long) = UPDATER.lazySet(this, update)

    @Volatile
    private var queuedCount: Int = 0

    /** The published queue length (a snapshot, written by the lock holder). */
    internal fun loadQueued(): Int = queuedCount

    /** Publishes the queue length with release ordering, as [storeRelease]. */
    internal fun storeQueuedRelease(n: Int) = QUEUED.lazySet(this, n)

    private companion object {
        private val UPDATER: AtomicLongFieldUpdater<AtomicStateCell> =
            AtomicLongFieldUpdater.newUpdater(AtomicStateCell::class.java, "word")
        private val QUEUED: AtomicIntegerFieldUpdater<AtomicStateCell> =
            AtomicIntegerFieldUpdater.newUpdater(AtomicStateCell::class.java, "queuedCount")
    }
}

/**
 * A waiter's status (WaiterQueue.kt, I6), as a base class of the waiter so that it costs no object of
 * its own. Written only under the queue's lock, with release ordering; read by volatile loads.
 */
internal abstract class StatusCell(initial: Int) {
    @Volatile
    private var statusValue: Int = initial

    /** The status (a volatile read). */
    val status: Int get() = statusValue

    /** Sets the status with release ordering (under the queue's lock). */
    internal fun setStatus(value: Int) = STATUS.lazySet(this, value)

    private companion object {
        private val STATUS: AtomicIntegerFieldUpdater<StatusCell> =
            AtomicIntegerFieldUpdater.newUpdater(StatusCell::class.java, "statusValue")
    }
}

/** The lock that guards the waiter lists; a [ReentrantLock], which parks virtual threads cleanly. */
internal class EngineLock {
    private val lock = ReentrantLock()

    fun lock() = lock.lock()

    fun unlock() = lock.unlock()

    private companion object {
        init {
            // The JDK loads the node class of a parked lock waiter on the first contention, and that
            // class load makes the JIT throw away every compiled method that inlined unlock() (the
            // engine's hot paths) in the middle of a run. Loading it up front avoids that.
            try {
                Class.forName("java.util.concurrent.locks.AbstractQueuedSynchronizer\$ExclusiveNode")
            } catch (_: ClassNotFoundException) {
                // another JDK's lock has no such class: nothing to preload
            }
        }
    }
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
