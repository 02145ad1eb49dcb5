/*
 * The JVM-only corner of the engine: the atomic state word (AtomicStateCell) with the parking of
 * threads that wait for it to be unlocked, an atomic reference (the lock's holder), the per-thread slot
 * used by the wake trampoline, the JVM half of a coroutine's waiter (CoroutineWaiterCell), the test for
 * kotlinx.coroutines' JVM-only ThreadContextElement, and a polite busy-wait. Everything JVM-only in
 * semaphore-core lives under src/jvmMain (this file, observation and diagnostics, the future and thread
 * waiters, and bridge/JavaBridge.kt for the Java module).
 *
 * What is checked: src/main/kotlin is common Kotlin. semaphore-verification's CommonKotlinTest (run by
 * `mvn -B verify`) compiles it with the Kotlin metadata compiler for the common platform, against only
 * the common klibs of kotlin-stdlib and of kotlinx-coroutines-core (its commonMain) and the `expect`
 * declarations in src/commonExpect, which list what src/main uses from src/jvmMain (this file,
 * Observer.kt, Inspection.kt, Snapshots.kt and the public diagnostics types) with only the members it
 * touches. A JVM-only use in src/main (java.*, Thread, kotlinx.coroutines' JVM API) fails that test,
 * which names the file, line and symbol. It does not check src/jvmMain (JVM-only by design), nor that
 * src/commonExpect's signatures match the declarations here (only that each name is declared under
 * src/jvmMain), nor does it build or run anything for another target. Porting the engine to another
 * Kotlin target means providing src/commonExpect's declarations there; src/main stays as it is.
 *
 * Invariants: none of their own. AtomicStateCell is a plain linearizable 64-bit cell whose locked
 * value (which value, and what locking means, is WaiterQueue.kt's I3) it only helps to wait for: a thread
 * that spun long enough parks, so a virtual thread unmounts instead of pinning its carrier, and the
 * unlock wakes it. ThreadSlot is an ordinary thread-local.
 */
package dev.semaphore.internal

import java.lang.invoke.MethodHandles
import java.lang.invoke.VarHandle
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater
import java.util.concurrent.atomic.AtomicLongFieldUpdater
import java.util.concurrent.atomic.AtomicReference
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater
import java.util.concurrent.locks.LockSupport
import kotlinx.coroutines.Job
import kotlinx.coroutines.ThreadContextElement
import kotlin.coroutines.Continuation
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.jvm.internal.CoroutineStackFrame

/**
 * The engine's 64-bit atomic state word, as a base class so that the word is a field of the
 * [WaiterQueue] object itself (the fast path then costs one atomic step a side, with no indirection).
 */
internal abstract class AtomicStateCell(initial: Long) {
    @Volatile
    private var word: Long = initial

    /**
     * The lock-free takes counted (WaiterQueue.kt's counters), declared right after [word] so that the JVM lays it
     * out in the 8 bytes after it: every fast take writes it, and beside the word that write lands on the cache
     * line the take's CAS has just taken, except when a line boundary falls between the two (1 object in 8).
     * Anywhere else it is a second line that every take writes: docs/profiles.md, "The Java rows with 8 permits".
     */
    internal var freeAcquired: Long = 0L

    /** The current word (a volatile read). */
    internal fun load(): Long = word

    /** Sets the word if it is [expected]; true on success. */
    internal fun cas(expected: Long, update: Long): Boolean = UPDATER.compareAndSet(this, expected, update)

    /**
     * Sets the word if it is [expected], in one atomic step; returns the word as it was (== [expected] on success),
     * so a caller whose [expected] was a guess learns the word from a failure without another read.
     */
    internal fun cax(expected: Long, update: Long): Long = WORD.compareAndExchange(this, expected, update) as Long

    /**
     * A guess at the word, for a take's [cax] (WaiterQueue.kt, I12): a plain field, read and written without
     * ordering by any thread. Nothing relies on its value; the CAS checks it.
     */
    internal var hint: Long = initial

    /** Adds [delta] to the word in one atomic step, with no read before it; returns the word as it was. */
    internal fun getAndAdd(delta: Long): Long = UPDATER.getAndAdd(this, delta)

    /**
     * The unlock: sets the word from [locked] to [update] (a CAS, so that it is ordered before the look at
     * the parked threads that follows), and wakes one of the threads parked in [parkWhileLocked], if any.
     * While the word is not [locked], another thread's add is on the word and about to be taken back
     * (WaiterQueue.kt, I11): the unlock waits for that, spinning.
     */
    internal fun unlock(locked: Long, update: Long) {
        var step = 0
        while (!UPDATER.compareAndSet(this, locked, update)) spinWait(step++)
        parking?.wakeOne()
    }

    @Volatile
    private var parking: LockParking? = null

    /**
     * Parks the calling thread while `word and mask == locked` (the word is locked), until an
     * [unlock] wakes it (or spuriously); the caller then tries to lock again. For a thread that
     * spun and still found the word locked: the lock holder may have been descheduled.
     */
    internal fun parkWhileLocked(mask: Long, locked: Long) {
        val p = parking ?: LockParking().also { if (!PARKING.compareAndSet(this, null, it)) return }
        p.parkWhile { word and mask == locked }
    }

    @Volatile
    private var queuedCount: Int = 0

    /** The published queue length (a snapshot, written by the lock holder). */
    internal fun loadQueued(): Int = queuedCount

    /** Publishes the queue length with release ordering only (no store-load fence), under the lock. */
    internal fun storeQueuedRelease(n: Int) = QUEUED.lazySet(this, n)

    private companion object {
        private val UPDATER: AtomicLongFieldUpdater<AtomicStateCell> =
            AtomicLongFieldUpdater.newUpdater(AtomicStateCell::class.java, "word")
        private val WORD: VarHandle =
            MethodHandles.lookup().findVarHandle(AtomicStateCell::class.java, "word", Long::class.javaPrimitiveType)
        private val QUEUED: AtomicIntegerFieldUpdater<AtomicStateCell> =
            AtomicIntegerFieldUpdater.newUpdater(AtomicStateCell::class.java, "queuedCount")
        private val PARKING: AtomicReferenceFieldUpdater<AtomicStateCell, LockParking?> =
            AtomicReferenceFieldUpdater.newUpdater(AtomicStateCell::class.java, LockParking::class.java, "parking")
    }
}

/**
 * The JVM half of a suspended coroutine's waiter (Suspending.kt): its decision (C1 there), a reference
 * changed by CAS, and its place in the chain of the coroutine's frames (kotlinx walks that chain through
 * CoroutineStackFrame, for example to restore thread-context elements after withContext).
 */
internal abstract class CoroutineWaiterCell(
    permits: Int,
    grantee: Grantee,
    /**
     * The suspended coroutine's own continuation (uninterceptred). Set again by each wait of a reused waiter
     * (Suspending.kt, C4), before its offer.
     */
    @JvmField var caller: Continuation<Any?>,
) : PermitWaiter(permits, grantee), CoroutineStackFrame {
    @Volatile
    @JvmField
    var decision: Any? = null

    /** Sets the decision if it is [expected]; true on success. */
    fun casDecision(expected: Any?, update: Any?): Boolean = DECISION.compareAndSet(this, expected, update)

    override val callerFrame: CoroutineStackFrame? get() = caller as? CoroutineStackFrame

    override fun getStackTraceElement(): StackTraceElement? = null

    private companion object {
        private val DECISION: AtomicReferenceFieldUpdater<CoroutineWaiterCell, Any?> =
            AtomicReferenceFieldUpdater.newUpdater(CoroutineWaiterCell::class.java, Any::class.java, "decision")
    }
}

/**
 * A waiter's status (WaiterQueue.kt, I6), as a base class of the waiter so that it costs no object of
 * its own. Written only under the queue's lock, with release ordering; read by volatile loads. It
 * starts at 0 (NEW) without a store: a volatile store in the constructor would cost every waiter a
 * full fence.
 */
internal abstract class StatusCell {
    @Volatile
    private var statusValue: Int = 0

    /** The status (a volatile read). */
    val status: Int get() = statusValue

    /** Sets the status with release ordering (under the queue's lock). */
    internal fun setStatus(value: Int) = STATUS.lazySet(this, value)

    private companion object {
        private val STATUS: AtomicIntegerFieldUpdater<StatusCell> =
            AtomicIntegerFieldUpdater.newUpdater(StatusCell::class.java, "statusValue")
    }
}

/**
 * Where the threads that wait for a locked word park (made on the first need): a line of parked
 * threads, from which each unlock wakes one, oldest first. The rules:
 * P1  The line and the word form a Dekker pair: a parker joins the line and then reads the word; the
 *     unlocker writes the word and then reads the line. Both are volatile, so at least one sees the
 *     other's write: either the parker sees the word unlocked and does not park, or the unlocker finds
 *     a node to wake.
 * P2  A node is WAITING until exactly one CAS moves it: to WOKEN by the unlocker that pops it (which
 *     then unparks its thread), or to LEFT by its own thread when that one stops waiting unwoken. An
 *     unlock takes nodes until it wakes one that was WAITING (or the line is empty), so LEFT nodes never
 *     take a wake from a parked thread, and they leave the line by the next unlocks.
 * P3  One wake per unlock is enough: the woken thread tries the lock again, so while threads are parked
 *     some thread is on its way to the lock, and its unlock wakes the next one. (Waking every parked
 *     thread at each unlock made them all race for the lock and all but one park again.)
 * P4  An interrupt does not end the wait: the interrupt status is cleared while parking (a park returns at
 *     once while it is set) and set again before returning, so an interrupted thread sleeps like the others.
 * An unpark that comes before the park only makes the park return at once (LockSupport's permit), which
 * every park here tolerates: it looks at its node and the word again.
 */
private class LockParking {
    private class Parked(val thread: Thread) {
        @Volatile
        var state: Int = WAITING

        fun move(from: Int, to: Int): Boolean = STATE.compareAndSet(this, from, to)

        private companion object {
            val STATE: AtomicIntegerFieldUpdater<Parked> = AtomicIntegerFieldUpdater.newUpdater(Parked::class.java, "state")
        }
    }

    private val line = ConcurrentLinkedQueue<Parked>()

    fun parkWhile(locked: () -> Boolean) {
        val node = Parked(Thread.currentThread())
        line.offer(node)
        var interrupted = false
        while (node.state == WAITING && locked()) { // P1: the word is read after joining
            LockSupport.park(this)
            if (Thread.interrupted()) interrupted = true // P4
        }
        node.move(WAITING, LEFT) // P2: fails only if an unlocker woke it meanwhile
        if (interrupted) Thread.currentThread().interrupt()
    }

    /** P1-P3: wakes one parked thread, if any. */
    fun wakeOne() {
        while (true) {
            val n = line.poll() ?: return
            if (n.move(WAITING, WOKEN)) {
                LockSupport.unpark(n.thread)
                return
            }
        }
    }

    private companion object {
        const val WAITING = 0
        const val WOKEN = 1
        const val LEFT = 2
    }
}

/**
 * C2 (Suspending.kt): true if [context] holds a ThreadContextElement, a kind of element that only
 * kotlinx.coroutines' JVM part has (on other platforms there is none to install).
 */
internal fun hasThreadContextElement(context: CoroutineContext): Boolean = context.fold(false, HAS_THREAD_CONTEXT)

/**
 * True if a context element is a ThreadContextElement. Job and the interceptor are tested by key
 * first: an `is` test of an interface the class does not implement scans the class's interfaces (on
 * JDK 17, slow on the classes of Job and dispatcher), and those two are in nearly every context.
 */
private val HAS_THREAD_CONTEXT: (Boolean, CoroutineContext.Element) -> Boolean = { found, e ->
    found || (e.key !== Job && e.key !== ContinuationInterceptor && e is ThreadContextElement<*>)
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

/** A pause of a few dozen cycles that touches no shared memory: one step of spinning on a lock. */
internal fun pauseBriefly() {
    for (i in 0 until 16) Thread.onSpinWait()
}

/**
 * `java.time.Duration`, named for src/main's compile-time traps (Lock.kt: a Java Duration is not an owner): public
 * because those deprecated members are, in a package that is not exported (nothing else should name it).
 */
public typealias JavaTimeDuration = java.time.Duration
